// SPDX-License-Identifier: GPL-2.0
/*
 * Request dispatch: the table of operations, the request envelope ("v",
 * "id", "op"), who may do what, and the transaction each request runs in.
 * Each request is applied whole or not at all: it is a savepoint in the
 * round's transaction (group commit, committed by lib_batch_commit() before
 * any reply of the round is sent).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"

enum {
	OP_ADMIN = 1, /* the admin identity only */
	OP_OFFLINE = 2, /* an offline (or fencing) node may send it too */
	OP_FIRST = 4, /* allowed before auth (auth itself) */
	OP_LEASE = 8, /* renews the lease: refused with EACCES to an offline or fencing node */
	OP_CHANGES = 16, /* may change the catalogue: in the audit trail (audit.c) */
};

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct lib_op {
	const char *name;
	int (*fn)(struct req *rq);
	int flags;
	const char *const *args; /* the arguments it takes besides v, id and op */
} ops[] = {
	{ "auth", lib_op_auth, OP_OFFLINE | OP_FIRST, ARGS("node") },
	{ "geometry", lib_op_geometry, OP_OFFLINE, NULL },
	{ "stats", lib_op_stats, OP_OFFLINE, ARGS("statements") },
	{ "ping", lib_op_ping, OP_OFFLINE, NULL },
	{ "shelf.create", lib_op_shelf_create, OP_CHANGES,
	  ARGS("name", "books", "policy", "igs", "anti_affinity", "node", "attrs", "activate",
	       "incomplete") },
	{ "shelf.destroy", lib_op_shelf_destroy, OP_CHANGES, ARGS("name", "uuid", "force") },
	{ "shelf.resize", lib_op_shelf_resize, OP_CHANGES,
	  ARGS("name", "uuid", "books", "bytes", "node", "limit") },
	{ "shelf.rename", lib_op_shelf_rename, OP_CHANGES,
	  ARGS("name", "uuid", "new_name", "replace") },
	{ "shelf.list", lib_op_shelf_list, OP_OFFLINE, ARGS("prefix", "offset", "limit") },
	{ "shelf.get", lib_op_shelf_get, OP_OFFLINE, ARGS("name", "uuid", "offset", "limit") },
	{ "attr.get", lib_op_attr_get, OP_OFFLINE, ARGS("name", "key") },
	{ "attr.set", lib_op_attr_set, OP_CHANGES, ARGS("name", "uuid", "key", "value") },
	{ "attr.list", lib_op_attr_list, OP_OFFLINE, ARGS("name") },
	{ "attr.remove", lib_op_attr_remove, OP_CHANGES, ARGS("name", "key") },
	{ "shelf.activate", lib_op_activate, OP_CHANGES,
	  ARGS("name", "uuid", "mode", "takeover", "force", "node") },
	{ "shelf.deactivate", lib_op_deactivate, OP_OFFLINE | OP_CHANGES,
	  ARGS("name", "uuid", "node") },
	{ "heartbeat", lib_op_heartbeat, OP_LEASE, ARGS("node", "lease") },
	{ "zombie.list", lib_op_zombie_list, 0, ARGS("node", "limit") },
	{ "zombie.zeroed", lib_op_zombie_zeroed, OP_CHANGES, ARGS("books") },
	{ "free.unknown", lib_op_free_unknown, 0, ARGS("node", "limit", "after") },
	{ "free.checked", lib_op_free_checked, OP_CHANGES, ARGS("books", "token") },
	{ "free.zeroed", lib_op_free_zeroed, OP_CHANGES, ARGS("books", "token") },
	{ "free.scrub", lib_op_free_scrub, OP_CHANGES, ARGS("node", "limit") },
	{ "free.forget", lib_op_free_forget, OP_CHANGES, ARGS("ig") },
	{ "book.bad", lib_op_book_bad, OP_OFFLINE | OP_CHANGES, ARGS("ranges") },
	{ "book.bad_list", lib_op_book_bad_list, OP_OFFLINE, ARGS("name", "limit") },
	{ "book.clear", lib_op_book_clear, OP_ADMIN | OP_OFFLINE | OP_CHANGES, ARGS("books") },
	{ "node.set_state", lib_op_node_set_state, OP_ADMIN | OP_OFFLINE | OP_CHANGES,
	  ARGS("node", "state") },
};

