// SPDX-License-Identifier: GPL-2.0
/*
 * The node and the fabric: auth, geometry, stats, heartbeat and
 * node.set_state (admin). Any request from a node counts as hearing from it
 * (dispatch.c, lease.c); heartbeat exists for that and reports what the node
 * has to do: which activations it holds, the lease, the books to zero.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

/*
 * Who serves (docs/HA.md, "Nodes follow the leader"): "single" for the
 * embedded store; with the leader row "leader" or "standby", the epoch this
 * librarian leads (0 for a standby) and the leader as a standby's EREMOTE
 * names it. A node's agent renews its lease only on a leader's replies then.
 */
static int auth_role(struct req *rq)
{
	struct lib_leader *l = rq->srv ? rq->srv->leader : NULL;
	int64_t epoch = lib_leader_epoch(l);

	if (!l) {
		json_object_set_new(rq->result, "role", json_string("single"));
		return 0;
	}
	json_object_set_new(rq->result, "role", json_string(epoch ? "leader" : "standby"));
	json_object_set_new(rq->result, "epoch", json_integer(epoch));
	json_object_set_new(rq->result, "leader", lib_leader_json(rq->srv));
	return 0;
}

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
	rq->result = json_pack("{s:s,s:b,s:I,s:i,s:i,s:i,s:s,s:s,s:i,s:s}", "node", rq->who->name,
			       "admin", rq->who->admin, "book_size", (json_int_t)rq->c->book_size,
			       "heartbeat_interval", rq->c->heartbeat_interval, "lease_time",
			       rq->c->lease_time, "fence_grace", rq->c->fence_grace, "fabric_uuid",
			       rq->s->fabric_uuid, "default_policy",
			       lfs_policy_name(rq->c->default_policy), "protocol",
			       LFS_PROTOCOL_VERSION, "server", "librarian " LFS_VERSION);
	return rq->result ? auth_role(rq) : FAIL(rq, ENOMEM, "out of memory");
}

static int set_free(void *arg, int64_t ig, int64_t free, int64_t zero)
{
	char k[24];

	snprintf(k, sizeof(k), "%lld", (long long)ig);
	json_object_set_new(arg, k, json_pack("[II]", (json_int_t)free, (json_int_t)zero));
	return 0;
}

static const char *node_state_name(struct req *rq, int ni)
{
	static const char *const names[] = { "online", "fencing", "offline" };

	return names[(int)rq->s->node_state[ni]];
}

/* A node of the geometry: its state, liveness and IGs with their free books. */
static json_t *geometry_node(struct req *rq, int ni, json_t *free_by_ig, int64_t now)
{
	const struct lib_config *c = rq->c;
	const struct lib_node *n = &c->nodes[ni];
	json_t *igs = json_array();

	for (int g = 0; g < n->nigs; g++) {
		const struct lib_ig *ig = &c->igs[n->igs[g]];
		json_t *fz;
		char k[24];

		snprintf(k, sizeof(k), "%u", ig->ig);
		fz = json_object_get(free_by_ig, k);
		json_array_append_new(igs,
				      json_pack("{s:I,s:I,s:I,s:I}", "ig", (json_int_t)ig->ig,
						"books", (json_int_t)ig->books, "free",
						json_integer_value(json_array_get(fz, 0)), "zero",
						json_integer_value(json_array_get(fz, 1))));
	}
	return json_pack("{s:s,s:s,s:s,s:b,s:I,s:o}", "name", n->name, "power_domain",
			 c->powers[n->power], "state", node_state_name(rq, ni), "alive",
			 lib_node_live_ms(rq->srv, ni) > 0, "last_seen_ago",
			 (json_int_t)((now - rq->srv->heard[ni]) / 1000), "igs", igs);
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
	int64_t now = lib_svc_now(rq->srv);
	int r = lib_store_igs_each(rq->s, set_free, free_by_ig, &rq->err);

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

/* Nothing: the reply shows the session is alive (clients probe an idle one before a change). */
int lib_op_ping(struct req *rq)
{
	rq->result = json_object();
	return 0;
}

/* The database's own work counters: load-independent cost measures. */
static json_t *db_counters(struct lib_store *s)
{
	struct lib_db_stats d;
	unsigned long long wal_writes, wal_calls;

	lib_store_db_stats(s, &d);
	lib_wal_vfs_stats(&wal_writes, &wal_calls);
	return json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:I}", "cache_hit", d.cache_hit, "cache_miss",
			 d.cache_miss, "cache_write", d.cache_write, "vm_steps",
			 (json_int_t)d.vm_steps, "wal_writes", (json_int_t)wal_writes,
			 "wal_write_calls", (json_int_t)wal_calls, "round_trips",
			 (json_int_t)d.round_trips);
}

