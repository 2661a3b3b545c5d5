// SPDX-License-Identifier: GPL-2.0
/*
 * Leases, the librarian's side of fencing (docs/FENCING.md): the service
 * clock, when each node was last heard, whether it is live, and what happens
 * to a node set offline while it was live.
 *
 * The service clock is the monotonic clock minus every period in which the
 * event loop did not run. The loop wakes at least once a second and every
 * reading of the clock is a tick: a gap of more than two seconds between two
 * ticks is a stall (the librarian stopped, swapped out, starved) and is not
 * counted. So the librarian never counts its own absence against a node: a
 * heartbeat that waited in its socket meanwhile counts from the moment it
 * was read, and that moment is not later than the stall on this clock.
 *
 * A node is heard when the librarian reads a complete request of it off its
 * socket (not when it processes it); probes (heartbeat with "lease": false)
 * and requests of a node that is offline or fencing do not count. At start
 * every node counts as heard. A node is live until last heard + lease_time +
 * fence_grace: by then its kernel has fenced every shelf it held.
 *
 * Two threads hear nodes: the event loop and the lease thread (beat.c).
 * srv->lease_mu covers what they share: the clock's fields, heard[], and
 * the writes of node_state[] (the loop's own reads need no lock, it is the
 * only writer). On any thread but the loop's, lib_svc_now() reads the
 * clock without ticking it (lib_svc_peek): only the loop's ticks detect the
 * loop's stalls, and a peek during one counts a node heard later, never
 * earlier, than it was.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"
#include "server.h"

#define STALL_MS 2000

int64_t lib_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t lib_svc_now(struct lib_server *srv)
{
	int64_t now, gap, t;

	if (!pthread_equal(pthread_self(), srv->loop_thread))
		return lib_svc_peek(srv);
	pthread_mutex_lock(&srv->lease_mu);
	now = lib_mono_ms();
	gap = now - srv->svc_last;
	if (gap > STALL_MS) {
		srv->svc_stalled += gap;
		lib_log("the event loop did not run for %lld.%03lld s (stopped or starved): not counted against any node's lease",
			(long long)gap / 1000, (long long)gap % 1000);
	}
	srv->svc_last = now;
	t = now - srv->svc_origin - srv->svc_stalled;
	pthread_mutex_unlock(&srv->lease_mu);
	return t;
}

int64_t lib_svc_peek(struct lib_server *srv)
{
	int64_t t;

	pthread_mutex_lock(&srv->lease_mu);
	t = lib_mono_ms() - srv->svc_origin - srv->svc_stalled;
	pthread_mutex_unlock(&srv->lease_mu);
	return t;
}

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

void lib_node_heard(struct lib_server *srv, int node, int64_t at)
{
	pthread_mutex_lock(&srv->lease_mu);
	if (node >= 0 && node < srv->cfg->nnodes && at > srv->heard[node])
		srv->heard[node] = at;
	pthread_mutex_unlock(&srv->lease_mu);
}

/* Heard, if it is online now (checked under the lock the state changes under). */
void lib_node_heard_online(struct lib_server *srv, int node, int64_t at)
{
	pthread_mutex_lock(&srv->lease_mu);
	if (node >= 0 && node < srv->cfg->nnodes && at > srv->heard[node] &&
	    srv->store->node_state[node] == NODE_ONLINE)
		srv->heard[node] = at;
	pthread_mutex_unlock(&srv->lease_mu);
}

int64_t lib_node_heard_at(struct lib_server *srv, int node)
{
	int64_t at;

	pthread_mutex_lock(&srv->lease_mu);
	at = srv->heard[node];
	pthread_mutex_unlock(&srv->lease_mu);
	return at;
}

/* The loop changes a node's state (the lease thread copies the states). */
void lib_node_set_state(struct lib_server *srv, int node, enum lib_node_state state)
{
	pthread_mutex_lock(&srv->lease_mu);
	srv->store->node_state[node] = state;
	pthread_mutex_unlock(&srv->lease_mu);
}

/* A copy of every node's state, for the lease thread's requests. */
void lib_node_states_copy(struct lib_server *srv, char *to)
{
	pthread_mutex_lock(&srv->lease_mu);
	memcpy(to, srv->store->node_state, srv->cfg->nnodes);
	pthread_mutex_unlock(&srv->lease_mu);
}

int64_t lib_node_live_ms(struct lib_server *srv, int node)
{
	const struct lib_config *c = srv->cfg;
	int64_t now, heard;
	bool offline;

	if (node < 0 || node >= c->nnodes)
		return 0;
	now = lib_svc_now(srv);
	pthread_mutex_lock(&srv->lease_mu);
	offline = srv->store->node_state[node] == NODE_OFFLINE;
	heard = srv->heard[node];
	pthread_mutex_unlock(&srv->lease_mu);
	return offline ? 0 : heard + ((int64_t)c->lease_time + c->fence_grace) * 1000 - now;
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

/* "N.N" seconds of a positive number of milliseconds, for messages. */
const char *lib_secs(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	snprintf(buf, len, "%lld.%lld", (long long)ms / 1000, (long long)(ms % 1000) / 100);
	return buf;
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