int64_t lib_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static json_t *reply_error(json_t *id, int err, const char *msg)
{
	return json_pack("{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", LFS_PROTOCOL_VERSION, "id",
			 id ? id : json_null(), "ok", 0, "error", "errno", err, "code",
			 lfs_errno_name(err), "message", msg);
}

/* EREMOTE (not the leader) says who is: error.leader, for clients to follow it. */
static json_t *reply_error_srv(struct lib_server *srv, json_t *id, int err, const char *msg)
{
	json_t *r = reply_error(id, err, msg);

	if (r && err == EREMOTE)
		json_object_set_new(json_object_get(r, "error"), "leader", lib_leader_json(srv));
	return r;
}

/*
 * Commit the round's transaction. On failure the in-memory node states are
 * reloaded and srv->batch_err says why (EIO, or ENOSPC for a full disk).
 */
int lib_batch_commit(struct lib_server *srv)
{
	struct lib_store *s = srv->store;

	if (srv->batch_open) {
		srv->batch_open = false;
		if (lib_store_commit(s) < 0) {
			lib_sql_fail(s, &srv->batch_err);
			lib_store_rollback(s);
			srv->batch_failed = true;
			if (srv->batch_err.err == EREMOTE) /* another librarian leads */
				lib_leader_deposed(srv);
		}
	}
	if (!srv->batch_failed)
		return 0;
	lib_store_forget(s); /* the counts it kept were of requests undone */
	pthread_mutex_lock(&srv->lease_mu);
	lib_store_node_load(s);
	pthread_mutex_unlock(&srv->lease_mu);
	srv->nfencing = 0;
	for (int i = 0; i < srv->cfg->nnodes; i++)
		srv->nfencing += s->node_state[i] == NODE_FENCING;
	srv->batch_failed = false;
	if (!srv->batch_err.err)
		lib_fail(&srv->batch_err, EIO, "the database transaction was lost");
	return -srv->batch_err.err;
}

/* "v" and "op" of the request object: the operation, or -errno with rq->err. */
static int envelope(struct req *rq, json_t *req, const struct lib_op **op)
{
	json_t *v = json_object_get(req, "v"), *opv = json_object_get(req, "op");
	char b[100];

	if (!json_is_integer(v) || json_integer_value(v) != LFS_PROTOCOL_VERSION) {
		char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
		int r = FAIL(
			rq, EPROTONOSUPPORT,
			"protocol version %s is not supported (this librarian speaks version %d)",
			t ? lib_shown(t, b, sizeof(b)) : "(missing \"v\")", LFS_PROTOCOL_VERSION);

		free(t);
		return r;
	}
	if (!json_is_string(opv))
		return FAIL(rq, EINVAL, "request needs \"op\", a string");
	rq->op = json_string_value(opv);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcmp(ops[i].name, rq->op)) {
			*op = &ops[i];
			rq->op_index = (int)i;
			return 0;
		}
	}
	return FAIL(rq, EOPNOTSUPP, "unknown operation '%s'", lib_shown(rq->op, b, sizeof(b)));
}

/* What an offline or fencing node is told. */
static int node_offline(struct req *rq, int err, int node)
{
	const char *name = rq->c->nodes[node].name;
	char left[24];

	if (rq->s->node_state[node] == NODE_FENCING)
		return FAIL(
			rq, err,
			"node '%s' is offline (set by the admin; being fenced: its activations end in %s s)",
			name, lib_secs(lib_node_live_ms(rq->srv, node), left, sizeof(left)));
	return FAIL(rq, err, "node '%s' is offline (set by the admin)", name);
}

/* Whether the caller may send op now. */
static int authorise(struct req *rq, const struct lib_op *op)
{
	struct lib_identity *who = rq->who;

	if (!*rq->authed && !(op->flags & OP_FIRST))
		return FAIL(
			rq, EACCES,
			"not authenticated: the first request on a connection must be \"auth\"");
	if ((op->flags & OP_ADMIN) && !who->admin)
		return FAIL(rq, EPERM, "operation '%s' needs the admin identity (caller is '%s')",
			    rq->op, who->name);
	if (who->node < 0 || rq->s->node_state[who->node] == NODE_ONLINE)
		return 0;
	if (op->flags & OP_LEASE)
		return node_offline(rq, EACCES, who->node);
	if (!(op->flags & OP_OFFLINE))
		return node_offline(rq, EPERM, who->node);
	return 0;
}

/* A heartbeat with "lease": false (a probe) renews nothing. */
static bool is_probe(json_t *req)
{
	return json_is_false(json_object_get(req, "lease")) &&
	       !strcmp(json_string_value(json_object_get(req, "op")) ?: "", "heartbeat");
}

