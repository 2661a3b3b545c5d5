// SPDX-License-Identifier: GPL-2.0
/*
 * Leases, the librarian's side of fencing (docs/FENCING.md): the service
 * clock, when each node was last heard and whether it is live. What a
 * lapsed lease allows (a node set offline, a takeover): lapse.c.
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

/* "N.N" seconds of a positive number of milliseconds, for messages. */
const char *lib_secs(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	snprintf(buf, len, "%lld.%lld", (long long)ms / 1000, (long long)(ms % 1000) / 100);
	return buf;
}
