// SPDX-License-Identifier: GPL-2.0
/*
 * The node and the fabric: auth, geometry, stats, heartbeat and
 * node.set_state (admin). Any request from a node renews its lease
 * (lib_node_seen); heartbeat says so explicitly and reports what the node has
 * to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

int lib_op_auth(struct req *rq)
{
	const char *node;
	char b[100];
	int r = lib_arg_str(rq, "node", false, &node);

	if (r < 0)
		return r;
	if (node && (rq->who->tls || *rq->authed)) {
		/* over TLS the identity is the PSK identity; it cannot change */
		if (strcmp(node, rq->who->name))
			return FAIL(rq, EACCES, "connection is authenticated as '%s', not '%s'",
				    rq->who->name, lib_shown(node, b, sizeof(b)));
	} else if (node && strcmp(node, rq->who->name)) {
		/* local (unix socket) administration may act as a node */
		int k = lib_config_find_node(rq->c, node);

		if (k < 0)
			return FAIL(rq, ENOENT, "no node named '%s' in the fabric",
				    lib_shown(node, b, sizeof(b)));
		snprintf(rq->who->name, sizeof(rq->who->name), "%s", node);
		rq->who->node = k;
		rq->who->admin = false;
	}
	*rq->authed = true;
	lib_node_seen(rq->srv, rq->who->node);
	rq->result = json_pack("{s:s,s:b,s:I,s:i,s:i,s:i,s:s}", "node", rq->who->name, "admin",
			       rq->who->admin, "book_size", (json_int_t)rq->c->book_size,
			       "heartbeat_interval", rq->c->heartbeat_interval, "lease_time",
			       rq->c->lease_time, "protocol", LFS_PROTOCOL_VERSION, "server",
			       "librarian " LFS_VERSION);
	return 0;
}

static int set_free(void *arg, int64_t ig, int64_t n)
{
	char k[24];

	snprintf(k, sizeof(k), "%lld", (long long)ig);
	json_object_set_new(arg, k, json_integer(n));
	return 0;
}

/* A node of the geometry: its state, liveness and IGs with their free books. */
static json_t *geometry_node(struct req *rq, int ni, json_t *free_by_ig, int64_t now)
{
	const struct lib_config *c = rq->c;
	const struct lib_node *n = &c->nodes[ni];
	json_t *igs = json_array();

	for (int g = 0; g < n->nigs; g++) {
		const struct lib_ig *ig = &c->igs[n->igs[g]];
		char k[24];

		snprintf(k, sizeof(k), "%u", ig->ig);
		json_array_append_new(
			igs, json_pack("{s:I,s:I,s:I}", "ig", (json_int_t)ig->ig, "books",
				       (json_int_t)ig->books, "free",
				       json_integer_value(json_object_get(free_by_ig, k))));
	}
	return json_pack("{s:s,s:s,s:s,s:b,s:I,s:o}", "name", n->name, "power_domain",
			 c->powers[n->power], "state",
			 rq->s->node_offline[ni] ? "offline" : "online", "alive",
			 now - rq->srv->last_seen[ni] <= c->lease_time, "last_seen_ago",
			 (json_int_t)(now - rq->srv->last_seen[ni]), "igs", igs);
}

static json_t *geometry_enclosure(struct req *rq, int ei, json_t *free_by_ig, int64_t now)
{
	const struct lib_config *c = rq->c;
	json_t *nodes = json_array();

	for (int ni = 0; ni < c->nnodes; ni++)
		if (c->nodes[ni].enc == ei)
			json_array_append_new(nodes, geometry_node(rq, ni, free_by_ig, now));
	return json_pack("{s:s,s:o}", "name", c->encs[ei].name, "nodes", nodes);
}

int lib_op_geometry(struct req *rq)
{
	const struct lib_config *c = rq->c;
	json_t *racks = json_array(), *free_by_ig = json_object();
	int64_t now = lib_now_mono();
	int r = lib_store_ig_free_all(rq->s, set_free, free_by_ig, &rq->err);

	if (r < 0) {
		json_decref(racks);
		json_decref(free_by_ig);
		return r;
	}
	for (int ri = 0; ri < c->nracks; ri++) {
		json_t *encs = json_array();

		for (int ei = 0; ei < c->nencs; ei++)
			if (c->encs[ei].rack == ri)
				json_array_append_new(encs,
						      geometry_enclosure(rq, ei, free_by_ig, now));
		json_array_append_new(racks, json_pack("{s:s,s:o}", "name", c->racks[ri],
						       "enclosures", encs));
	}
	json_decref(free_by_ig);
	rq->result = json_pack("{s:I,s:I,s:o}", "book_size", (json_int_t)c->book_size,
			       "total_books", (json_int_t)c->total_books, "racks", racks);
	return 0;
}

