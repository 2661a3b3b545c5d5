// SPDX-License-Identifier: GPL-2.0
/*
 * lib-probe: a failover probe (bench/librarian/failover.sh drives it). It
 * prints one line per outcome until it is killed, each with two times on
 * the wall clock in milliseconds (the driving script stamps its faults with
 * the same clock): SENT, when the request left, and MS, when the outcome
 * came.
 *
 *   lib-probe write ADDRS NODE KEY PREFIX
 *	as NODE, for I = 0, 1, ...: create shelf PREFIX-I (one book), destroy
 *	it, report its book zeroed (a step after a failed one is left out):
 *	"A SENT MS OP NAME" for an acknowledged request, "E SENT MS OP NAME CODE" for
 *	one answered with an error or not at all. A broken connection is made
 *	again through the list at the next request, every 50 ms.
 *   lib-probe beat ADDRS NODE KEY INTERVAL_MS
 *	as NODE, a heartbeat every INTERVAL_MS, as the node agent's renewal
 *	thread sends them (docs/HA.md, "Nodes follow the leader"): "H SENT MS EPOCH"
 *	for a reply that would renew the lease (ok, and an epoch not older than
 *	the newest seen), "F SENT MS WHY" otherwise. A heartbeat unanswered for an
 *	interval drops the connection; the next is tried after 250 ms, on the
 *	list from the next address.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lfs_librarian.h"

static long long wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* connected to the list's leader, or NULL after one pass over it */
static struct lfs_lib *probe_connect(struct lfs_lib_opts *o)
{
	struct lfs_lib *lib = NULL;
	char *msg = NULL;

	if (lfs_lib_connect(o, &lib, &msg) < 0) {
		free(msg);
		return NULL;
	}
	return lib;
}

/* one request as lfs_lib_call; 0, or the error's code in code */
static int probe_call(struct lfs_lib **lib, struct lfs_lib_opts *o, const char *op, json_t *args,
		      json_t **res, const char **code)
{
	int r;

	if (!*lib)
		*lib = probe_connect(o);
	if (!*lib) {
		*code = "ENOTCONN";
		return -ENOTCONN;
	}
	r = lfs_lib_call(*lib, op, args, res);
	if (r < 0) {
		*code = lfs_lib_errcode(*lib) ?: "EIO";
		if (!lfs_lib_connected(*lib) || r == -EREMOTE) {
			/* the code points into the connection: keep a copy */
			static char keep[32];

			snprintf(keep, sizeof(keep), "%s", *code);
			*code = keep;
			lfs_lib_close(*lib);
			*lib = NULL;
		}
	}
	return r;
}

/* one request, its outcome printed: "A SENT MS OP NAME" or "E SENT MS OP NAME CODE" */
static int step(struct lfs_lib **lib, struct lfs_lib_opts *o, const char *op, const char *name,
		json_t *args, json_t **res)
{
	long long sent = wall_ms();
	const char *code;
	int r;

	r = probe_call(lib, o, op, args, res, &code);
	if (r == 0)
		printf("A %lld %lld %s %s\n", sent, wall_ms(), op, name);
	else
		printf("E %lld %lld %s %s %s\n", sent, wall_ms(), op, name, code);
	json_decref(args);
	return r;
}

/* cycles: create a shelf of one book, destroy it, report its book zeroed */
static int do_write(struct lfs_lib_opts *o, const char *prefix)
{
	struct lfs_lib *lib = NULL;
	json_t *res, *map;
	char name[128];
	long i;

	for (i = 0;; i++) {
		snprintf(name, sizeof(name), "%s-%ld", prefix, i);
		res = NULL;
		if (step(&lib, o, "shelf.create", name,
			 json_pack("{s:s, s:i}", "name", name, "books", 1), &res) == 0 &&
		    step(&lib, o, "shelf.destroy", name, json_pack("{s:s}", "name", name), NULL) ==
			    0) {
			map = json_object_get(res, "map");
			step(&lib, o, "zombie.zeroed", name, json_pack("{s:O}", "books", map),
			     NULL);
		}
		json_decref(res);
		if (!lib)
			nap_ms(50);
	}
	return 0;
}

static int do_beat(struct lfs_lib_opts *o, int interval)
{
	struct lfs_lib *lib = NULL;
	long long newest = 0, epoch, sent;
	const char *code;
	json_t *res;
	int r, n = 0;

	o->reply_timeout_ms = interval;
	o->connect_timeout_ms = interval;
	for (;;) {
		res = NULL;
		sent = wall_ms();
		r = probe_call(&lib, o, "heartbeat", NULL, &res, &code);
		epoch = r == 0 ? json_integer_value(json_object_get(res, "epoch")) : -1;
		json_decref(res);
		if (r == 0 && epoch >= newest) {
			newest = epoch;
			printf("H %lld %lld %lld\n", sent, wall_ms(), epoch);
			nap_ms(interval);
			continue;
		}
		printf("F %lld %lld %s\n", sent, wall_ms(), r == 0 ? "stale-epoch" : code);
		if (lib) {
			lfs_lib_close(lib);
			lib = NULL;
		}
		o->start = ++n; /* the next address first */
		nap_ms(250);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lfs_lib_opts o = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc != 6 || (strcmp(argv[1], "write") && strcmp(argv[1], "beat"))) {
		fprintf(stderr, "usage: lib-probe write ADDRS NODE KEY PREFIX\n"
				"       lib-probe beat ADDRS NODE KEY INTERVAL_MS\n");
		return 2;
	}
	o.addr = argv[2];
	o.node = argv[3];
	o.key_file = argv[4];
	o.connect_timeout_ms = 2000;
	o.reply_timeout_ms = 5000;
	if (!strcmp(argv[1], "write"))
		return do_write(&o, argv[5]);
	return do_beat(&o, atoi(argv[5]) > 0 ? atoi(argv[5]) : 1000);
}