/*
 * The caller, an online node, is heard as of when its request was read
 * (lease.c). Any request counts but a probe; the admin's heartbeat for a node
 * counts for that node (lib_op_heartbeat).
 */
static void heard(struct req *rq, json_t *req)
{
	int k = rq->who->node;

	if (k >= 0 && !is_probe(req))
		lib_node_heard_online(rq->srv, k, rq->read_at);
}

/*
 * Group commit: the requests of one event-loop round share a transaction
 * (the server commits it before sending any of their replies); each request
 * is a savepoint in it, so it is still applied whole or not at all. Fencing
 * nodes that are no longer live are settled first, outside the savepoint.
 */
static int run_in_savepoint(struct req *rq, const struct lib_op *op)
{
	struct lib_server *srv = rq->srv;
	int r;

	if (!srv->batch_open) {
		if (lib_store_begin(rq->s) < 0)
			return lib_sql_fail(rq->s, &rq->err);
		srv->batch_open = true;
	}
	if ((r = lib_fence_settle(rq)) < 0 || (r = lib_store_savepoint(rq->s, &rq->err)) < 0)
		return r;
	r = op->fn(rq);
	if (r == 0 && !rq->result && !rq->text.p)
		r = FAIL(rq, ENOMEM, "out of memory building the reply");
	if (!lib_store_in_transaction(rq->s)) {
		/* SQLite abandoned the whole transaction (I/O error, disk full) */
		srv->batch_open = false;
		srv->batch_failed = true;
		return r < 0 ? r : FAIL(rq, EIO, "the database transaction was lost");
	}
	if (r < 0) {
		lib_store_release(rq->s, true, &rq->err);
		return r;
	}
	if ((r = lib_store_release(rq->s, false, &rq->err)) < 0)
		return r;
	if (rq->pending_node >= 0) {
		srv->nfencing += (rq->pending_state == NODE_FENCING) -
				 (rq->s->node_state[rq->pending_node] == NODE_FENCING);
		lib_node_set_state(srv, rq->pending_node, rq->pending_state);
	}
	return 0;
}

/*
 * A standby (leader.c) answers auth and ping, which read nothing of the
 * catalogue, outside any transaction; everything else is refused with
 * EREMOTE naming the leader. It hears no node.
 */
static int standby(struct req *rq, const struct lib_op *op, json_t *req)
{
	int r;

	if (op->fn != lib_op_auth && op->fn != lib_op_ping)
		return lib_leader_refuse(rq->srv, &rq->err);
	rq->args = req;
	if ((r = lib_args_check(rq, op->args)) < 0)
		return r;
	return op->fn(rq);
}

static int handle(struct req *rq, json_t *req)
{
	const struct lib_op *op = NULL;
	int r;

	if ((r = envelope(rq, req, &op)) < 0)
		return r;
	if (!lib_leader_leading(rq->srv->leader))
		return standby(rq, op, req);
	rq->changes = op->flags & OP_CHANGES;
	if ((r = authorise(rq, op)) < 0)
		return r;
	rq->args = req;
	heard(rq, req);
	if ((r = lib_args_check(rq, op->args)) < 0)
		return r;
	return run_in_savepoint(rq, op);
}

/* The request object, or NULL and *reply, the error to send. */
static json_t *parse_request(const char *buf, size_t len, json_t **reply)
{
	json_error_t jerr;
	json_t *req = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr), *id;
	char msg[512];

	if (!req) {
		snprintf(msg, sizeof(msg), "malformed JSON at line %d column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		*reply = reply_error(NULL, EBADMSG, msg);
		return NULL;
	}
	id = json_object_get(req, "id");
	if (!json_is_object(req))
		*reply = reply_error(NULL, EBADMSG, "a request must be a JSON object");
	else if (id && !json_is_integer(id))
		*reply = reply_error(NULL, EINVAL, "request \"id\" must be an integer");
	else
		return req;
	json_decref(req);
	return NULL;
}

void lib_parse_frame(struct lib_frame *f)
{
	if (!f->req && !f->reply)
		f->req = parse_request(f->buf, f->len, &f->reply);
}

bool lib_is_heartbeat(const struct lib_frame *f)
{
	return f->req &&
	       !strcmp(json_string_value(json_object_get(f->req, "op")) ?: "", "heartbeat");
}

