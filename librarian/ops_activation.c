// SPDX-License-Identifier: GPL-2.0
/*
 * Activations: a node activates a shelf before mapping it, exclusively
 * ("rw") or shared read-only ("ro"). Conflicts are refused naming the holder.
 * A holder may be taken over ("takeover", or the admin's "force") only once
 * it is no longer live (lease.c): by then its kernel has fenced the shelf.
 * Changing a shelf needs no other node to hold it.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ops.h"

/* Shelf changes (resize, rename) need no activation by another node. */
int lib_require_unshared(struct req *rq, struct lib_shelf *sh, const char *what)
{
	char holder[LFS_NODE_NAME_MAX + 1], mode[8];
	const char *me = rq->who->node >= 0 ? rq->who->name : NULL;
	int n = lib_store_activation_others(rq->s, sh->id, me, false, holder, sizeof(holder), mode,
					    sizeof(mode), &rq->err);

	if (n < 0)
		return n;
	if (n > 0)
		return FAIL(rq, EBUSY, "cannot %s shelf '%s': it is active on node '%s' (%s)%s",
			    what, sh->name, holder, mode, n > 1 ? " and others" : "");
	/* our own shared activation does not allow changing the shelf either */
	if (me) {
		n = lib_store_activation_others(rq->s, sh->id, "", false, holder, sizeof(holder),
						mode, sizeof(mode), &rq->err);
		if (n < 0)
			return n;
		if (n > 0 && strcmp(mode, "rw"))
			return FAIL(rq, EBUSY,
				    "cannot %s shelf '%s': it is active read-only on node '%s'",
				    what, sh->name, holder);
	}
	return 0;
}

/*
 * End the activations that conflict with node's in mode, if it may take them
 * over: only holders that are no longer live, whoever asks.
 */
static int take_over(struct req *rq, struct lib_shelf *sh, const char *node, const char *mode,
		     bool takeover)
{
	for (;;) {
		char holder[LFS_NODE_NAME_MAX + 1], hmode[8];
		int r, n = lib_store_activation_others(rq->s, sh->id, node, !strcmp(mode, "ro"),
						       holder, sizeof(holder), hmode, sizeof(hmode),
						       &rq->err);

		if (n <= 0)
			return n;
		if (!takeover)
			return FAIL(rq, EBUSY, "shelf '%s' is active on node '%s' (%s)", sh->name,
				    holder, hmode);
		if ((r = lib_require_not_live(rq, sh->name, holder, hmode, "take over")) < 0 ||
		    (r = lib_store_activation_delete(rq->s, sh->id, holder, &rq->err)) < 0)
			return r;
	}
}

int lib_op_activate(struct req *rq)
{
	const char *mode = "rw", *node;
	struct lib_shelf sh;
	bool takeover, force;
	int k, r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_str(rq, "mode", false, &mode)) < 0 ||
	    (r = lib_arg_bool(rq, "takeover", &takeover)) < 0 ||
	    (r = lib_arg_bool(rq, "force", &force)) < 0 || (r = lib_arg_node(rq, true, &k)) < 0)
		return r;
	if (!mode)
		mode = "rw";
	if (strcmp(mode, "rw") && strcmp(mode, "ro"))
		return FAIL(rq, EINVAL,
			    "mode '%.20s' must be \"rw\" (exclusive) or \"ro\" (shared read-only)",
			    mode);
	if (force && !rq->who->admin)
		return FAIL(rq, EPERM, "forced takeover needs the admin identity");
	if ((r = lib_require_access(rq, &sh, strcmp(mode, "ro") ? ACC_RW : ACC_RO,
				    strcmp(mode, "ro") ? "activate (rw)" : "activate (ro)")) < 0)
		return r;
	node = rq->c->nodes[k].name;
	if ((r = take_over(rq, &sh, node, mode, takeover || force)) < 0 ||
	    (r = lib_store_activation_put(rq->s, sh.id, node, mode, time(NULL), &rq->err)) < 0)
		return r;
	rq->result = lib_reply_shelf_map(rq, sh.id, 0, LIB_BOOKS_LIMIT);
	return 0;
}

int lib_op_deactivate(struct req *rq)
{
	char holder[LFS_NODE_NAME_MAX + 1] = "", hmode[8], left[24];
	struct lib_shelf sh;
	const char *node;
	int k, n, r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_node(rq, true, &k)) < 0)
		return r;
	node = rq->c->nodes[k].name;
	/* a fencing node's activations end with its lease, not before */
	if (rq->s->node_state[k] == NODE_FENCING)
		return FAIL(
			rq, EBUSY,
			"cannot deactivate shelf '%s' of node '%s': the node is being taken offline and its activations end with its lease, in %s s",
			sh.name, node, lib_secs(lib_node_live_ms(rq->srv, k), left, sizeof(left)));
	r = lib_store_activation_delete(rq->s, sh.id, node, &rq->err);
	if (r < 0)
		return r;
	if (r == 0) {
		n = lib_store_activation_others(rq->s, sh.id, node, false, holder, sizeof(holder),
						hmode, sizeof(hmode), &rq->err);
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
