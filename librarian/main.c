// SPDX-License-Identifier: GPL-2.0
/*
 * librarian: the daemon and its administrative subcommands.
 *
 *   librarian -c FILE [--listen ADDR]... [--db PATH] [-v]   serve (foreground)
 *   librarian backup [-c FILE | --db PATH] DEST              online backup
 *   librarian check [-c FILE | --db PATH]                    consistency check
 *   librarian genkey [FILE]                                  make a node key
 *   librarian client [--connect ADDR] [--node N] [--key F] OP [JSON]   (cli.c)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <openssl/rand.h>

#include "server.h"
#include "store_leader.h"

void lib_usage(FILE *f)
{
	fputs("usage: librarian -c FILE [--listen ADDR]... [--db PATH] [-v]\n"
	      "       librarian backup [-c FILE | --db PATH] DEST\n"
	      "       librarian check [-c FILE | --db PATH]\n"
	      "       librarian genkey [FILE]\n"
	      "       librarian client [--connect ADDR] [--node NAME] [--key FILE] [--timeout MS]\n"
	      "                        OP [JSON-ARGS] | '{\"op\":...}' | --stdin\n"
	      "ADDR is HOST:PORT (TLS 1.3 with a pre-shared key) or unix:PATH.\n"
	      "See librarian(8) and librarian.conf(5).\n",
	      f);
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
	static const struct option lo[] = { { "config", required_argument, NULL, 'c' },
					    { "db", required_argument, NULL, 'd' },
					    { "help", no_argument, NULL, 'h' },
					    { 0 } };
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
			lib_usage(stdout);
			exit(0);
		default:
			lib_usage(stderr);
			return -1;
		}
	}
	return optind;
}

static int cmd_check(int argc, char **argv)
{
	const char *cfgfile = NULL, *db = NULL, *path;
	struct lib_config *cfg = NULL;
	char msg[600];
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
	bad = lib_store_check_file(path, stdout, msg, sizeof(msg));
	if (bad < 0)
		fprintf(stderr, "librarian check: %s\n", msg);
	else if (bad)
		printf("%s: %d violations\n", path, bad);
	else
		printf("%s: consistent\n", path);
	lib_config_free(cfg);
	return bad < 0 ? 2 : bad ? 1 : 0;
}

static int cmd_backup(int argc, char **argv)
{
	const char *cfgfile = NULL, *db = NULL, *src;
	struct lib_config *cfg = NULL;
	char msg[600];
	int r, i = parse_db_opts(argc, argv, &cfgfile, &db);

	if (i < 0)
		return 2;
	if (argc - i != 1) {
		fprintf(stderr, "librarian backup: give exactly one destination file\n");
		return 2;
	}
	src = db_from_args(cfgfile, db, &cfg);
	if (!src)
		return 2;
	r = lib_store_backup(src, argv[i], stderr, msg, sizeof(msg));
	if (r < 0)
		fprintf(stderr, "librarian backup: %s\n", msg);
	else
		printf("%s: consistent copy of %s\n", argv[i], src);
	lib_config_free(cfg);
	return r < 0 ? 1 : 0;
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
	return fd; /* held until exit */
}

struct serve_opts {
	const char *cfgfile, *db;
	const char *listen[LIB_MAX_LISTEN];
	int nlisten, verbose;
};

/* Returns -1 to go on serving, else the exit status (usage error, --help). */
static int serve_options(int argc, char **argv, struct serve_opts *o)
{
	static const struct option lo[] = { { "config", required_argument, NULL, 'c' },
					    { "listen", required_argument, NULL, 'l' },
					    { "db", required_argument, NULL, 'd' },
					    { "verbose", no_argument, NULL, 'v' },
					    { "version", no_argument, NULL, 'V' },
					    { "help", no_argument, NULL, 'h' },
					    { 0 } };
	int ch;

	while ((ch = getopt_long(argc, argv, "c:l:d:vVh", lo, NULL)) != -1) {
		if (ch == 'c') {
			o->cfgfile = optarg;
		} else if (ch == 'l' && o->nlisten < LIB_MAX_LISTEN) {
			o->listen[o->nlisten++] = optarg;
		} else if (ch == 'l') {
			fprintf(stderr, "librarian: at most %d --listen\n", LIB_MAX_LISTEN);
			return 2;
		} else if (ch == 'd') {
			o->db = optarg;
		} else if (ch == 'v') {
			o->verbose = 1;
		} else if (ch == 'V') {
			printf("librarian %s\n", LFS_VERSION);
			return 0;
		} else {
			lib_usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 0 : 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "librarian: unknown command or argument '%s'\n", argv[optind]);
		lib_usage(stderr);
		return 2;
	}
	if (!o->cfgfile) {
		fprintf(stderr, "librarian: give the configuration file with -c FILE\n");
		return 2;
	}
	return -1;
}