/* The frame's request, parsed, now the caller's; or NULL and *reply, the refusal. */
static json_t *take_request(struct lib_frame *f, json_t **reply)
{
	json_t *req;

	lib_parse_frame(f);
	req = f->req;
	*reply = f->reply;
	f->req = f->reply = NULL;
	return req;
}

/*
 * The reply to req (consumed) from the outcome r of rq. A result written as
 * text goes to f (if given) and the reply has no "result": the caller adds it.
 */
static json_t *finish(struct req *rq, json_t *req, int r, struct lib_frame *f)
{
	json_t *id = json_object_get(req, "id"), *reply;

	if (r >= 0 && rq->text.p && !f)
		r = FAIL(rq, EINVAL, "not answered here");
	if (r < 0) {
		int err = rq->err.err ? rq->err.err : -r;

		reply = reply_error_srv(rq->srv, id, err,
					rq->err.msg[0] ? rq->err.msg : strerror(err));
		json_decref(rq->result);
		free(rq->text.p);
	} else if (rq->text.p) {
		reply = json_pack("{s:i,s:O,s:b}", "v", LFS_PROTOCOL_VERSION, "id",
				  id ? id : json_null(), "ok", 1);
		f->result_text = rq->text.p;
		f->result_len = rq->text.len;
	} else {
		reply = json_pack("{s:i,s:O,s:b,s:o}", "v", LFS_PROTOCOL_VERSION, "id",
				  id ? id : json_null(), "ok", 1, "result", rq->result);
	}
	json_decref(req);
	return reply;
}

json_t *lib_handle_request(struct lib_server *srv, struct lib_identity *who, bool *authed,
			   struct lib_frame *f)
{
	struct req rq = { .srv = srv,
			  .s = srv->store,
			  .c = srv->cfg,
			  .who = who,
			  .authed = authed,
			  .read_at = f->read_at,
			  .op_index = -1,
			  .pending_node = -1 };
	json_t *req, *reply;

	int r;

	srv->requests++;
	req = take_request(f, &reply);
	if (!req) {
		lib_latency_request(srv, -1, f->read_us);
		return reply;
	}
	r = handle(&rq, req);
	lib_audit_request(srv, &rq, req, r);
	lib_latency_request(srv, rq.op_index, f->read_us);
	return finish(&rq, req, r, f);
}

int lib_op_count(void)
{
	return (int)(sizeof(ops) / sizeof(ops[0]));
}

const char *lib_op_name(int i)
{
	return i >= 0 && i < lib_op_count() ? ops[i].name : "other";
}

/*
 * On the lease thread: the node states copied, the node heard (if online
 * under the lock), the heartbeat's reads in one read transaction of ro.
 * Nothing here writes, so no savepoint and no round.
 */
json_t *lib_handle_beat(struct lib_server *srv, struct lib_store *ro, struct lib_identity *who,
			bool *authed, struct lib_frame *f)
{
	struct req rq = { .srv = srv,
			  .s = ro,
			  .c = srv->cfg,
			  .who = who,
			  .authed = authed,
			  .read_at = f->read_at,
			  .pending_node = -1 };
	const struct lib_op *op = NULL;
	json_t *req, *reply;
	int r;

	__atomic_fetch_add(&srv->beats, 1, __ATOMIC_RELAXED);
	req = take_request(f, &reply);
	if (!req)
		return reply;
	lib_node_states_copy(srv, ro->node_state);
	ro->leader = srv->leader != NULL;
	ro->epoch = lib_leader_epoch(srv->leader); /* the read checks it (store_leader.c) */
	if ((r = envelope(&rq, req, &op)) < 0)
		return finish(&rq, req, r, NULL);
	if (!lib_leader_leading(srv->leader))
		return finish(&rq, req, lib_leader_refuse(srv, &rq.err), NULL);
	if ((r = authorise(&rq, op)) < 0)
		return finish(&rq, req, r, NULL);
	if (op->fn != lib_op_heartbeat) /* the thread hands over nothing else */
		return finish(&rq, req, FAIL(&rq, EINVAL, "not a heartbeat"), NULL);
	rq.args = req;
	heard(&rq, req);
	if ((r = lib_args_check(&rq, op->args)) < 0)
		return finish(&rq, req, r, NULL);
	if (lib_store_begin_read(ro) < 0)
		return finish(&rq, req, lib_sql_fail(ro, &rq.err), NULL);
	r = op->fn(&rq);
	lib_store_end_read(ro);
	return finish(&rq, req, r, NULL);
}