/* The database's own work counters: load-independent cost measures. */
static json_t *db_counters(struct lib_store *s)
{
	struct lib_db_stats d;
	unsigned long long wal_writes, wal_calls;

	lib_store_db_stats(s, &d);
	lib_wal_vfs_stats(&wal_writes, &wal_calls);
	return json_pack("{s:i,s:i,s:i,s:I,s:I,s:I}", "cache_hit", d.cache_hit, "cache_miss",
			 d.cache_miss, "cache_write", d.cache_write, "vm_steps",
			 (json_int_t)d.vm_steps, "wal_writes", (json_int_t)wal_writes,
			 "wal_write_calls", (json_int_t)wal_calls);
}

int lib_op_stats(struct req *rq)
{
	struct lib_counts n = { 0 };
	int64_t total = rq->c->total_books;
	int r = lib_store_counts(rq->s, &n, &rq->err);

	if (r < 0)
		return r;
	rq->result = json_pack("{s:{s:I,s:I,s:I,s:I,s:I},s:I,s:I,s:i,s:I,s:I,s:o}", "books",
			       "total", (json_int_t)total, "free", (json_int_t)n.free, "inuse",
			       (json_int_t)n.inuse, "zombie", (json_int_t)n.zombie, "offline",
			       (json_int_t)(total - n.free - n.inuse - n.zombie), "shelves",
			       (json_int_t)n.shelves, "activations", (json_int_t)n.activations,
			       "connections", rq->srv->nconns, "requests",
			       (json_int_t)rq->srv->requests, "uptime",
			       (json_int_t)(lib_now_mono() - rq->srv->started), "db",
			       db_counters(rq->s));
	return 0;
}

static int append_held(void *arg, const struct lib_activation *a)
{
	json_array_append_new(arg, json_pack("{s:s,s:s}", "name", a->shelf, "mode", a->mode));
	return 0;
}

/* ZOMBIE books in the node's IGs: what it has to zero. */
static int64_t zombie_count(struct req *rq, int node)
{
	const struct lib_node *n = &rq->c->nodes[node];
	int64_t total = 0;

	for (int g = 0; g < n->nigs; g++) {
		int64_t z =
			lib_store_ig_count(rq->s, rq->c->igs[n->igs[g]].ig, BOOK_ZOMBIE, &rq->err);

		if (z < 0)
			return z;
		total += z;
	}
	return total;
}

int lib_op_heartbeat(struct req *rq)
{
	json_t *acts;
	int64_t zombies;
	int node, r = lib_arg_node(rq, true, &node);

	if (r < 0)
		return r;
	lib_node_seen(rq->srv, node);
	acts = json_array();
	r = lib_store_activations_of_node(rq->s, rq->c->nodes[node].name, append_held, acts,
					  &rq->err);
	zombies = r < 0 ? r : zombie_count(rq, node);
	if (zombies < 0) {
		json_decref(acts);
		return zombies;
	}
	rq->result = json_pack("{s:s,s:i,s:i,s:o,s:I}", "node", rq->c->nodes[node].name,
			       "lease_time", rq->c->lease_time, "heartbeat_interval",
			       rq->c->heartbeat_interval, "activations", acts, "zombies",
			       (json_int_t)zombies);
	return 0;
}

/*
 * Offline: the node's FREE books become OFFLINE and its activations end (an
 * offline node is fenced); online: its OFFLINE books become FREE. Either way
 * its free books are no longer known zero and check tokens for its IGs are
 * void. The in-memory state changes after the commit (dispatch.c).
 */
int lib_op_node_set_state(struct req *rq)
{
	const struct lib_node *n;
	const char *state;
	bool off;
	int node, r;

	if ((r = lib_arg_node(rq, true, &node)) < 0 ||
	    (r = lib_arg_str(rq, "state", true, &state)) < 0)
		return r;
	if (strcmp(state, "online") && strcmp(state, "offline"))
		return FAIL(rq, EINVAL, "state '%.20s' must be \"online\" or \"offline\"", state);
	off = !strcmp(state, "offline");
	n = &rq->c->nodes[node];
	for (int g = 0; g < n->nigs && r == 0; g++) {
		lib_store_ig_changed(rq->s, n->igs[g]);
		r = lib_store_ig_set_offline(rq->s, rq->c->igs[n->igs[g]].ig, off, &rq->err);
	}
	if (r == 0)
		r = lib_store_node_put_state(rq->s, n->name, off, &rq->err);
	if (r == 0 && off)
		r = lib_store_activations_end_node(rq->s, n->name, &rq->err);
	if (r < 0)
		return r;
	rq->pending_node = node;
	rq->pending_offline = off;
	rq->result = json_pack("{s:s,s:s}", "node", n->name, "state", state);
	return 0;
}
