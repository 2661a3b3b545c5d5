// SPDX-License-Identifier: GPL-2.0
/*
 * The renewal thread (docs/FENCING.md, "The agent renews from a thread of
 * its own"). It has its own librarian session and driver session and does
 * nothing else, so no zeroing, check, agent.sock request or slow reply on
 * the agent's other session can delay it.
 *
 * Every heartbeat_interval it reads CLOCK_BOOTTIME (t_s) and sends
 * `heartbeat' without waiting for the reply. The kernel's lease is renewed
 * with t_s as soon as either the reply arrives or the peer's TCP stack has
 * acknowledged every byte sent (SIOCOUTQ is 0): a heartbeat that reached
 * the librarian's host is read as soon as the librarian runs, and the
 * librarian counts a node as heard when it reads a request, so a stalled
 * librarian does not make the nodes fence. Heartbeats are pipelined: while
 * the librarian is stalled they queue in its socket, each acknowledged.
 *
 * A reply is authoritative: a leased, active kernel shelf created before
 * the heartbeat was sent and not among the reply's activations is fenced
 * at once. EACCES (the node is offline, or being taken offline) fences
 * every leased shelf; from then on the agent sends probes ("lease": false,
 * which renew nothing) until one is accepted. Heartbeats sent before the
 * refusal arrived may have been acknowledged and renewed the lease, which
 * is why the refusal fences explicitly instead of waiting for the lease.
 *
 * With the leader row (a PostgreSQL catalogue shared by a leader and
 * standbys: the auth reply's role is "leader" or "standby"), an
 * acknowledgement renews nothing: a stopped or deposed leader's kernel
 * still acknowledges, though a standby may have taken over and will grant
 * a takeover lease_time + fence_grace after it did. Only an accepted reply
 * renews, and only one of an epoch no older than any seen; EREMOTE (a
 * standby, or a deposed leader) drops the connection and the next one goes
 * to the leader it names. A heartbeat unanswered for one interval drops
 * the connection too, and the next one starts at the next address of
 * lfs.conf's list, so the agent follows a failover within about one
 * interval (docs/HA.md, "Nodes follow the leader").
 *
 * A connection whose oldest heartbeat is neither answered nor acknowledged
 * within the lease is dropped; any drop is followed by a new connection at
 * once, then with back-off up to the interval (a quarter of it with the
 * leader row). The log (renewals, the
 * longest gap between two, the late ones, fenced shelves) goes to
 * STATE_DIR/renewal.json after every change; `lfsvol status' shows it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "renewer.h"
#include "session.h"

static void *renew_main(void *arg)
{
	struct sched_param sp = { .sched_priority = RENEW_RT_PRIORITY };
	struct lfsvol_renewer *rn = arg;
	int r = pthread_setschedparam(pthread_self(), SCHED_RR, &sp);

	if (r)
		lfsvol_err(
			"renewal: cannot run at real-time priority SCHED_RR %d (%s): a busy node may delay renewals",
			RENEW_RT_PRIORITY, strerror(r));
	while (!renew_stopping(rn)) {
		if (rn->lib || !renew_connect(rn))
			renew_turn(rn);
		renew_log_write(rn);
	}
	return NULL;
}

int lfsvol_renew_start(const struct lfsvol_conf *conf, struct lfsvol_renewer **out)
{
	struct lfsvol_renewer *rn = calloc(1, sizeof(*rn));
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	if (!rn)
		return -ENOMEM;
	rn->conf = conf;
	rn->zombies = -1;
	rn->suspect = -1;
	rn->interval = 5;
	rn->lease_s = 30;
	rn->grace_s = -1;
	rn->fenced = json_array();
	snprintf(rn->state, sizeof(rn->state), "starting");
	pthread_mutex_init(&rn->mu, NULL);
	if (pipe2(rn->wake, O_CLOEXEC)) {
		r = -errno;
		free(rn);
		return r;
	}
	lfsvol_openssl_init();
	/* SIGTERM and SIGINT are the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RENEW_STACK); /* locked in memory (mlockall) */
	r = -pthread_create(&rn->thread, &attr, renew_main, rn);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		close(rn->wake[0]);
		close(rn->wake[1]);
		json_decref(rn->fenced);
		free(rn);
		return r;
	}
	*out = rn;
	return 0;
}

void lfsvol_renew_stop(struct lfsvol_renewer *rn)
{
	if (!rn)
		return;
	__atomic_store_n(&rn->stop, 1, __ATOMIC_RELEASE);
	if (write(rn->wake[1], "x", 1) < 0)
		lfsvol_trace("waking the renewal thread: %s", strerror(errno));
	pthread_join(rn->thread, NULL);
	lfs_lib_close(rn->lib);
	lfs_lib_inbox_free(&rn->in);
	lfs_client_close(rn->drv);
	close(rn->wake[0]);
	close(rn->wake[1]);
	json_decref(rn->fenced);
	pthread_mutex_destroy(&rn->mu);
	free(rn);
}

long long lfsvol_renew_zombies(struct lfsvol_renewer *rn, int *interval)
{
	long long z;

	pthread_mutex_lock(&rn->mu);
	z = rn->zombies;
	*interval = rn->interval;
	pthread_mutex_unlock(&rn->mu);
	return z;
}