static int stmt_stat(void *arg, const char *sql, int64_t runs, int64_t steps)
{
	json_array_append_new(arg, json_pack("{s:s,s:I,s:I}", "sql", sql, "runs", (json_int_t)runs,
					     "vm_steps", (json_int_t)steps));
	return 0;
}

/* With "statements": true, db.statements: each cached statement's runs and VM steps. */
int lib_op_stats(struct req *rq)
{
	struct lib_counts n = { 0 };
	int64_t total = rq->c->total_books;
	bool stmts = false;
	json_t *db;
	int r = lib_arg_bool(rq, "statements", &stmts);

	if (r == 0)
		r = lib_store_counts(rq->s, &n, &rq->err);
	if (r < 0)
		return r;
	db = db_counters(rq->s);
	if (stmts && db) {
		json_t *a = json_array();

		lib_store_stmt_stats(rq->s, stmt_stat, a);
		json_object_set_new(db, "statements", a);
	}
	rq->result = json_pack(
		"{s:{s:I,s:I,s:I,s:I,s:I,s:I},s:I,s:I,s:I,s:i,s:{s:i,s:i,s:i},s:I,s:I,s:o}",
		"books", "total", (json_int_t)total, "free", (json_int_t)n.free, "inuse",
		(json_int_t)n.inuse, "zombie", (json_int_t)n.zombie, "offline",
		(json_int_t)(total - n.free - n.inuse - n.zombie - n.bad), "bad", (json_int_t)n.bad,
		"free_known_zero", (json_int_t)n.zero, "shelves", (json_int_t)n.shelves,
		"activations", (json_int_t)n.activations, "connections", rq->srv->nconns,
		"connections_by_kind", "unauthenticated", rq->srv->nunauth, "admin",
		rq->srv->nadmin, "nodes", rq->srv->nconns - rq->srv->nunauth - rq->srv->nadmin,
		"requests", (json_int_t)rq->srv->requests, "uptime",
		(json_int_t)(lib_now_mono() - rq->srv->started), "db", db);
	json_object_set_new(rq->result, "audit", lib_audit_stats(rq->srv));
	json_object_set_new(
		rq->result, "lease_thread",
		json_pack("{s:I,s:i}", "heartbeats",
			  (json_int_t)__atomic_load_n(&rq->srv->beats, __ATOMIC_RELAXED),
			  "connections", __atomic_load_n(&rq->srv->beat_conns, __ATOMIC_RELAXED)));
	json_object_set_new(rq->result, "loop",
			    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "rounds_under_1ms",
				      (json_int_t)rq->srv->rounds[0], "rounds_under_10ms",
				      (json_int_t)rq->srv->rounds[1], "rounds_under_100ms",
				      (json_int_t)rq->srv->rounds[2], "rounds_longer",
				      (json_int_t)rq->srv->rounds[3], "longest_round_us",
				      (json_int_t)rq->srv->round_max_us, "longest_round_cpu_us",
				      (json_int_t)rq->srv->round_max_cpu_us));
	return 0;
}

