// SPDX-License-Identifier: GPL-2.0
/*
 * Activations: a node activates a shelf before mapping it, in a mode
 * (activation_mode.c says which modes coexist). Conflicts are refused naming
 * the holder. A holder may be taken over ("takeover", or the admin's
 * "force") only once it is no longer live (lease.c): by then its kernel has
 * fenced the shelf. Changing a shelf needs no other node to hold it; a grow
 * only that none holds it exclusively.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ops.h"

struct conflict_walk {
	const char *node, *mode; /* the activation asked for, and by which node (NULL: none) */
	struct lib_holder *first;
	int n;
};

static int count_conflict(void *arg, const struct lib_activation *a)
{
	struct conflict_walk *w = arg;

	if ((w->node && !strcmp(a->node, w->node)) || lib_modes_compatible(w->mode, a->mode))
		return 0;
	if (!w->n++) {
		snprintf(w->first->node, sizeof(w->first->node), "%s", a->node);
		snprintf(w->first->mode, sizeof(w->first->mode), "%s", a->mode);
	}
	return 0;
}

int lib_activation_conflicts(struct req *rq, int64_t shelf, const char *node, const char *mode,
			     struct lib_holder *first)
{
	struct conflict_walk w = { .node = node, .mode = mode, .first = first };
	int r = lib_store_activations_of_shelf(rq->s, shelf, count_conflict, &w, &rq->err);

	return r < 0 ? r : w.n;
}

struct mode_of {
	const char *node;
	char *mode;
	size_t len;
};

static int mode_of_node(void *arg, const struct lib_activation *a)
{
	struct mode_of *m = arg;

	if (strcmp(a->node, m->node))
		return 0;
	snprintf(m->mode, m->len, "%s", a->mode);
	return 1;
}

int lib_activation_mode(struct req *rq, int64_t shelf, const char *node, char *mode, size_t len)
{
	struct mode_of m = { .node = node, .mode = mode, .len = len };

	return lib_store_activations_of_shelf(rq->s, shelf, mode_of_node, &m, &rq->err);
}

/* The caller, if it is a node: its own activation never stands in its way. */
static const char *caller_node(struct req *rq)
{
	return rq->who->node >= 0 ? rq->who->name : NULL;
}

/* Shelf changes (shrink, rename) need no activation by another node. */
int lib_require_unshared(struct req *rq, struct lib_shelf *sh, const char *what)
{
	char holder[LFS_NODE_NAME_MAX + 1], mode[8];
	const char *me = caller_node(rq);
	int n = 0;

	if (!sh->active) /* counted by the lookup: none, ours neither */
		return 0;
	n = lib_store_activation_others(rq->s, sh->id, me, holder, sizeof(holder), mode,
					sizeof(mode), &rq->err);
	if (n < 0)
		return n;
	if (n > 0)
		return FAIL(rq, EBUSY, "cannot %s shelf '%s': it is active on node '%s' (%s)%s",
			    what, sh->name, holder, mode, n > 1 ? " and others" : "");
	/* our own read-only activation does not allow changing the shelf either */
	if (me && (n = lib_activation_mode(rq, sh->id, me, mode, sizeof(mode))) != 0) {
		if (n < 0)
			return n;
		if (!lib_mode_writes(mode))
			return FAIL(rq, EBUSY,
				    "cannot %s shelf '%s': it is active read-only on node '%s'",
				    what, sh->name, me);
	}
	return 0;
}

/*
 * A grow needs no other node to hold the shelf exclusively: "shared" and
 * "ro" holders keep their books and see the new ones at their next open.
 * That is: no holder a "shared" activation by the caller would conflict with.
 */
int lib_require_growable(struct req *rq, struct lib_shelf *sh)
{
	struct lib_holder h;
	int n = sh->active ? lib_activation_conflicts(rq, sh->id, caller_node(rq), "shared", &h) :
			     0;

	if (n <= 0)
		return n;
	return FAIL(rq, EBUSY, "cannot grow shelf '%s': it is active on node '%s' (%s)%s", sh->name,
		    h.node, h.mode, n > 1 ? " and others" : "");
}

/*
 * End the activations that conflict with node's in mode, if it may take them
 * over: only holders that are no longer live, whoever asks.
 */
