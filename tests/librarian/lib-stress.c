// SPDX-License-Identifier: GPL-2.0
/*
 * lib-stress: crash-consistency client. Test helper.
 *
 *   lib-stress ADDR run PREFIX JOURNAL SEED
 *	create, grow, shrink and destroy shelves PREFIX-0..PREFIX-5 until the
 *	connection breaks. Before each request "B op name books" is appended to
 *	JOURNAL, after the reply "A" (applied) or "E code" (refused).
 *   lib-stress ADDR verify JOURNAL...
 *	every acknowledged operation must be in the catalogue: each shelf is as
 *	its last acknowledged operation left it, or as the one in flight when
 *	the connection broke would leave it. Prints violations; exit 1 if any.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfs_librarian.h"

#define NSHELF 6

static void jprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jprintf(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, n) != n)
		exit(1);
}

static int run(const char *addr, const char *prefix, const char *journal, unsigned int seed)
{
	struct lfs_lib_opts o = { .addr = addr, .reply_timeout_ms = 20000 };
	struct lfs_lib *l;
	int exists[NSHELF] = { 0 }, fd, n = 0;
	char *err = NULL;

	if (lfs_lib_connect(&o, &l, &err) < 0) {
		fprintf(stderr, "lib-stress: %s\n", err);
		free(err);
		return 1;
	}
	fd = open(journal, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return 1;
	srand(seed);
	for (;;) {
		int i = rand() % NSHELF, books = rand() % 11, r;
		char name[64];
		const char *op;
		json_t *args;

		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		if (!exists[i]) {
			op = "shelf.create";
			args = json_pack("{s:s,s:i}", "name", name, "books", books);
		} else if (rand() % 4 == 0) {
			op = "shelf.destroy";
			books = 0;
			args = json_pack("{s:s}", "name", name);
		} else {
			op = "shelf.resize";
			args = json_pack("{s:s,s:i}", "name", name, "books", books);
		}
		jprintf(fd, "B %s %s %d\n", op, name, books);
		r = lfs_lib_call(l, op, args, NULL);
		json_decref(args);
		if (r < 0 && !lfs_lib_connected(l))
			break; /* the librarian is gone: the last op stays in flight */
		if (r < 0) {
			jprintf(fd, "E %s\n", lfs_lib_errcode(l));
			if (r == -EEXIST && !strcmp(op, "shelf.create"))
				exists[i] = 1;
			continue;
		}
		jprintf(fd, "A\n");
		exists[i] = strcmp(op, "shelf.destroy") != 0;
		n++;
	}
	close(fd);
	lfs_lib_close(l);
	return 0;
}

struct expect {
	char name[64];
	int exists, books; /* after the last acknowledged op */
	int alt_valid, alt_exists, alt_books; /* after the op in flight */
};

static struct expect *find(struct expect *e, int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	snprintf(e[*n].name, sizeof(e[*n].name), "%s", name);
	e[*n].exists = 0;
	e[*n].books = 0;
	e[*n].alt_valid = 0;
	return &e[(*n)++];
}

static int verify(const char *addr, int nj, char **journals)
{
	struct lfs_lib_opts o = { .addr = addr };
	struct expect *e = calloc(NSHELF * nj * 4 + 16, sizeof(*e));
	struct lfs_lib *l;
	char *err = NULL;
	int ne = 0, bad = 0, acked = 0;

	for (int j = 0; j < nj; j++) {
		FILE *f = fopen(journals[j], "r");
		char line[256], op[32], name[64];
		int books;
		struct expect *cur = NULL;
		int pending = 0, pexists = 0, pbooks = 0;

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "B %31s %63s %d", op, name, &books) == 3) {
				cur = find(e, &ne, name);
				pending = 1;
				pexists = strcmp(op, "shelf.destroy") != 0;
				pbooks = pexists ? books : 0;
			} else if (line[0] == 'A' && cur && pending) {
				cur->exists = pexists;
				cur->books = pbooks;
				pending = 0;
				acked++;
			} else if (line[0] == 'E') {
				pending = 0;
			}
		}
		fclose(f);
		if (cur && pending) {
			cur->alt_valid = 1;
			cur->alt_exists = pexists;
			cur->alt_books = pbooks;
		}
	}
	if (lfs_lib_connect(&o, &l, &err) < 0) {
		fprintf(stderr, "lib-stress verify: %s\n", err);
		return 1;
	}
	for (int i = 0; i < ne; i++) {
		json_t *args = json_pack("{s:s,s:i}", "name", e[i].name, "limit", 0), *res = NULL;
		int r = lfs_lib_call(l, "shelf.get", args, &res);
		int exists = r == 0,
		    books = exists ? json_integer_value(json_object_get(res, "books")) : 0;
		bool ok = (exists == e[i].exists && books == e[i].books) ||
			  (e[i].alt_valid && exists == e[i].alt_exists && books == e[i].alt_books);

		if (r < 0 && r != -ENOENT) {
			printf("%s: shelf.get failed: %s\n", e[i].name, lfs_lib_errmsg(l));
			bad++;
		} else if (!ok) {
			printf("%s: found %s with %d books, acknowledged state %s with %d books%s\n",
			       e[i].name, exists ? "present" : "absent", books,
			       e[i].exists ? "present" : "absent", e[i].books,
			       e[i].alt_valid ? " (or the op in flight)" : "");
			bad++;
		}
		json_decref(args);
		json_decref(res);
	}
	lfs_lib_close(l);
	printf("%d shelves, %d acknowledged operations checked, %d violations\n", ne, acked, bad);
	free(e);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[2], "run"))
		return run(argv[1], argv[3], argv[4], strtoul(argv[5], NULL, 0));
	if (argc >= 4 && !strcmp(argv[2], "verify"))
		return verify(argv[1], argc - 3, argv + 3);
	fprintf(stderr,
		"usage: lib-stress ADDR run PREFIX JOURNAL SEED | ADDR verify JOURNAL...\n");
	return 2;
}