static int append_held(void *arg, const struct lib_activation *a)
{
	json_array_append_new(arg, json_pack("{s:s,s:s,s:s}", "name", a->shelf, "mode", a->mode,
					     "uuid", a->uuid ?: ""));
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

/*
 * The caller's activations and the lease. "lease": false makes it a probe:
 * answered but not counted (the agent of a node that was set offline
 * probes until it is accepted again). An offline or fencing node's heartbeat
 * is refused (dispatch.c; here for the admin's on behalf of one).
 */
int lib_op_heartbeat(struct req *rq)
{
	json_t *acts, *lease = json_object_get(rq->args, "lease");
	int64_t zombies;
	int node, r = lib_arg_node(rq, true, &node);

	if (r < 0)
		return r;
	if (lease && !json_is_boolean(lease))
		return FAIL(rq, EINVAL, "argument 'lease' must be true or false");
	if (rq->s->node_state[node] != NODE_ONLINE)
		return FAIL(rq, EACCES, "node '%s' is offline (set by the admin)",
			    rq->c->nodes[node].name);
	if (rq->who->admin && !json_is_false(lease))
		lib_node_heard(rq->srv, node, rq->read_at);
	acts = json_array();
	r = lib_store_activations_of_node(rq->s, rq->c->nodes[node].name, append_held, acts,
					  &rq->err);
	zombies = r < 0 ? r : zombie_count(rq, node);
	if (zombies < 0) {
		json_decref(acts);
		return zombies;
	}
	rq->result = json_pack("{s:s,s:i,s:i,s:i,s:o,s:I}", "node", rq->c->nodes[node].name,
			       "lease_time", rq->c->lease_time, "fence_grace", rq->c->fence_grace,
			       "heartbeat_interval", rq->c->heartbeat_interval, "activations", acts,
			       "zombies", (json_int_t)zombies);
	/* the epoch this read was checked against (store_leader.c); 0: no leader row */
	if (rq->result && rq->s->leader)
		json_object_set_new(rq->result, "epoch", json_integer(rq->s->epoch));
	return 0;
}

/* The node's IGs: FREE books OFFLINE (or back), their content forgotten, tokens void. */
static int set_igs_offline(struct req *rq, const struct lib_node *n, bool off)
{
	int r = 0;

	for (int g = 0; g < n->nigs && r == 0; g++) {
		lib_store_ig_changed(rq->s, n->igs[g]);
		r = lib_store_ig_set_offline(rq->s, rq->c->igs[n->igs[g]].ig, off, &rq->err);
	}
	return r;
}

/*
 * Offline: the node's FREE books become OFFLINE (never allocated) at once.
 * A live node is fencing until its lease ends (lease.c): its heartbeats are
 * refused, so its kernel fences every shelf, and its activations end only
 * then (lib_fence_settle). A node that is not live is offline at once,
 * once fenced if fence_command is set (fence_cmd.c).
 */
static int set_offline(struct req *rq, int node, const char **state)
{
	const struct lib_node *n = &rq->c->nodes[node];
	bool live = lib_node_live_ms(rq->srv, node) > 0;
	char what[LFS_NODE_NAME_MAX + 32];
	int r;

	snprintf(what, sizeof(what), "set node '%s' offline", n->name);
	if (rq->s->node_state[node] != NODE_ONLINE) {
		*state = rq->s->node_state[node] == NODE_FENCING ? "fencing" : "offline";
		return 0;
	}
	if (!live && (r = lib_fence_require(rq, node, what)) < 0)
		return r;
	*state = live ? "fencing" : "offline";
	rq->pending_node = node;
	rq->pending_state = live ? NODE_FENCING : NODE_OFFLINE;
	if ((r = set_igs_offline(rq, n, true)) < 0 ||
	    (r = lib_store_node_put_state(rq->s, n->name, rq->pending_state, &rq->err)) < 0)
		return r;
	return live ? 0 : lib_store_activations_end_node(rq->s, n->name, &rq->err);
}

/* Online: the node's OFFLINE books become FREE; a fencing node must finish first. */
static int set_online(struct req *rq, int node)
{
	const struct lib_node *n = &rq->c->nodes[node];
	char left[24];
	int r;

	if (rq->s->node_state[node] == NODE_FENCING)
		return FAIL(
			rq, EBUSY,
			"node '%s' is being taken offline: its lease ends in %s s (lease_time %d s + fence_grace %d s after it was last heard); set it online after that",
			n->name, lib_secs(lib_node_live_ms(rq->srv, node), left, sizeof(left)),
			rq->c->lease_time, rq->c->fence_grace);
	rq->pending_node = node;
	rq->pending_state = NODE_ONLINE;
	if ((r = set_igs_offline(rq, n, false)) < 0)
		return r;
	return lib_store_node_put_state(rq->s, n->name, NODE_ONLINE, &rq->err);
}

/*
 * Either way the node's free books are no longer known zero (unless
 * new_books = "zero") and check tokens for its IGs are void. The in-memory
 * state changes after the savepoint (dispatch.c).
 */
int lib_op_node_set_state(struct req *rq)
{
	const char *state, *now;
	int64_t left;
	int node, r;

	if ((r = lib_arg_node(rq, true, &node)) < 0 ||
	    (r = lib_arg_str(rq, "state", true, &state)) < 0)
		return r;
	if (strcmp(state, "online") && strcmp(state, "offline"))
		return FAIL(rq, EINVAL, "state '%.20s' must be \"online\" or \"offline\"", state);
	now = state;
	r = !strcmp(state, "offline") ? set_offline(rq, node, &now) : set_online(rq, node);
	if (r < 0)
		return r;
	left = lib_node_live_ms(rq->srv, node);
	rq->result = json_pack("{s:s,s:s}", "node", rq->c->nodes[node].name, "state", now);
	if (!strcmp(now, "fencing"))
		json_object_set_new(rq->result, "fenced_in", json_real((double)left / 1000));
	return 0;
}
