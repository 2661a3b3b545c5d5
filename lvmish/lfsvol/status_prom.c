// SPDX-License-Identifier: GPL-2.0
/*
 * status --prometheus: the node's status (the object `status --json`
 * prints) as Prometheus metrics in the text format, for node_exporter's
 * textfile collector (docs/METRICS.md, "The node"): the kernel's lease and
 * fence latency, the fabric's IGs, the shelves by state, the agent's
 * zeroing and renewals.
 */
#include <stdio.h>
#include <string.h>

#include "lfsvol.h"

static void head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(const char *name, const char *type, const char *help, double v)
{
	head(name, type, help);
	printf("%s %.9g\n", name, v);
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void lease_prom(json_t *l)
{
	json_t *f = json_object_get(l, "fence_latency");

	if (!json_is_object(l))
		return;
	one("lfs_node_lease_enforced", "gauge", "1 while the kernel enforces a lease.",
	    json_is_true(json_object_get(l, "enforced")));
	one("lfs_node_lease_seconds", "gauge", "The lease's length.", num(l, "lease_ms") / 1e3);
	one("lfs_node_lease_left_seconds", "gauge", "Time left before the lease lapses.",
	    num(l, "left_ms") / 1e3);
	one("lfs_node_lease_expired", "gauge", "1 when the lease has lapsed (objects fenced).",
	    json_is_true(json_object_get(l, "expired")));
	one("lfs_node_fenced_objects", "gauge", "Shelves and files the kernel fenced.",
	    num(l, "fenced"));
	one("lfs_node_fence_lapses_total", "counter", "Lapses of the lease (fences run).",
	    num(f, "count"));
	one("lfs_node_fence_latency_last_seconds", "gauge",
	    "Deadline to every covered object refusing, at the last lapse.",
	    num(f, "last_ns") / 1e9);
	one("lfs_node_fence_latency_max_seconds", "gauge",
	    "Deadline to every covered object refusing, the longest.", num(f, "max_ns") / 1e9);
}

static void fabric_prom(json_t *fab, json_t *active, json_t *fenced)
{
	size_t i;
	json_t *ig;

	head("lfs_node_ig_books", "gauge", "Books of each IG attached to this node.");
	json_array_foreach(fab, i, ig)
		printf("lfs_node_ig_books{ig=\"%lld\",path=\"%s\"} %lld\n",
		       (long long)num(ig, "ig"), json_string_value(json_object_get(ig, "path")),
		       (long long)num(ig, "books"));
	head("lfs_node_ig_books_used", "gauge", "Books of each IG in this node's active shelves.");
	json_array_foreach(fab, i, ig)
		printf("lfs_node_ig_books_used{ig=\"%lld\",path=\"%s\"} %lld\n",
		       (long long)num(ig, "ig"), json_string_value(json_object_get(ig, "path")),
		       (long long)num(ig, "books_used"));
	head("lfs_node_shelves", "gauge", "Shelves the kernel presents, by state.");
	printf("lfs_node_shelves{state=\"active\"} %zu\nlfs_node_shelves{state=\"fenced\"} %zu\n",
	       json_array_size(active) - json_array_size(fenced), json_array_size(fenced));
}

static void agent_prom(json_t *a)
{
	json_t *z = json_object_get(a, "zeroing"), *r = json_object_get(a, "renewal");

	one("lfs_agent_up", "gauge", "1 if the node agent's state file was read.",
	    json_is_object(a));
	if (!json_is_object(a))
		return;
	one("lfs_agent_zeroed_books_total", "counter", "Books the agent zeroed.", num(a, "zeroed"));
	one("lfs_agent_zombie_books_pending", "gauge", "Freed books waiting for it to zero them.",
	    num(a, "zombies_pending"));
	one("lfs_agent_zeroing_done_books", "gauge", "Books done in the current zeroing pass.",
	    num(z, "done"));
	one("lfs_agent_zeroing_total_books", "gauge", "Books in the current zeroing pass.",
	    num(z, "total"));
	if (!json_is_object(r))
		return;
	one("lfs_agent_renewals_total", "counter", "Lease renewals.", num(r, "renewals"));
	one("lfs_agent_renewals_late_total", "counter",
	    "Renewals that came more than an interval + 1 s after the one before.", num(r, "late"));
	one("lfs_agent_renewal_longest_gap_seconds", "gauge", "The longest gap between renewals.",
	    num(r, "longest_gap_ms") / 1e3);
	one("lfs_agent_last_renewal_timestamp_seconds", "gauge", "When the last renewal was.",
	    num(r, "last_renewal"));
	one("lfs_agent_heartbeat_rtt_seconds", "gauge",
	    "The last heartbeat's round trip: its send to the renewal on its acknowledgement or reply.",
	    num(r, "heartbeat_rtt_last_us") / 1e6);
	one("lfs_agent_heartbeat_rtt_max_seconds", "gauge", "The longest heartbeat round trip.",
	    num(r, "heartbeat_rtt_max_us") / 1e6);
}

void lfsvol_status_prometheus(json_t *st)
{
	one("lfs_node_driver_loaded", "gauge", "1 if lfs.ko is loaded.",
	    !strcmp(json_string_value(json_object_get(st, "driver")) ?: "", "loaded"));
	lease_prom(json_object_get(st, "lease"));
	fabric_prom(json_object_get(st, "fabric"), json_object_get(st, "active"),
		    json_object_get(st, "fenced"));
	agent_prom(json_object_get(st, "agent"));
}