static int take_over(struct req *rq, struct lib_shelf *sh, const char *node, const char *mode,
		     bool takeover)
{
	for (;;) {
		struct lib_holder h;
		int r, n = lib_activation_conflicts(rq, sh->id, node, mode, &h);

		if (n <= 0)
			return n;
		if (!takeover)
			return FAIL(rq, EBUSY, "shelf '%s' is active on node '%s' (%s)", sh->name,
				    h.node, h.mode);
		if ((r = lib_require_not_live(rq, sh->name, h.node, h.mode, "take over")) < 0 ||
		    (r = lib_store_activation_delete(rq->s, sh->id, h.node, &rq->err)) < 0)
			return r;
	}
}

/* A copy under way (lfsvol copy), or one whose copier died: its bytes are not whole. */
static int refuse_incomplete(struct req *rq, const struct lib_shelf *sh)
{
	char mark[256], b[200];
	int r = lib_store_attr_get(rq->s, sh->id, "lfs.incomplete", mark, sizeof(mark), &rq->err);

	if (r == -ENODATA)
		return 0;
	if (r < 0)
		return r;
	return FAIL(rq, EBUSY, "shelf '%s' is incomplete (lfs.incomplete: %s); remove it", sh->name,
		    lib_shown(mark, b, sizeof(b)));
}

int lib_op_activate(struct req *rq)
{
	const char *mode = "rw", *node;
	struct lib_shelf sh;
	char what[24];
	bool takeover, force;
	int k, r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = lib_arg_str(rq, "mode", false, &mode)) < 0 ||
	    (r = lib_arg_bool(rq, "takeover", &takeover)) < 0 ||
	    (r = lib_arg_bool(rq, "force", &force)) < 0 || (r = lib_arg_node(rq, true, &k)) < 0)
		return r;
	if (!mode)
		mode = "rw";
	if ((r = lib_mode_check(rq, "mode", mode)) < 0)
		return r;
	if (force && !rq->who->admin)
		return FAIL(rq, EPERM, "forced takeover needs the admin identity");
	snprintf(what, sizeof(what), "activate (%s)", mode);
	if ((r = lib_require_access(rq, &sh, lib_mode_access(mode), what)) < 0 ||
	    (r = refuse_incomplete(rq, &sh)) < 0)
		return r;
	node = rq->c->nodes[k].name;
	if ((r = take_over(rq, &sh, node, mode, takeover || force)) < 0 ||
	    (r = lib_store_activation_put(rq->s, sh.id, node, mode, time(NULL), &rq->err)) < 0)
		return r;
	rq->result = lib_reply_shelf_map(rq, sh.id, 0, LIB_BOOKS_LIMIT);
	return 0;
}

/*
 * The admin ends another node's activation only once that node is no longer
 * live: before, its kernel still maps the shelf (docs/FENCING.md), and a
 * new holder or a destroy would share the books with it.
 */
static int require_holder_gone(struct req *rq, const struct lib_shelf *sh, const char *node)
{
	char mode[8];
	int r = lib_activation_mode(rq, sh->id, node, mode, sizeof(mode));

	if (r <= 0)
		return r; /* an error, or not active there: answered by the caller */
	return lib_require_not_live(rq, sh->name, node, mode, "deactivate for another node");
}

int lib_op_deactivate(struct req *rq)
{
	char holder[LFS_NODE_NAME_MAX + 1] = "", hmode[8], left[24];
	struct lib_shelf sh;
	const char *node;
	int k, n, r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = lib_arg_node(rq, true, &k)) < 0)
		return r;
	node = rq->c->nodes[k].name;
	/* a fencing node's activations end with its lease, not before */
	if (rq->s->node_state[k] == NODE_FENCING)
		return FAIL(
			rq, EBUSY,
			"cannot deactivate shelf '%s' of node '%s': the node is being taken offline and its activations end with its lease, in %s s",
			sh.name, node, lib_secs(lib_node_live_ms(rq->srv, k), left, sizeof(left)));
	if (rq->who->node != k && (r = require_holder_gone(rq, &sh, node)) < 0)
		return r;
	r = lib_store_activation_delete(rq->s, sh.id, node, &rq->err);
	if (r < 0)
		return r;
	if (r == 0) {
		n = lib_store_activation_others(rq->s, sh.id, node, holder, sizeof(holder), hmode,
						sizeof(hmode), &rq->err);
		if (n > 0)
			return FAIL(
				rq, EPERM,
				"shelf '%s' is not active on node '%s' (it is active on '%s'); only the holder deactivates",
				sh.name, node, holder);
		return FAIL(rq, ENOENT, "shelf '%s' is not active on node '%s'", sh.name, node);
	}
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "node", node);
	return 0;
}
