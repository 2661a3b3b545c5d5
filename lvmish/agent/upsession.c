// SPDX-License-Identifier: GPL-2.0
/*
 * The upcall workers' librarian sessions (docs/NAMESPACE.md, "What the
 * node agent does"): each worker has its own, made again when the
 * librarian closed it, probed when idle, and its requests sent again once
 * where that is safe. Librarian errors are errnos already: they are the
 * caller's, and the librarian's message goes to the agent's log.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "upserver.h"

/* Between requests nothing may arrive: a readable session was closed by the librarian. */
static bool hung_up(struct lfs_lib *lib)
{
	struct pollfd p = { .fd = lfs_lib_fd(lib), .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/*
 * A session whose librarian went away (a restart, a reboot that sent no
 * FIN) looks alive until it is used. Requests that may be sent twice with
 * one outcome are sent again, once, on a new session when the old one
 * turns out closed; before any other request a session idle for
 * UP_IDLE_PROBE_MS is first shown alive by a ping. Any reply, even an
 * error from a librarian without "ping", shows that.
 */
#define UP_IDLE_PROBE_MS 1000

static bool retryable(const char *op)
{
	static const char *const ops[] = { "ping",	     "shelf.get",    "shelf.list",
					   "shelf.activate", "shelf.resize", "attr.set" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return true;
	return false;
}

/* The session was lost under the request, not timed out: nothing answered it. */
static bool lost(const struct up_worker *w, int r)
{
	return r && r != -ETIMEDOUT && (!w->lib || !lfs_lib_connected(w->lib));
}

/* *fresh: a new session was made (it cannot be a stale one). */
static int up_connect(struct up_worker *w, bool *fresh)
{
	const struct lfsvol_conf *c = w->conf;
	struct lfs_lib_opts o = { .addr = c->librarian,
				  .node = c->node,
				  .key_file = c->key_file,
				  .connect_timeout_ms = c->connect_timeout * 1000,
				  .reply_timeout_ms = c->reply_timeout * 1000 };
	char *msg = NULL;
	json_t *info;
	int r;

	if (w->lib && lfs_lib_connected(w->lib)) {
		if (!hung_up(w->lib))
			return 0;
		lfsvol_err("upcall %s: the session was closed by the librarian: connecting again",
			   w->what);
	}
	lfs_lib_close(w->lib);
	w->lib = NULL;
	*fresh = true;
	r = lfs_lib_connect(&o, &w->lib, &msg);
	if (r) {
		lfsvol_err("upcall %s: cannot reach the librarian at %s: %s", w->what, c->librarian,
			   msg ? msg : strerror(-r));
		free(msg);
		return r;
	}
	info = lfs_lib_server_info(w->lib);
	w->book_size = (uint64_t)json_integer_value(json_object_get(info, "book_size"));
	snprintf(w->node, sizeof(w->node), "%s",
		 json_string_value(json_object_get(info, "node")) ?: "");
	return 0;
}

/* A live session for op: probed first if it was idle and op may not be sent twice. */
static int live_session(struct up_worker *w, const char *op, bool *fresh)
{
	int r = up_connect(w, fresh);

	if (r || *fresh || retryable(op) || lfsvol_now_ms() - w->used_ms < UP_IDLE_PROBE_MS)
		return r;
	r = lfs_lib_call(w->lib, "ping", NULL, NULL);
	if (!lost(w, r))
		return 0;
	lfsvol_err("upcall %s: the idle session was closed (%s): connecting again", w->what,
		   lfs_lib_errmsg(w->lib));
	return up_connect(w, fresh);
}

/* One librarian request (args stolen); -errno, the librarian's message logged. */
int up_call(struct up_worker *w, const char *op, json_t *args, json_t **res)
{
	bool fresh = false;
	int r = live_session(w, op, &fresh);

	if (res)
		*res = NULL;
	if (!r)
		r = lfs_lib_call(w->lib, op, args, res);
	if (lost(w, r) && !fresh && retryable(op)) {
		lfsvol_err("upcall %s: %s: the session was closed (%s): sending it again", w->what,
			   op, lfs_lib_errmsg(w->lib));
		r = up_connect(w, &fresh);
		if (!r)
			r = lfs_lib_call(w->lib, op, args, res);
	}
	if (r && w->lib)
		lfsvol_err("upcall %s: %s: librarian: %s", w->what, op, lfs_lib_errmsg(w->lib));
	json_decref(args);
	/* a lost (or timed out) session is no answer about the file */
	if (r && (!w->lib || !lfs_lib_connected(w->lib)))
		return -EIO;
	w->used_ms = lfsvol_now_ms();
	/* the access rules refused (the librarian's EPERM): EACCES, as for a file's mode */
	return r == -EPERM ? -EACCES : r;
}

/* The request's shelf by UUID (ENOENT if gone), with its map if asked. */
int up_find(struct up_worker *w, const struct up_req *r, bool map, json_t **res)
{
	char u[40];

	if (!r->has_uuid)
		return -EINVAL;
	lfs_format_uuid(r->uuid, u);
	return up_call(w, "shelf.get",
		       json_pack("{s:s,s:i}", "uuid", u, "limit", map ? UP_MAP_PAGE : 0), res);
}