/* The configuration with the command line's --db and --listen in place of its own. */
static struct lib_config *serve_config(const struct serve_opts *o)
{
	struct lib_config *cfg;
	struct lib_err e = { 0 };

	if (lib_config_load(o->cfgfile, &cfg, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		return NULL;
	}
	if (o->db) {
		free(cfg->db_path);
		cfg->db_path = strdup(o->db);
	}
	if (o->nlisten) {
		for (int i = 0; i < cfg->nlisten; i++)
			free(cfg->listen[i]);
		for (int i = 0; i < o->nlisten; i++)
			cfg->listen[i] = strdup(o->listen[i]);
		cfg->nlisten = o->nlisten;
	}
	return cfg;
}

/*
 * A catalogue that fails the checks of `librarian check` (with SQLite's
 * quick_check for integrity_check) is not served: a flipped book state could
 * hand a book in use to a second shelf. The violations name the rows.
 */
static int self_check(struct lib_store *store, const char *path)
{
	int bad;

	lib_store_begin_read(store);
	bad = lib_store_check(store, stderr, true);
	lib_store_end_read(store);
	if (bad)
		fprintf(stderr,
			"librarian: %s: the catalogue failed its check at start (%d violations above); not serving it. Restore a backup, or repair it and run `librarian check`\n",
			path, bad);
	return bad ? -EIO : 0;
}

/*
 * Checked and matching the fabric: at start, and when a standby takes the
 * lead. With the leader row, the preparation's commit renews it (store.c):
 * the first start on a big fabric may take longer than leader_ttl_ms.
 */
int lib_serve_prepare(struct lib_store *store, const struct lib_config *cfg, struct lib_err *e)
{
	int r;

	if (self_check(store, cfg->db_path) < 0)
		return lib_fail(e, EIO, "%s: not served (its check failed)", cfg->db_path);
	store->prepare_ttl_ms = cfg->leader_ttl_ms;
	r = lib_store_sync_geometry(store, e);
	store->prepare_ttl_ms = 0;
	return r;
}

/*
 * PostgreSQL: leader or standby (leader.c). A standby prepares the
 * catalogue only when it takes the lead: until then it writes nothing.
 */
static int serve_leader(struct lib_config *cfg, struct lib_store *store, struct lib_leader **out)
{
	struct lib_err e = { 0 };

	if (lib_config_check_leader(cfg, &e) < 0 || lib_leader_open(cfg, store, out, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* The catalogue, locked against a second librarian, checked, matching the fabric. */
static struct lib_store *serve_store(struct lib_config *cfg, struct lib_leader **leader)
{
	struct lib_store *store = NULL;
	struct lib_err e = { 0 };
	/* PostgreSQL: not a file; the leader row says who serves (docs/HA.md) */
	bool pg = lib_store_is_pg(cfg->db_path);
	int lockfd = pg ? 0 : lock_db(cfg->db_path);

	if (lockfd < 0) {
		fprintf(stderr, "librarian: %s: %s\n", cfg->db_path,
			lockfd == -EBUSY ? "another librarian is serving this catalogue" :
					   strerror(-lockfd));
		return NULL;
	}
	if (lib_store_open(cfg->db_path, cfg, true, &store, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		return NULL;
	}
	if (store->upgraded_from)
		fprintf(stderr, "librarian: %s: catalogue upgraded from schema version %d to %d\n",
			cfg->db_path, store->upgraded_from, LIB_SCHEMA_VERSION);
	if (pg && serve_leader(cfg, store, leader) < 0)
		goto fail;
	if (lib_leader_leading(*leader) && lib_serve_prepare(store, cfg, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		goto fail;
	}
	if (lib_store_checkpointer(store, true, &e) < 0) {
		fprintf(stderr, "librarian: %s\n", e.msg);
		goto fail;
	}
	return store;
fail:
	if (*leader && lib_leader_epoch(*leader))
		lib_store_leader_release(store, &e);
	lib_leader_free(*leader);
	*leader = NULL;
	lib_store_close(store);
	return NULL;
}

static int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { 0 };
	struct lib_config *cfg;
	struct lib_store *store;
	struct lib_leader *leader = NULL;
	sigset_t mask;
	int rc = serve_options(argc, argv, &o);

	if (rc >= 0)
		return rc;
	cfg = serve_config(&o);
	if (!cfg)
		return 1;
	/* before any thread starts, so that only the event loop's signalfd sees them */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	rc = 1;
	store = serve_store(cfg, &leader);
	if (store) {
		rc = lib_serve(cfg, store, leader, o.verbose);
		lib_store_checkpoint_final(store);
	}
	lib_leader_free(leader);
	lib_store_close(store);
	lib_config_free(cfg);
	return rc;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "backup", cmd_backup },
	{ "check", cmd_check },
	{ "genkey", cmd_genkey },
	{ "client", lib_cmd_client },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return cmd_serve(argc, argv);
}
