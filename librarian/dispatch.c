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
	OP_OFFLINE = 2, /* an offline node may send it too */
	OP_FIRST = 4, /* allowed before auth (auth itself) */
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
	{ "stats", lib_op_stats, OP_OFFLINE, NULL },
	{ "shelf.create", lib_op_shelf_create, 0,
	  ARGS("name", "books", "policy", "igs", "anti_affinity", "node", "attrs", "activate") },
	{ "shelf.destroy", lib_op_shelf_destroy, 0, ARGS("name", "force") },
	{ "shelf.resize", lib_op_shelf_resize, 0, ARGS("name", "books", "node") },
	{ "shelf.rename", lib_op_shelf_rename, 0, ARGS("name", "new_name") },
	{ "shelf.list", lib_op_shelf_list, OP_OFFLINE, ARGS("prefix", "offset", "limit") },
	{ "shelf.get", lib_op_shelf_get, OP_OFFLINE, ARGS("name", "uuid", "offset", "limit") },
	{ "attr.get", lib_op_attr_get, OP_OFFLINE, ARGS("name", "key") },
	{ "attr.set", lib_op_attr_set, 0, ARGS("name", "key", "value") },
	{ "attr.list", lib_op_attr_list, OP_OFFLINE, ARGS("name") },
	{ "attr.remove", lib_op_attr_remove, 0, ARGS("name", "key") },
	{ "shelf.activate", lib_op_activate, 0, ARGS("name", "mode", "takeover", "force", "node") },
	{ "shelf.deactivate", lib_op_deactivate, OP_OFFLINE, ARGS("name", "node") },
	{ "heartbeat", lib_op_heartbeat, OP_OFFLINE, ARGS("node") },
	{ "zombie.list", lib_op_zombie_list, 0, ARGS("node", "limit") },
	{ "zombie.zeroed", lib_op_zombie_zeroed, 0, ARGS("books") },
	{ "free.unknown", lib_op_free_unknown, 0, ARGS("node", "limit", "after") },
	{ "free.checked", lib_op_free_checked, 0, ARGS("books", "token") },
	{ "free.scrub", lib_op_free_scrub, 0, ARGS("node", "limit") },
	{ "node.set_state", lib_op_node_set_state, OP_ADMIN | OP_OFFLINE, ARGS("node", "state") },
};

int64_t lib_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

void lib_node_seen(struct lib_server *srv, int node)
{
	if (node >= 0 && node < srv->cfg->nnodes)
		srv->last_seen[node] = lib_now_mono();
}

static json_t *reply_error(json_t *id, int err, const char *msg)
{
	return json_pack("{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", LFS_PROTOCOL_VERSION, "id",
			 id ? id : json_null(), "ok", 0, "error", "errno", err, "code",
			 lfs_errno_name(err), "message", msg);
}

/* Commit the round's transaction; on failure the in-memory node states are reloaded. */
int lib_batch_commit(struct lib_server *srv)
{
	struct lib_store *s = srv->store;

	if (srv->batch_open) {
		srv->batch_open = false;
		if (lib_store_commit(s) < 0) {
			lib_store_rollback(s);
			srv->batch_failed = true;
		}
	}
	if (!srv->batch_failed)
		return 0;
	lib_store_node_load(s);
	srv->batch_failed = false;
	return -EIO;
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
			return 0;
		}
	}
	return FAIL(rq, EOPNOTSUPP, "unknown operation '%s'", lib_shown(rq->op, b, sizeof(b)));
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
	if (!(op->flags & OP_OFFLINE) && who->node >= 0 && rq->s->node_offline[who->node])
		return FAIL(rq, EPERM, "node '%s' is offline (set by the admin)", who->name);
	return 0;
}

/*
 * Group commit: the requests of one event-loop round share a transaction
 * (the server commits it before sending any of their replies); each request
 * is a savepoint in it, so it is still applied whole or not at all.
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
	if ((r = lib_store_savepoint(rq->s, &rq->err)) < 0)
		return r;
	r = op->fn(rq);
	if (r == 0 && !rq->result)
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
	if (rq->pending_node >= 0)
		rq->s->node_offline[rq->pending_node] = rq->pending_offline;
	return 0;
}

static int handle(struct req *rq, json_t *req)
{
	const struct lib_op *op = NULL;
	int r;

	if ((r = envelope(rq, req, &op)) < 0 || (r = authorise(rq, op)) < 0)
		return r;
	rq->args = req;
	if (rq->who->node >= 0)
		lib_node_seen(rq->srv, rq->who->node);
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

json_t *lib_handle_request(struct lib_server *srv, struct lib_identity *who, bool *authed,
			   const char *buf, size_t len)
{
	struct req rq = { .srv = srv,
			  .s = srv->store,
			  .c = srv->cfg,
			  .who = who,
			  .authed = authed,
			  .pending_node = -1 };
	json_t *req, *id, *reply = NULL;
	int r;

	srv->requests++;
	req = parse_request(buf, len, &reply);
	if (!req)
		return reply;
	id = json_object_get(req, "id");
	r = handle(&rq, req);
	if (r < 0) {
		int err = rq.err.err ? rq.err.err : -r;

		reply = reply_error(id, err, rq.err.msg[0] ? rq.err.msg : strerror(err));
		json_decref(rq.result);
	} else {
		reply = json_pack("{s:i,s:O,s:b,s:o}", "v", LFS_PROTOCOL_VERSION, "id",
				  id ? id : json_null(), "ok", 1, "result", rq.result);
	}
	json_decref(req);
	return reply;
}
