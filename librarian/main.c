// SPDX-License-Identifier: GPL-2.0
/*
 * librarian: the daemon and its administrative subcommands.
 *
 *   librarian -c FILE [--listen ADDR]... [--db PATH] [-v]   serve (foreground)
 *   librarian backup [-c FILE | --db PATH] DEST              online backup
 *   librarian check [-c FILE | --db PATH]                    consistency check
 *   librarian genkey [FILE]                                  make a node key
 *   librarian client [--connect ADDR] [--node N] [--key F] OP [JSON]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/rand.h>

#include "store.h"
#include "server.h"

static void usage(FILE *f)
{
	fputs("usage: librarian -c FILE [--listen ADDR]... [--db PATH] [-v]\n"
	      "       librarian backup [-c FILE | --db PATH] DEST\n"
	      "       librarian check [-c FILE | --db PATH]\n"
	      "       librarian genkey [FILE]\n"
	      "       librarian client [--connect ADDR] [--node NAME] [--key FILE] [--timeout MS]\n"
	      "                        OP [JSON-ARGS] | '{\"op\":...}' | --stdin\n"
	      "ADDR is HOST:PORT (TLS 1.3 with a pre-shared key) or unix:PATH.\n"
	      "See librarian(8) and librarian.conf(5).\n", f);
}

static const char *db_from_args(const char *cfgfile, const char *db, struct lib_config **cfg)
{
	struct lib_err e = { 0 };

	if (db)
		return db;
	if (!cfgfile) {
		fprintf(stderr, "librarian: give -c FILE or --db PATH\n");
		return NULL;
	}
	if (lib_config_load(cfgfile, cfg, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		return NULL;
	}
	return (*cfg)->db_path;
}

static int parse_db_opts(int argc, char **argv, const char **cfgfile, const char **db)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+c:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			*cfgfile = optarg;
			break;
		case 'd':
			*db = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	return optind;
}

static int cmd_check(int argc, char **argv)
{
	const char *cfgfile = NULL, *db = NULL, *path;
	struct lib_config *cfg = NULL;
	sqlite3 *h = NULL;
	int bad, i = parse_db_opts(argc, argv, &cfgfile, &db);

	if (i < 0)
		return 2;
	if (i != argc) {
		fprintf(stderr, "librarian check: unexpected argument '%s'\n", argv[i]);
		return 2;
	}
	path = db_from_args(cfgfile, db, &cfg);
	if (!path)
		return 2;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "librarian check: %s: %s\n", path, h ? sqlite3_errmsg(h) : "cannot open");
		sqlite3_close(h);
		lib_config_free(cfg);
		return 2;
	}
	sqlite3_busy_timeout(h, 5000);
	sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);	/* one consistent snapshot */
	bad = lib_store_check(h, stdout);
	sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(h);
	lib_config_free(cfg);
	if (bad) {
		printf("%s: %d violations\n", path, bad);
		return 1;
	}
	printf("%s: consistent\n", path);
	return 0;
}

