// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics' text (docs/METRICS.md lists each): the Prometheus text
 * exposition format, written by the event loop once a second and handed
 * to the metrics thread (metrics.c). The catalogue's counts are read only
 * while this librarian leads (or alone, on SQLite): a standby reports its
 * role and its own counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "server.h"

/* one metric: its HELP and TYPE lines, then the caller's samples */
static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, long long v)
{
	head(f, name, type, help);
	fprintf(f, "%s %lld\n", name, v);
}

struct ig_text {
	FILE *f;
	const struct lib_config *cfg;
};

static int ig_row(void *arg, int64_t ig, int64_t free, int64_t zero)
{
	static const char *const st[] = { "free", "free_known_zero", "total" };
	struct ig_text *t = arg;
	int k = lib_config_find_ig(t->cfg, ig);
	long long v[3] = { free, zero, 0 };

	if (k < 0) /* an IG no longer configured: lfs_books counts its books offline */
		return 0;
	v[2] = (long long)t->cfg->igs[k].books;
	for (int i = 0; i < 3; i++)
		fprintf(t->f, "lfs_ig_books{ig=\"%lld\",node=\"%s\",state=\"%s\"} %lld\n",
			(long long)ig, t->cfg->nodes[t->cfg->igs[k].node].name, st[i], v[i]);
	return 0;
}

/* Books per interleave group: free, free and known zero (may be allocated), all. */
static void igs(FILE *f, struct lib_server *srv)
{
	struct ig_text t = { f, srv->cfg };
	struct lib_err e = { 0 };

	head(f, "lfs_ig_books", "gauge",
	     "Books of each interleave group: free, free and known zero, total.");
	lib_store_igs_each(srv->store, ig_row, &t, &e);
}

static void catalogue(FILE *f, struct lib_server *srv)
{
	static const char *const st[] = { "online", "fencing", "offline" };
	struct lib_counts n = { 0 };
	struct lib_err e = { 0 };
	int64_t total = srv->cfg->total_books;
	int nodes[3] = { 0 };

	if (lib_store_counts(srv->store, &n, &e) < 0)
		return;
	head(f, "lfs_books", "gauge", "Books of the fabric by state.");
	fprintf(f,
		"lfs_books{state=\"free\"} %lld\nlfs_books{state=\"inuse\"} %lld\n"
		"lfs_books{state=\"zombie\"} %lld\nlfs_books{state=\"offline\"} %lld\n"
		"lfs_books{state=\"bad\"} %lld\n",
		(long long)n.free, (long long)n.inuse, (long long)n.zombie,
		(long long)(total - n.free - n.inuse - n.zombie - n.bad), (long long)n.bad);
	one(f, "lfs_books_free_known_zero", "gauge",
	    "Free books known to read as zeroes (may be allocated).", n.zero);
	one(f, "lfs_fabric_books", "gauge", "Books of the fabric.", total);
	one(f, "lfs_shelves", "gauge", "Shelves in the catalogue.", n.shelves);
	one(f, "lfs_activations", "gauge", "Activations of shelves by nodes (leases held).",
	    n.activations);
	for (int i = 0; i < srv->cfg->nnodes; i++)
		nodes[srv->store->node_state[i] % 3]++;
	head(f, "lfs_nodes", "gauge", "Nodes by state (fencing: set offline while still live).");
	for (int i = 0; i < 3; i++)
		fprintf(f, "lfs_nodes{state=\"%s\"} %d\n", st[i], nodes[i]);
	one(f, "lfs_nodes_fencing_now", "gauge", "Nodes whose fence_command is running now.",
	    srv->nfencing);
	igs(f, srv);
}

/* Request latencies per operation (latency.c): a histogram each, for those that ran. */
static void latencies(FILE *f, struct lib_server *srv)
{
	const char *m = "lfs_librarian_request_duration_seconds";

	head(f, m, "histogram",
	     "Requests by operation, from their read to their reply's release after the commit.");
	for (int i = 0; i <= lib_op_count(); i++) {
		const struct lib_lat_hist *h = lib_latency_hist(srv, i);
		const char *op = lib_op_name(i);
		uint64_t n = 0;

		if (!h || !h->count)
			continue;
		for (int b = 0; b < LIB_LAT_BUCKETS; b++) {
			n += h->bucket[b];
			fprintf(f, "%s_bucket{op=\"%s\",le=\"%g\"} %llu\n", m, op,
				lib_latency_bound_us(b) / 1e6, (unsigned long long)n);
		}
		fprintf(f, "%s_bucket{op=\"%s\",le=\"+Inf\"} %llu\n", m, op,
			(unsigned long long)h->count);
		fprintf(f, "%s_sum{op=\"%s\"} %.6f\n", m, op, h->sum_us / 1e6);
		fprintf(f, "%s_count{op=\"%s\"} %llu\n", m, op, (unsigned long long)h->count);
	}
}

