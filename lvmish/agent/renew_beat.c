// SPDX-License-Identifier: GPL-2.0
/*
 * The renewal thread's heartbeats: one sent every interval without
 * waiting (remembered in a queue until answered), the replies taken as
 * they come (renew, follow, go offline, fence what is no longer listed),
 * the socket's acknowledgements watched with SIOCOUTQ, and a session
 * dropped whose heartbeats go unanswered.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel.h"
#include "msg.h"
#include "renewer.h"

static void queue_push(struct lfsvol_renewer *rn, int64_t id, uint64_t sent, bool probe)
{
	if (rn->nq == RENEW_QUEUE) {
		memmove(rn->q, rn->q + 1, (RENEW_QUEUE - 1) * sizeof(rn->q[0]));
		rn->nq--;
	}
	rn->q[rn->nq++] = (struct hb){ .id = id, .sent = sent, .probe = probe };
}

/* The heartbeat a reply answers, taken off the queue with any older one. */
static bool queue_take(struct lfsvol_renewer *rn, int64_t id, struct hb *out)
{
	int k = 0;
	bool found = false;

	while (k < rn->nq && rn->q[k].id <= id) {
		if (rn->q[k].id == id) {
			*out = rn->q[k];
			found = true;
		}
		k++;
	}
	memmove(rn->q, rn->q + k, (size_t)(rn->nq - k) * sizeof(rn->q[0]));
	rn->nq -= k;
	return found;
}

/*
 * With the leader row a reply renews only if it carries an epoch no older
 * than any seen: a leader checks its epoch in the read that answers (the
 * librarian's store_leader.c), so it still led when it answered.
 */
static bool reply_vouches(struct lfsvol_renewer *rn, json_t *res)
{
	json_t *e = json_object_get(res, "epoch");

	if (!rn->replicated)
		return true;
	if (!json_is_integer(e) || json_integer_value(e) < rn->epoch) {
		renew_error(
			rn,
			"a heartbeat reply from %s of epoch %lld, older than epoch %lld: ignored",
			lfs_lib_addr(rn->lib), (long long)json_integer_value(e),
			(long long)rn->epoch);
		return false;
	}
	rn->epoch = json_integer_value(e);
	return true;
}

static void renew_reply(struct lfsvol_renewer *rn, json_t *rep)
{
	struct hb h = { 0 };
	bool known = queue_take(rn, json_integer_value(json_object_get(rep, "id")), &h);
	json_t *res = NULL,
	       *ld = json_incref(json_object_get(json_object_get(rep, "error"), "leader"));
	int r = lfs_lib_reply_result(rn->lib, rep, &res);

	rn->log.replies++;
	if (r == -EREMOTE)
		renew_follow(rn, ld);
	json_decref(ld);
	if (r == -EACCES) {
		renew_offline(rn, lfs_lib_errmsg(rn->lib));
		return;
	}
	if (r) {
		if (r != -EREMOTE)
			renew_error(rn, "the librarian refused a heartbeat: %s",
				    lfs_lib_errmsg(rn->lib));
		return;
	}
	if (!reply_vouches(rn, res)) {
		json_decref(res);
		return;
	}
	if (known && !h.renewed && !h.probe)
		renew_kernel(rn, h.sent, false);
	if (known && h.probe && rn->probing) {
		rn->probing = false;
		lfsvol_err("renewal: the librarian accepts this node again: renewing the lease");
		renew_state(rn, "connected to %s", lfs_lib_addr(rn->lib));
	}
	renew_numbers(rn, res);
	if (known)
		renew_fence_unlisted(rn, json_object_get(res, "activations"), h.sent,
				     "the librarian no longer lists it as active on this node");
	json_decref(res);
}

static void renew_receive(struct lfsvol_renewer *rn)
{
	json_t *rep;
	int r;

	while (rn->lib) {
		r = lfs_lib_receive(rn->lib, &rn->in, &rep);
		if (r < 0)
			renew_drop(rn, lfs_lib_errmsg(rn->lib));
		if (r <= 0)
			break;
		renew_reply(rn, rep);
	}
}