static int cmd_backup(int argc, char **argv)
{
	const char *cfgfile = NULL, *db = NULL, *src, *dest;
	struct lib_config *cfg = NULL;
	sqlite3 *from = NULL, *to = NULL;
	sqlite3_backup *b;
	char tmp[4096];
	int rc = 1, fd, i = parse_db_opts(argc, argv, &cfgfile, &db);

	if (i < 0)
		return 2;
	if (argc - i != 1) {
		fprintf(stderr, "librarian backup: give exactly one destination file\n");
		return 2;
	}
	dest = argv[i];
	src = db_from_args(cfgfile, db, &cfg);
	if (!src)
		return 2;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dest, (int)getpid()) >= (int)sizeof(tmp)) {
		fprintf(stderr, "librarian backup: destination path too long\n");
		goto out;
	}
	if (sqlite3_open_v2(src, &from, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "librarian backup: %s: %s\n", src,
			from ? sqlite3_errmsg(from) : "cannot open");
		goto out;
	}
	sqlite3_busy_timeout(from, 5000);
	unlink(tmp);
	if (sqlite3_open_v2(tmp, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		fprintf(stderr, "librarian backup: %s: %s\n", tmp, to ? sqlite3_errmsg(to) : "cannot create");
		goto out;
	}
	b = sqlite3_backup_init(to, "main", from, "main");
	if (!b) {
		fprintf(stderr, "librarian backup: %s\n", sqlite3_errmsg(to));
		goto out;
	}
	/* all pages in one step: one read transaction, so one consistent snapshot
	 * while the librarian keeps writing (WAL readers do not block it) */
	i = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (i != SQLITE_DONE) {
		fprintf(stderr, "librarian backup: copying %s: %s\n", src, sqlite3_errmsg(to));
		goto out;
	}
	if (lib_store_forget_zeroed(to) < 0) {
		fprintf(stderr, "librarian backup: %s: %s\n", tmp, sqlite3_errmsg(to));
		goto out;
	}
	i = lib_store_check(to, stderr);
	if (i) {
		fprintf(stderr, "librarian backup: the copy has %d consistency violations; not kept\n", i);
		goto out;
	}
	sqlite3_close(to);
	to = NULL;
	fd = open(tmp, O_RDONLY);
	if (fd < 0 || fsync(fd) < 0) {
		fprintf(stderr, "librarian backup: %s: %s\n", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (rename(tmp, dest) < 0) {
		fprintf(stderr, "librarian backup: rename to %s: %s\n", dest, strerror(errno));
		goto out;
	}
	printf("%s: consistent copy of %s\n", dest, src);
	rc = 0;
out:
	if (to)
		sqlite3_close(to);
	if (rc)
		unlink(tmp);
	sqlite3_close(from);
	lib_config_free(cfg);
	return rc;
}

static int cmd_genkey(int argc, char **argv)
{
	unsigned char key[32];
	char hex[65];
	int fd = 1;

	if (argc > 2) {
		fprintf(stderr, "librarian genkey: at most one output file\n");
		return 2;
	}
	if (RAND_bytes(key, sizeof(key)) != 1) {
		fprintf(stderr, "librarian genkey: no random numbers\n");
		return 1;
	}
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	if (argc == 2) {
		fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "librarian genkey: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
	}
	if (dprintf(fd, "%s\n", hex) < 0) {
		fprintf(stderr, "librarian genkey: write: %s\n", strerror(errno));
		return 1;
	}
	if (fd != 1 && (fsync(fd) < 0 || close(fd) < 0)) {
		fprintf(stderr, "librarian genkey: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}

/* Print one reply; returns 0 or the exit status for an error. */
static int print_reply(struct lfs_lib *l, const char *op, int r, json_t *res, bool compact)
{
	if (r < 0) {
		if (compact) {
			json_t *e = json_pack("{s:b,s:s,s:i,s:s}", "ok", 0, "code", lfs_lib_errcode(l),
					      "errno", -r, "message", lfs_lib_errmsg(l));
			char *t = json_dumps(e, JSON_COMPACT);

			printf("%s\n", t ? t : "{}");
			free(t);
			json_decref(e);
		}
		fprintf(stderr, "librarian: %s: %s: %s\n", op, lfs_lib_errcode(l), lfs_lib_errmsg(l));
		return 1;
	}
	{
		char *t;

		if (compact) {
			json_t *o = json_pack("{s:b,s:O}", "ok", 1, "result", res);

			t = json_dumps(o, JSON_COMPACT);
			json_decref(o);
		} else {
			t = json_dumps(res, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		}
		printf("%s\n", t ? t : "null");
		free(t);
	}
	return 0;
}

static int call_one(struct lfs_lib *l, json_t *req, bool compact)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *res = NULL;
	char *opdup;
	int r, rc;

	if (!op) {
		fprintf(stderr, "librarian client: the request needs \"op\"\n");
		return 2;
	}
	opdup = strdup(op);
	json_object_del(req, "op");
	r = lfs_lib_call(l, opdup, req, &res);
	rc = print_reply(l, opdup, r, res, compact);
	fflush(stdout);
	free(opdup);
	json_decref(res);
	return rc;
}

static int cmd_client(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "connect", required_argument, NULL, 'C' },
		{ "node", required_argument, NULL, 'n' },
		{ "key", required_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "stdin", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct lfs_lib_opts o = { .addr = getenv("LFS_LIBRARIAN") };
	struct lfs_lib *l = NULL;
	json_t *req = NULL;
	json_error_t je;
	char *err = NULL;
	bool from_stdin = false;
	int ch, r, rc = 0;

	if (!o.addr)
		o.addr = LFS_DEFAULT_ADDR;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+C:n:k:t:sh", lo, NULL)) != -1) {
		switch (ch) {
		case 'C':
			o.addr = optarg;
			break;
		case 'n':
			o.node = optarg;
			break;
		case 'k':
			o.key_file = optarg;
			break;
		case 't':
			o.reply_timeout_ms = o.connect_timeout_ms = atoi(optarg);
			break;
		case 's':
			from_stdin = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!from_stdin) {
		if (optind >= argc || argc - optind > 2) {
			fprintf(stderr, "librarian client: give OP [JSON-ARGS], a request object, or --stdin\n");
			return 2;
		}
		if (argv[optind][0] == '{') {
			req = json_loads(argv[optind], JSON_REJECT_DUPLICATES, &je);
		} else {
			req = argc - optind == 2 ? json_loads(argv[optind + 1], JSON_REJECT_DUPLICATES, &je) :
			      json_object();
			if (req && json_is_object(req))
				json_object_set_new(req, "op", json_string(argv[optind]));
		}
		if (!req || !json_is_object(req)) {
			fprintf(stderr, "librarian client: arguments are not a JSON object: %s\n",
				req ? "not an object" : je.text);
			json_decref(req);
			return 2;
		}
	}
	r = lfs_lib_connect(&o, &l, &err);
	if (r < 0) {
		fprintf(stderr, "librarian client: %s\n", err ? err : strerror(-r));
		free(err);
		json_decref(req);
		return 3;
	}
	if (!from_stdin) {
		rc = call_one(l, req, false);
		json_decref(req);
	} else {
		char *line = NULL;
		size_t cap = 0;

		/* one request object per line, one compact reply per line */
		while (getline(&line, &cap, stdin) > 0) {
			if (line[strspn(line, " \t\r\n")] == 0)
				continue;
			req = json_loads(line, JSON_REJECT_DUPLICATES, &je);
			if (!req || !json_is_object(req)) {
				printf("{\"ok\":false,\"code\":\"EINVAL\",\"message\":\"bad input line: %s\"}\n",
				       req ? "not an object" : "not JSON");
				json_decref(req);
				rc = 1;
				continue;
			}
			if (call_one(l, req, true))
				rc = 1;
			json_decref(req);
			if (!lfs_lib_connected(l))
				break;
		}
		free(line);
	}
	lfs_lib_close(l);
	return rc;
}

static int lock_db(const char *db)
{
	char path[4096];
	int fd;

	if (snprintf(path, sizeof(path), "%s.lock", db) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -EBUSY;
	}
	return fd;	/* held until exit */
}

static int cmd_serve(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "db", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cfgfile = NULL, *db = NULL, *listen[LIB_MAX_LISTEN];
	struct lib_config *cfg = NULL;
	struct lib_store *store = NULL;
	struct lib_err e = { 0 };
	int nlisten = 0, verbose = 0, ch, rc = 1, lockfd;

	while ((ch = getopt_long(argc, argv, "c:l:d:vVh", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			cfgfile = optarg;
			break;
		case 'l':
			if (nlisten == LIB_MAX_LISTEN) {
				fprintf(stderr, "librarian: at most %d --listen\n", LIB_MAX_LISTEN);
				return 2;
			}
			listen[nlisten++] = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'V':
			printf("librarian %s\n", LFS_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "librarian: unknown command or argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!cfgfile) {
		fprintf(stderr, "librarian: give the configuration file with -c FILE\n");
		return 2;
	}
	if (lib_config_load(cfgfile, &cfg, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		return 1;
	}
	if (db) {
		free(cfg->db_path);
		cfg->db_path = strdup(db);
	}
	if (nlisten) {
		for (int i = 0; i < cfg->nlisten; i++)
			free(cfg->listen[i]);
		for (int i = 0; i < nlisten; i++)
			cfg->listen[i] = strdup(listen[i]);
		cfg->nlisten = nlisten;
	}
	{
		/* before any thread starts, so that only the event loop's signalfd sees them */
		sigset_t mask;

		sigemptyset(&mask);
		sigaddset(&mask, SIGTERM);
		sigaddset(&mask, SIGINT);
		sigprocmask(SIG_BLOCK, &mask, NULL);
	}
	lockfd = lock_db(cfg->db_path);
	if (lockfd < 0) {
		fprintf(stderr, "librarian: %s: %s\n", cfg->db_path,
			lockfd == -EBUSY ? "another librarian is serving this catalogue" :
			strerror(-lockfd));
		goto out;
	}
	if (lib_store_open(cfg->db_path, cfg, true, &store, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		goto out;
	}
	if (store->upgraded_from)
		fprintf(stderr, "librarian: %s: catalogue upgraded from schema version %d to %d\n",
			cfg->db_path, store->upgraded_from, LIB_SCHEMA_VERSION);
	if (lib_store_sync_geometry(store, &e) < 0 ||
	    lib_store_checkpointer(store, true, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		goto out;
	}
	rc = lib_serve(cfg, store, verbose);
	lib_store_checkpointer(store, false, NULL);
	sqlite3_wal_checkpoint_v2(store->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
out:
	lib_store_close(store);
	lib_config_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "backup"))
			return cmd_backup(argc - 1, argv + 1);
		if (!strcmp(argv[1], "check"))
			return cmd_check(argc - 1, argv + 1);
		if (!strcmp(argv[1], "genkey"))
			return cmd_genkey(argc - 1, argv + 1);
		if (!strcmp(argv[1], "client"))
			return cmd_client(argc - 1, argv + 1);
	}
	return cmd_serve(argc, argv);
}