static void serving(FILE *f, struct lib_server *srv, uint64_t scrapes)
{
	static const char *const le[] = { "1ms", "10ms", "100ms", "longer" };

	one(f, "lfs_librarian_requests_total", "counter", "Requests handled by the event loop.",
	    (long long)srv->requests);
	one(f, "lfs_librarian_heartbeats_total", "counter",
	    "Heartbeats answered by the lease thread.",
	    (long long)__atomic_load_n(&srv->beats, __ATOMIC_RELAXED));
	head(f, "lfs_librarian_connections", "gauge", "Open connections by kind.");
	fprintf(f,
		"lfs_librarian_connections{kind=\"unauthenticated\"} %d\n"
		"lfs_librarian_connections{kind=\"admin\"} %d\n"
		"lfs_librarian_connections{kind=\"node\"} %d\n",
		srv->nunauth, srv->nadmin, srv->nconns - srv->nunauth - srv->nadmin);
	head(f, "lfs_librarian_connection_limit", "gauge",
	     "Connection budgets (librarian.conf): open connections beyond them are refused.");
	fprintf(f,
		"lfs_librarian_connection_limit{kind=\"unauthenticated\"} %d\n"
		"lfs_librarian_connection_limit{kind=\"unauthenticated_per_address\"} %d\n"
		"lfs_librarian_connection_limit{kind=\"authenticated\"} %d\n"
		"lfs_librarian_connection_limit{kind=\"per_node\"} %d\n"
		"lfs_librarian_connection_limit{kind=\"admin\"} %d\n",
		srv->cfg->max_unauth, srv->cfg->max_unauth_per_addr, srv->cfg->max_connections,
		srv->cfg->max_conn_per_node, srv->cfg->max_admin);
	head(f, "lfs_librarian_rounds_total", "counter",
	     "Event-loop rounds by duration (under 1 ms, 10 ms, 100 ms, longer).");
	for (int i = 0; i < 4; i++)
		fprintf(f, "lfs_librarian_rounds_total{under=\"%s\"} %llu\n", le[i],
			(unsigned long long)srv->rounds[i]);
	head(f, "lfs_librarian_round_max_seconds", "gauge", "The longest event-loop round.");
	fprintf(f, "lfs_librarian_round_max_seconds %.6f\n", srv->round_max_us / 1e6);
	if (srv->audit) {
		json_t *a = lib_audit_stats(srv);

		one(f, "lfs_librarian_audit_records_total", "counter", "Audit trail lines written.",
		    json_integer_value(json_object_get(a, "records")));
		one(f, "lfs_librarian_audit_errors_total", "counter",
		    "Audit trail lines that could not be written.",
		    json_integer_value(json_object_get(a, "errors")));
		json_decref(a);
	}
	one(f, "lfs_librarian_leader", "gauge",
	    "1 while this librarian serves (leader, or alone on SQLite), 0 as a standby.",
	    lib_leader_leading(srv->leader));
	one(f, "lfs_librarian_epoch", "gauge", "Its leader epoch (0: a standby or SQLite).",
	    lib_leader_epoch(srv->leader));
	one(f, "lfs_librarian_uptime_seconds", "gauge", "Seconds since it started.",
	    lib_now_mono() - srv->started);
	one(f, "lfs_librarian_scrapes_total", "counter", "Scrapes served before this snapshot.",
	    (long long)scrapes);
}

void lib_metrics_publish(struct lib_server *srv)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!srv->metrics || !(f = open_memstream(&text, &len)))
		return;
	if (lib_leader_leading(srv->leader) && !srv->batch_open)
		catalogue(f, srv);
	serving(f, srv, lib_metrics_scrapes(srv));
	latencies(f, srv);
	if (fclose(f) == 0)
		lib_metrics_set(srv, text, len);
	else
		free(text);
}