/* Every byte sent has been acknowledged: renew with the newest heartbeat not yet counted. */
static void renew_acked(struct lfsvol_renewer *rn)
{
	uint64_t sent = 0;
	int outq = -1;

	for (int i = 0; i < rn->nq; i++)
		if (!rn->q[i].renewed && !rn->q[i].probe)
			sent = rn->q[i].sent;
	if (rn->replicated) /* a stopped or deposed leader's kernel acknowledges too */
		return;
	if (!sent || ioctl(lfs_lib_fd(rn->lib), SIOCOUTQ, &outq) || outq != 0)
		return;
	for (int i = 0; i < rn->nq; i++)
		rn->q[i].renewed = true;
	renew_kernel(rn, sent, true);
}

/*
 * Neither answered nor acknowledged within the lease: the peer is gone.
 * With the leader row, unanswered for one interval: it cannot vouch for
 * this node, try the next librarian.
 */
static void renew_stuck(struct lfsvol_renewer *rn)
{
	uint64_t lease = (uint64_t)lfsvol_lease_ms(rn->lease_s) * 1000000;
	uint64_t interval = (uint64_t)renew_interval(rn) * 1000000000ULL;
	char why[160];

	for (int i = 0; i < rn->nq; i++) {
		if (!rn->replicated && (rn->q[i].renewed || rn->q[i].probe))
			continue;
		if (lfs_boottime_ns() - rn->q[i].sent < (rn->replicated ? interval : lease))
			return;
		if (rn->replicated) {
			snprintf(why, sizeof(why), "%s did not answer a heartbeat for %d s",
				 lfs_lib_addr(rn->lib), renew_interval(rn));
			rn->suspect =
				lfs_lib_addr_index(rn->conf->librarian, lfs_lib_addr(rn->lib));
		} else
			snprintf(why, sizeof(why), "no acknowledgement of a heartbeat for %d s",
				 rn->lease_s);
		renew_drop(rn, why);
		return;
	}
}

static int renew_send(struct lfsvol_renewer *rn)
{
	uint64_t t = lfs_boottime_ns();
	json_t *args = rn->probing ? json_pack("{s:b}", "lease", 0) : NULL;
	int64_t id = 0;
	int r = lfs_lib_send(rn->lib, "heartbeat", args, SEND_TIMEOUT_MS, &id);

	json_decref(args);
	rn->next_send = t + (uint64_t)renew_interval(rn) * 1000000000ULL;
	if (r) {
		renew_drop(rn, lfs_lib_errmsg(rn->lib));
		return r;
	}
	queue_push(rn, id, t, rn->probing);
	rn->ack_wait_ms = ACK_POLL_MIN_MS;
	rn->log.heartbeats++;
	return 0;
}

/* How long the next poll may wait: the next heartbeat, or the next look at SIOCOUTQ. */
static int turn_wait(struct lfsvol_renewer *rn)
{
	uint64_t now = lfs_boottime_ns();
	int64_t ms = rn->next_send > now ? (int64_t)((rn->next_send - now) / 1000000) + 1 : 0;

	/* with the leader row acknowledgements are not looked at */
	for (int i = 0; i < rn->nq && !rn->replicated; i++) {
		if (!rn->q[i].renewed && !rn->q[i].probe) {
			if (rn->ack_wait_ms < ms)
				ms = rn->ack_wait_ms;
			rn->ack_wait_ms = rn->ack_wait_ms * 2 > ACK_POLL_MAX_MS ?
						  ACK_POLL_MAX_MS :
						  rn->ack_wait_ms * 2;
			break;
		}
	}
	return (int)ms;
}

void renew_turn(struct lfsvol_renewer *rn)
{
	struct pollfd p[2];

	if (lfs_boottime_ns() >= rn->next_send && renew_send(rn))
		return;
	p[0] = (struct pollfd){ .fd = lfs_lib_fd(rn->lib), .events = POLLIN };
	p[1] = (struct pollfd){ .fd = rn->wake[0], .events = POLLIN };
	if (poll(p, 2, turn_wait(rn)) > 0 && p[0].revents)
		renew_receive(rn);
	if (rn->lib)
		renew_acked(rn);
	if (rn->lib)
		renew_stuck(rn);
}
