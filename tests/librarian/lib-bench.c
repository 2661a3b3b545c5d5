// SPDX-License-Identifier: GPL-2.0
/*
 * lib-bench: librarian benchmark client (bench/librarian/run.sh drives it).
 *
 *   lib-bench ADDR NODE KEY cycle CLIENTS SECONDS BOOKS
 *	CLIENTS processes, each on its own connection, repeat: create a shelf of
 *	BOOKS books, destroy it, report its books zeroed. Prints cycles/s and
 *	p50/p99 latency of each operation.
 *   lib-bench ADDR NODE KEY grow BOOKS REPEAT
 *	time one grow of an empty shelf to BOOKS books (median of REPEAT)
 *   lib-bench ADDR NODE KEY list SHELVES REPEAT
 *	make SHELVES shelves, then time shelf.list of all of them
 * NODE/KEY are ignored for unix: addresses (admin).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_int.h" /* lc_json_parse, beside json_loadb */

#define MAXLAT (1 << 20)
enum { OP_CREATE, OP_DESTROY, OP_ZEROED, NOPS };
static const char *const opname[NOPS] = { "create", "destroy", "zeroed" };

struct slot {
	long cycles;
	int nlat[NOPS];
	float lat[NOPS][MAXLAT / 32]; /* microseconds */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct lfs_lib *conn(const char *addr, const char *node, const char *key)
{
	struct lfs_lib_opts o = { .addr = addr,
				  .node = strncmp(addr, "unix:", 5) ? node : NULL,
				  .key_file = key };
	struct lfs_lib *l;
	char *err = NULL;

	if (lfs_lib_connect(&o, &l, &err) < 0) {
		fprintf(stderr, "lib-bench: %s\n", err);
		exit(1);
	}
	return l;
}

static int must(struct lfs_lib *l, const char *op, json_t *args, json_t **res)
{
	int r = lfs_lib_call(l, op, args, res);

	json_decref(args);
	if (r < 0) {
		fprintf(stderr, "lib-bench: %s: %s\n", op, lfs_lib_errmsg(l));
		exit(1);
	}
	return r;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void qsort_d(double *t, int n)
{
	qsort(t, n, sizeof(*t), cmpd);
}

static int cmpf(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void child(const char *addr, const char *node, const char *key, int id, double end,
		  int books, struct slot *s)
{
	struct lfs_lib *l = conn(addr, node, key);
	char name[64];

	for (long k = 0; now_s() < end; k++) {
		json_t *res = NULL, *map;
		double t0, t1, t2, t3;

		snprintf(name, sizeof(name), "bench-%d-%ld", id, k);
		t0 = now_s();
		must(l, "shelf.create", json_pack("{s:s,s:i}", "name", name, "books", books), &res);
		t1 = now_s();
		must(l, "shelf.destroy", json_pack("{s:s}", "name", name), NULL);
		t2 = now_s();
		map = json_object_get(res, "map");
		must(l, "zombie.zeroed", json_pack("{s:O}", "books", map), NULL);
		t3 = now_s();
		json_decref(res);
		if (s->nlat[0] < MAXLAT / 32) {
			s->lat[OP_CREATE][s->nlat[0]++] = (t1 - t0) * 1e6;
			s->lat[OP_DESTROY][s->nlat[1]++] = (t2 - t1) * 1e6;
			s->lat[OP_ZEROED][s->nlat[2]++] = (t3 - t2) * 1e6;
		}
		s->cycles++;
	}
	lfs_lib_close(l);
}

static int cycle(const char *addr, const char *node, const char *key, int clients, int secs,
		 int books)
{
	struct slot *slots = mmap(NULL, sizeof(struct slot) * clients, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double start, end, took;
	long cycles = 0;

	if (slots == MAP_FAILED)
		return 1;
	start = now_s();
	end = start + secs;
	for (int i = 0; i < clients; i++) {
		if (fork() == 0) {
			child(addr, node, key, i, end, books, &slots[i]);
			_exit(0);
		}
	}
	for (int i = 0; i < clients; i++) {
		int st;

		wait(&st);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	took = now_s() - start;
	for (int i = 0; i < clients; i++)
		cycles += slots[i].cycles;
	printf("clients %d  books/shelf %d  cycles %ld in %.2f s  = %.0f cycles/s\n", clients,
	       books, cycles, took, cycles / took);
	for (int op = 0; op < NOPS; op++) {
		long n = 0;
		float *all;

		for (int i = 0; i < clients; i++)
			n += slots[i].nlat[op];
		all = malloc(n * sizeof(*all));
		n = 0;
		for (int i = 0; i < clients; i++) {
			memcpy(all + n, slots[i].lat[op], slots[i].nlat[op] * sizeof(*all));
			n += slots[i].nlat[op];
		}
		qsort(all, n, sizeof(*all), cmpf);
		printf("  %-8s p50 %7.3f ms  p99 %7.3f ms  (n=%ld)\n", opname[op],
		       n ? all[n / 2] / 1000 : 0, n ? all[n * 99 / 100] / 1000 : 0, n);
		free(all);
	}
	return 0;
}

static int grow(const char *addr, const char *node, const char *key, int books, int repeat)
{
	struct lfs_lib *l = conn(addr, node, key);
	double *t = calloc(repeat, sizeof(double));

	for (int i = 0; i < repeat; i++) {
		json_t *res = NULL;
		double t0;

		must(l, "shelf.create", json_pack("{s:s}", "name", "bench-grow"), NULL);
		t0 = now_s();
		must(l, "shelf.resize",
		     json_pack("{s:s,s:i}", "name", "bench-grow", "books", books), &res);
		t[i] = now_s() - t0;
		must(l, "shelf.destroy", json_pack("{s:s}", "name", "bench-grow"), NULL);
		must(l, "zombie.zeroed", json_pack("{s:O}", "books", json_object_get(res, "added")),
		     NULL);
		json_decref(res);
	}
	for (int i = 0; i < repeat; i++)
		for (int j = i + 1; j < repeat; j++)
			if (t[j] < t[i]) {
				double x = t[i];

				t[i] = t[j];
				t[j] = x;
			}
	printf("grow of an empty shelf to %d books: median %.2f ms, min %.2f ms, max %.2f ms (%d runs)\n",
	       books, t[repeat / 2] * 1000, t[0] * 1000, t[repeat - 1] * 1000, repeat);
	lfs_lib_close(l);
	free(t);
	return 0;
}

/*
 * How much of a list's time is the client's own parse of the reply: the
 * result's compact text parsed as lfs_lib_call parses the reply
 * (lc_json_parse, client_json.c), median of 11; and by jansson's json_loadb,
 * which the library used before, beside it.
 */
static void parse_time(json_t *res)
{
	char *txt = json_dumps(res, JSON_COMPACT);
	double t[11], tj[11];
	char why[JSON_ERROR_TEXT_LENGTH];
	size_t len;

	if (!txt)
		return;
	len = strlen(txt);
	for (int i = 0; i < 11; i++) {
		double t0 = now_s();
		json_t *j = lc_json_parse(txt, len, why, sizeof(why));

		t[i] = now_s() - t0;
		json_decref(j);
		t0 = now_s();
		j = json_loadb(txt, len, 0, NULL);
		tj[i] = now_s() - t0;
		json_decref(j);
	}
	qsort_d(t, 11);
	qsort_d(tj, 11);
	printf("  of which the client's JSON parse of the %zu-byte result: median %.2f ms"
	       " (jansson's json_loadb: %.2f ms)\n",
	       len, t[5] * 1000, tj[5] * 1000);
	free(txt);
}

static int list(const char *addr, const char *node, const char *key, int shelves, int repeat)
{
	struct lfs_lib *l = conn(addr, node, key);
	double *t = calloc(repeat, sizeof(double));
	json_t *last = NULL;
	long total = 0;

	for (int i = 0; i < shelves; i++) {
		char name[64];
		json_t *res = NULL;

		snprintf(name, sizeof(name), "bench-list-%05d", i);
		if (lfs_lib_call(l, "shelf.create",
				 json_pack("{s:s,s:i}", "name", name, "books", 1), &res) < 0 &&
		    strcmp(lfs_lib_errcode(l), "EEXIST")) {
			fprintf(stderr, "lib-bench: create: %s\n", lfs_lib_errmsg(l));
			return 1;
		}
		json_decref(res);
	}
	for (int i = 0; i < repeat; i++) {
		json_t *res = NULL;
		double t0 = now_s();

		must(l, "shelf.list",
		     json_pack("{s:s,s:i}", "prefix", "bench-list-", "limit", shelves), &res);
		t[i] = now_s() - t0;
		total = json_array_size(json_object_get(res, "shelves"));
		json_decref(last);
		last = res;
	}
	for (int i = 0; i < repeat; i++)
		for (int j = i + 1; j < repeat; j++)
			if (t[j] < t[i]) {
				double x = t[i];

				t[i] = t[j];
				t[j] = x;
			}
	printf("list of %ld shelves: median %.2f ms, p99 %.2f ms (%d runs)\n", total,
	       t[repeat / 2] * 1000, t[repeat * 99 / 100] * 1000, repeat);
	parse_time(last);
	json_decref(last);
	lfs_lib_close(l);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && !strcmp(argv[4], "cycle"))
		return cycle(argv[1], argv[2], argv[3], atoi(argv[5]), atoi(argv[6]),
			     atoi(argv[7]));
	if (argc == 7 && !strcmp(argv[4], "grow"))
		return grow(argv[1], argv[2], argv[3], atoi(argv[5]), atoi(argv[6]));
	if (argc == 7 && !strcmp(argv[4], "list"))
		return list(argv[1], argv[2], argv[3], atoi(argv[5]), atoi(argv[6]));
	fprintf(stderr,
		"usage: lib-bench ADDR NODE KEY cycle CLIENTS SECONDS BOOKS | grow BOOKS REPEAT | list SHELVES REPEAT\n");
	return 2;
}
