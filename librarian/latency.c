// SPDX-License-Identifier: GPL-2.0
/*
 * Request latencies per operation (docs/METRICS.md,
 * lfs_librarian_request_duration_seconds): from the read that brought a
 * request off its socket to the moment its reply may leave, after the
 * round's commit. lib_latency_request() keeps each request of the round,
 * lib_latency_round_end() counts them once the commit is over, into a
 * histogram per operation. The event loop alone calls these, and writes
 * the metrics' text (metrics_text.c), so nothing here takes a lock.
 * Heartbeats answered by the lease thread are not timed here (they do not
 * wait for a commit): lfs_librarian_heartbeats_total counts them.
 */
#include <stdlib.h>
#include <time.h>

#include "librarian.h"

/* upper bounds of the buckets, in microseconds (Prometheus' le, in seconds) */
static const int64_t bounds_us[LIB_LAT_BUCKETS] = { 500,   1000,   2500,   5000,    10000,  25000,
						    50000, 100000, 250000, 1000000, 2500000 };

struct lib_latency {
	struct lib_lat_hist *op; /* per operation, then "other" */
	int nops;
	struct {
		int op;
		int64_t read_us;
	} * round; /* the round's requests, until its commit */
	int nround, cap;
};

int64_t lib_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* nops operations (dispatch.c's table), and a histogram for requests of none. */
int lib_latency_init(struct lib_server *srv, int nops)
{
	struct lib_latency *l = calloc(1, sizeof(*l));

	if (!l)
		return -1;
	l->nops = nops + 1;
	l->op = calloc(l->nops, sizeof(*l->op));
	if (!l->op) {
		free(l);
		return -1;
	}
	srv->latency = l;
	return 0;
}

void lib_latency_free(struct lib_server *srv)
{
	if (!srv->latency)
		return;
	free(srv->latency->op);
	free(srv->latency->round);
	free(srv->latency);
	srv->latency = NULL;
}

static void observe(struct lib_lat_hist *h, int64_t us)
{
	int b = 0;

	while (b < LIB_LAT_BUCKETS && us > bounds_us[b])
		b++;
	h->bucket[b]++;
	h->count++;
	h->sum_us += us;
}

/* A request of operation op (-1: none known) read at read_us; counted at the round's end. */
void lib_latency_request(struct lib_server *srv, int op, int64_t read_us)
{
	struct lib_latency *l = srv->latency;

	if (!l || read_us <= 0)
		return;
	if (op < 0 || op >= l->nops - 1)
		op = l->nops - 1;
	if (l->nround == l->cap) {
		int cap = l->cap ? 2 * l->cap : 256;
		void *p = realloc(l->round, cap * sizeof(*l->round));

		if (!p) { /* counted now, without the commit's share */
			observe(&l->op[op], lib_mono_us() - read_us);
			return;
		}
		l->round = p;
		l->cap = cap;
	}
	l->round[l->nround].op = op;
	l->round[l->nround++].read_us = read_us;
}

void lib_latency_round_end(struct lib_server *srv)
{
	struct lib_latency *l = srv->latency;
	int64_t now;

	if (!l || !l->nround)
		return;
	now = lib_mono_us();
	for (int i = 0; i < l->nround; i++)
		observe(&l->op[l->round[i].op], now - l->round[i].read_us);
	l->nround = 0;
}

/* Operation i's histogram (i == nops: requests of no known operation). */
const struct lib_lat_hist *lib_latency_hist(struct lib_server *srv, int i)
{
	return srv->latency && i >= 0 && i < srv->latency->nops ? &srv->latency->op[i] : NULL;
}

int64_t lib_latency_bound_us(int b)
{
	return b >= 0 && b < LIB_LAT_BUCKETS ? bounds_us[b] : -1;
}
