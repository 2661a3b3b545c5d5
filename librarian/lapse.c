// SPDX-License-Identifier: GPL-2.0
/*
 * What a node's lapsed lease allows (docs/FENCING.md): the lease service
 * started, taken over by a new leader and stopped; fencing nodes that are no
 * longer live set offline; and a takeover of a live holder's shelf refused,
 * or held until its fence_command ran (fence_cmd.c). The clock and the
 * liveness they ask: lease.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ops.h"
#include "server.h"

/* The clock starts at 0 and every node counts as heard then. */
int lib_lease_start(struct lib_server *srv)
{
	pthread_mutex_init(&srv->lease_mu, NULL);
	srv->loop_thread = pthread_self();
	srv->svc_origin = srv->svc_last = lib_mono_ms();
	srv->svc_stalled = 0;
	srv->heard = calloc(srv->cfg->nnodes + 1, sizeof(*srv->heard));
	if (!srv->heard || lib_fence_init(srv) < 0)
		return -ENOMEM;
	srv->nfencing = 0;
	for (int i = 0; i < srv->cfg->nnodes; i++)
		srv->nfencing += srv->store->node_state[i] == NODE_FENCING;
	return 0;
}

/*
 * A standby became the leader: the node states as the catalogue has them
 * now, and every node counts as heard at this moment, as at a start.
 */
void lib_lease_takeover(struct lib_server *srv)
{
	int64_t now = lib_svc_now(srv);

	pthread_mutex_lock(&srv->lease_mu);
	lib_store_node_load(srv->store);
	for (int i = 0; i < srv->cfg->nnodes; i++)
		srv->heard[i] = now;
	srv->nfencing = 0;
	for (int i = 0; i < srv->cfg->nnodes; i++)
		srv->nfencing += srv->store->node_state[i] == NODE_FENCING;
	pthread_mutex_unlock(&srv->lease_mu);
}

void lib_lease_free(struct lib_server *srv)
{
	lib_fence_free(srv);
	free(srv->heard);
	srv->heard = NULL;
}

/*
 * Fencing nodes that are no longer live become offline: their activations
 * end. Run before every request (in the round's transaction, outside the
 * request's savepoint), so whatever looks at a node or an activation sees it
 * settled; a lost transaction reloads the states (lib_batch_commit).
 */
int lib_fence_settle(struct req *rq)
{
	struct lib_server *srv = rq->srv;
	const struct lib_config *c = rq->c;
	int r;

	for (int k = 0; srv->nfencing && k < c->nnodes; k++) {
		if (rq->s->node_state[k] != NODE_FENCING || lib_node_live_ms(srv, k) > 0 ||
		    !lib_fence_settled(srv, k))
			continue;
		if ((r = lib_store_activations_end_node(rq->s, c->nodes[k].name, &rq->err)) < 0 ||
		    (r = lib_store_node_put_state(rq->s, c->nodes[k].name, NODE_OFFLINE,
						  &rq->err)) < 0)
			return r;
		lib_node_set_state(srv, k, NODE_OFFLINE);
		srv->nfencing--;
		lib_log("node '%s' is offline: its lease ended, its activations are released",
			c->nodes[k].name);
	}
	return 0;
}

/*
 * The holder of an activation may be taken over (or its shelf destroyed by
 * force) only when it is no longer live, and fenced if fence_command is set
 * (fence_cmd.c): 0, or EBUSY naming it and the time left (or its fence
 * running), EIO when its fence failed. what: "take over", "destroy" ...
 */
int lib_require_not_live(struct req *rq, const char *shelf, const char *holder, const char *mode,
			 const char *what)
{
	int k = lib_config_find_node(rq->c, holder);
	int64_t left = lib_node_live_ms(rq->srv, k);
	char ago[24], l[600];

	if (left <= 0) {
		snprintf(l, sizeof(l), "%s shelf '%s'", what, shelf);
		return lib_fence_require(rq, k, l);
	}
	return FAIL(
		rq, EBUSY,
		"cannot %s shelf '%s': it is active on node '%s' (%s), which is live (last heard %s s ago; lease_time %d s + fence_grace %d s): %s s left%s",
		what, shelf, holder, mode,
		lib_secs(lib_svc_now(rq->srv) - lib_node_heard_at(rq->srv, k), ago, sizeof(ago)),
		rq->c->lease_time, rq->c->fence_grace, lib_secs(left, l, sizeof(l)),
		rq->s->node_state[k] == NODE_FENCING ? " (the node is being taken offline)" : "");
}
