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
#include <limits.h>
#include <linux/sockios.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "kernel.h"
#include "lfs_librarian.h"
#include "msg.h"
#include "session.h"
#include "upcall.h"

#define RENEW_QUEUE 256 /* heartbeats remembered until their reply */
#define ACK_POLL_MIN_MS 1 /* SIOCOUTQ is polled from 1 ms, doubling ... */
#define ACK_POLL_MAX_MS 100 /* ... up to 100 ms, until the bytes are acknowledged */
#define SEND_TIMEOUT_MS 1000 /* a heartbeat's write may wait this long for buffer space */
#define LATE_MARGIN_MS 1000 /* a gap over interval + 1 s between renewals is late */
#define FENCED_LOG_MAX 64
/*
 * The thread runs at this SCHED_RR priority, as sanlock's daemons do: a
 * node busy with anything else (a copy through the page cache, kswapd, the
 * agent's own zeroing) cannot starve it of the CPU for a lease's length.
 */
#define RENEW_RT_PRIORITY 10
#define RENEW_STACK (256 << 10)

struct hb {
	int64_t id;
	uint64_t sent; /* CLOCK_BOOTTIME ns */
	bool renewed, probe;
};

struct renew_log {
	long long heartbeats, replies, renewals, by_ack, late, errors;
	int64_t longest_gap_ms;
	uint64_t last_ns; /* when the kernel's lease was last renewed */
	time_t last_wall;
	char last_error[256];
};

struct lfsvol_renewer {
	const struct lfsvol_conf *conf;
	pthread_t thread;
	int wake[2]; /* written to stop the thread */
	int stop;
	pthread_mutex_t mu; /* guards zombies and interval */
	long long zombies;
	int interval; /* seconds */
	/* the thread's own */
	struct lfs_lib *lib;
	struct lfs_lib_inbox in;
	struct lfs_client *drv;
	struct hb q[RENEW_QUEUE]; /* oldest first */
	int nq;
	uint64_t next_send;
	int ack_wait_ms, backoff_ms, lease_s;
	bool probing, dirty;
	bool replicated; /* the leader row: only a leader's reply renews */
	int64_t epoch; /* the newest leader epoch seen */
	int start; /* the index in the librarian list to try first */
	int suspect; /* the index of one that left a heartbeat unanswered, or -1 */
	char state[320];
	struct renew_log log;
	json_t *fenced;
};

static bool stopping(struct lfsvol_renewer *rn)
{
	return __atomic_load_n(&rn->stop, __ATOMIC_ACQUIRE);
}

static int get_interval(struct lfsvol_renewer *rn)
{
	int v;

	pthread_mutex_lock(&rn->mu);
	v = rn->interval;
	pthread_mutex_unlock(&rn->mu);
	return v;
}

static void set_state(struct lfsvol_renewer *rn, const char *fmt, ...) __printf(2, 3);

static void set_state(struct lfsvol_renewer *rn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rn->state, sizeof(rn->state), fmt, ap);
	va_end(ap);
	rn->dirty = true;
}

static void log_error(struct lfsvol_renewer *rn, const char *fmt, ...) __printf(2, 3);

static void log_error(struct lfsvol_renewer *rn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rn->log.last_error, sizeof(rn->log.last_error), fmt, ap);
	va_end(ap);
	rn->log.errors++;
	rn->dirty = true;
	lfsvol_err("renewal: %s", rn->log.last_error);
}

/* Wait ms, or less if told to stop. */
static void renew_sleep(struct lfsvol_renewer *rn, int ms)
{
	struct pollfd p = { .fd = rn->wake[0], .events = POLLIN };

	if (!stopping(rn))
		poll(&p, 1, ms);
}

static json_t *log_json(struct lfsvol_renewer *rn)
{
	const struct renew_log *l = &rn->log;

	return json_pack(
		"{s:i,s:I,s:s,s:b,s:b,s:I,s:i,s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:s}",
		"pid", (int)getpid(), "updated", (json_int_t)time(NULL), "librarian", rn->state,
		"probing", rn->probing, "leader_row", rn->replicated, "epoch",
		(json_int_t)rn->epoch, "heartbeat_interval", get_interval(rn), "lease_time",
		rn->lease_s, "fence_action",
		rn->conf->fence_action == LFS_FENCE_EIO ? "eio" : "reset", "heartbeats",
		(json_int_t)l->heartbeats, "replies", (json_int_t)l->replies, "renewals",
		(json_int_t)l->renewals, "renewals_by_ack", (json_int_t)l->by_ack, "late",
		(json_int_t)l->late, "longest_gap_ms", (json_int_t)l->longest_gap_ms,
		"last_renewal", (json_int_t)l->last_wall, "errors", (json_int_t)l->errors, "fenced",
		rn->fenced, "last_error", l->last_error);
}

/* STATE_DIR/renewal.json, replaced atomically. */
static void log_write(struct lfsvol_renewer *rn)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	json_t *o;

	if (!rn->dirty)
		return;
	rn->dirty = false;
	snprintf(path, sizeof(path), "%s/renewal.json", rn->conf->state_dir);
	snprintf(tmp, sizeof(tmp), "%s/.renewal.json.%d", rn->conf->state_dir, (int)getpid());
	o = log_json(rn);
	if (o && !json_dump_file(o, tmp, JSON_COMPACT))
		rename(tmp, path);
	else
		unlink(tmp);
	json_decref(o);
}

static void drv_reset(struct lfsvol_renewer *rn)
{
	lfs_client_close(rn->drv);
	rn->drv = NULL;
}

static bool drv_ready(struct lfsvol_renewer *rn)
{
	return rn->drv || !lfs_client_open(&rn->drv);
}

/* Tell the kernel: the librarian heard a heartbeat sent at sent. */
static void renew_kernel(struct lfsvol_renewer *rn, uint64_t sent, bool by_ack)
{
	struct renew_log *l = &rn->log;
	uint64_t now;
	int64_t gap;
	int r = drv_ready(rn) ?
			lfsvol_lease_renew(rn->conf, rn->drv, sent, lfsvol_lease_ms(rn->lease_s)) :
			-ENOENT;

	if (r) {
		log_error(rn, "renewing the kernel's lease failed: %s",
			  rn->drv && *lfs_client_error(rn->drv) ? lfs_client_error(rn->drv) :
								  strerror(-r));
		if (r != -EINVAL)
			drv_reset(rn); /* the module may have been reloaded */
		return;
	}
	now = lfs_boottime_ns();
	gap = l->last_ns ? (int64_t)((now - l->last_ns) / 1000000) : 0;
	if (gap > l->longest_gap_ms)
		l->longest_gap_ms = gap;
	if (l->last_ns && gap > get_interval(rn) * 1000LL + LATE_MARGIN_MS) {
		l->late++;
		lfsvol_err(
			"renewal: late: %lld ms since the last renewal (this heartbeat was sent %lld ms ago; renewed on its %s)",
			(long long)gap, (long long)((now - sent) / 1000000),
			by_ack ? "acknowledgement" : "reply");
	}
	l->renewals++;
	l->by_ack += by_ack;
	l->last_ns = now;
	l->last_wall = time(NULL);
	rn->dirty = true;
}

static void fenced_log(struct lfsvol_renewer *rn, const char *name, const char *why)
{
	lfsvol_err("renewal: fenced shelf %s: %s", name, why);
	if (json_array_size(rn->fenced) >= FENCED_LOG_MAX)
		json_array_remove(rn->fenced, 0);
	json_array_append_new(rn->fenced, json_pack("{s:s,s:s,s:I}", "name", name, "why", why, "at",
						    (json_int_t)time(NULL)));
	rn->dirty = true;
}

static bool listed(json_t *activations, const char *name)
{
	size_t i;
	json_t *a;

	json_array_foreach(activations, i, a)
		if (!strcmp(json_string_value(json_object_get(a, "name")) ?: "", name))
			return true;
	return false;
}

/*
 * A file open through the filesystem that the librarian no longer lists, by
 * UUID: renamed on another node, or open here under a second name, the file
 * may bear another name in the kernel than here.
 */
static void fence_file(const char *name, const uint8_t *uuid, void *arg)
{
	struct lfsvol_renewer *rn = arg;
	int r = drv_ready(rn) ? lfsnl_file_fence(rn->drv, uuid) : -ENOENT;

	if (r)
		log_error(rn, "fencing file %s of the lfs filesystem failed: %s", name,
			  rn->drv ? lfs_client_error(rn->drv) : strerror(-r));
	else
		fenced_log(rn, name, "a file: the librarian no longer lists it as active here");
}

/*
 * Fence the leased, active shelves here that the librarian does not list
 * (activations) although they existed when the heartbeat was sent; every
 * one if activations is NULL (the node is offline).
 */
static void fence_unlisted(struct lfsvol_renewer *rn, json_t *activations, uint64_t sent,
			   const char *why)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r;

	if (!drv_ready(rn) || lfsnl_shelf_list(rn->drv, NULL, &kv, &kn)) {
		log_error(rn, "cannot list this node's shelves to fence them");
		drv_reset(rn);
		return;
	}
	for (size_t i = 0; i < kn; i++) {
		const struct lfs_shelf_info *s = &kv[i];

		if (!s->leased || s->state != LFS_SHELF_ACTIVE ||
		    (activations && (s->created >= sent || listed(activations, s->name))))
			continue;
		r = lfsnl_shelf_fence(rn->drv, s->name);
		if (r)
			log_error(rn, "fencing shelf %s failed: %s", s->name,
				  lfs_client_error(rn->drv));
		else
			fenced_log(rn, s->name, why);
	}
	lfsnl_shelf_list_free(kv, kn);
	lfsvol_upactive_fence(activations, sent, fence_file, rn);
}

/* The node is offline: fence everything, renew nothing more, probe. */
static void renew_offline(struct lfsvol_renewer *rn, const char *msg)
{
	for (int i = 0; i < rn->nq; i++)
		rn->q[i].renewed = true; /* no acknowledgement renews from now on */
	if (!rn->probing)
		lfsvol_err(
			"renewal: the librarian refuses this node's heartbeat (%s): fencing every leased shelf, probing until it accepts the node again",
			msg);
	rn->probing = true;
	fence_unlisted(rn, NULL, 0, "the librarian says this node is offline");
	set_state(rn, "offline: %s; every leased shelf fenced, probing", msg);
}

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

static void take_numbers(struct lfsvol_renewer *rn, json_t *res)
{
	json_int_t hb = json_integer_value(json_object_get(res, "heartbeat_interval"));
	json_int_t lt = json_integer_value(json_object_get(res, "lease_time"));
	json_t *z = json_object_get(res, "zombies");

	if (lt > 0 && lt != rn->lease_s) {
		rn->lease_s = (int)lt;
		rn->dirty = true;
	}
	pthread_mutex_lock(&rn->mu);
	if (hb > 0)
		rn->interval = (int)hb;
	if (json_is_integer(z))
		rn->zombies = json_integer_value(z);
	pthread_mutex_unlock(&rn->mu);
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
		log_error(rn,
			  "a heartbeat reply from %s of epoch %lld, older than epoch %lld: ignored",
			  lfs_lib_addr(rn->lib), (long long)json_integer_value(e),
			  (long long)rn->epoch);
		return false;
	}
	rn->epoch = json_integer_value(e);
	return true;
}

static void renew_drop(struct lfsvol_renewer *rn, const char *why);

/* EREMOTE: a standby or a deposed leader. The next connection starts at the leader it names. */
static void renew_follow(struct lfsvol_renewer *rn, json_t *leader)
{
	char why[512];
	json_t *a;
	size_t i;

	snprintf(why, sizeof(why), "%s refuses heartbeats: %s", lfs_lib_addr(rn->lib),
		 lfs_lib_errmsg(rn->lib));
	renew_drop(rn, why);
	json_array_foreach(json_object_get(leader, "addresses"), i, a) {
		int k = lfs_lib_addr_index(rn->conf->librarian, json_string_value(a) ?: "");

		if (k >= 0) {
			rn->start = k;
			break;
		}
	}
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
			log_error(rn, "the librarian refused a heartbeat: %s",
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
		set_state(rn, "connected to %s", lfs_lib_addr(rn->lib));
	}
	take_numbers(rn, res);
	if (known)
		fence_unlisted(rn, json_object_get(res, "activations"), h.sent,
			       "the librarian no longer lists it as active on this node");
	json_decref(res);
}

static void renew_drop(struct lfsvol_renewer *rn, const char *why)
{
	int k = rn->lib ? lfs_lib_addr_index(rn->conf->librarian, lfs_lib_addr(rn->lib)) : -1;

	if (k >= 0)
		rn->start = k + 1; /* a list: the next librarian first */
	if (rn->lib)
		set_state(rn, "lost: %s", why);
	lfsvol_err("renewal: connection to the librarian lost: %s; connecting again", why);
	lfs_lib_close(rn->lib);
	rn->lib = NULL;
	rn->in.len = 0;
	rn->nq = 0;
	rn->backoff_ms = 0;
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
	uint64_t interval = (uint64_t)get_interval(rn) * 1000000000ULL;
	char why[160];

	for (int i = 0; i < rn->nq; i++) {
		if (!rn->replicated && (rn->q[i].renewed || rn->q[i].probe))
			continue;
		if (lfs_boottime_ns() - rn->q[i].sent < (rn->replicated ? interval : lease))
			return;
		if (rn->replicated) {
			snprintf(why, sizeof(why), "%s did not answer a heartbeat for %d s",
				 lfs_lib_addr(rn->lib), get_interval(rn));
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
	rn->next_send = t + (uint64_t)get_interval(rn) * 1000000000ULL;
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

static void renew_turn(struct lfsvol_renewer *rn)
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

/* Connecting failed (or found a standby): say so, wait the back-off. */
static int renew_backoff(struct lfsvol_renewer *rn, int r, const char *msg)
{
	int cap = get_interval(rn) * 1000 / (rn->replicated ? 4 : 1);

	set_state(rn, "unreachable at %s: %s", rn->conf->librarian, msg ? msg : strerror(-r));
	log_write(rn);
	renew_sleep(rn, rn->backoff_ms);
	rn->backoff_ms = rn->backoff_ms ? rn->backoff_ms * 2 : 250;
	if (rn->backoff_ms > cap)
		rn->backoff_ms = cap;
	return r;
}

/*
 * What the auth reply says of the librarian: with the leader row only a
 * leader's replies renew from now on (for good: a list may name an older
 * librarian too). A standby is left (it refuses heartbeats), 1.
 */
static int renew_role(struct lfsvol_renewer *rn, json_t *info)
{
	const char *role = json_string_value(json_object_get(info, "role")) ?: "";
	int64_t e = json_integer_value(json_object_get(info, "epoch"));

	if (strcmp(role, "leader") && strcmp(role, "standby"))
		return 0;
	if (!rn->replicated)
		lfsvol_err(
			"renewal: the librarian has standbys (a leader row): renewing only on a leader's replies");
	rn->replicated = true;
	if (!strcmp(role, "standby"))
		return 1;
	if (e > rn->epoch)
		rn->epoch = e;
	return 0;
}

static bool is_standby(struct lfs_lib *l)
{
	return !strcmp(json_string_value(json_object_get(lfs_lib_server_info(l), "role")) ?: "",
		       "standby");
}

/*
 * After a librarian left a heartbeat unanswered, the others of the list
 * first: a standby names it as the leader until its row expires, and a
 * stopped librarian's TCP stack accepts the connection but no handshake
 * ever ends. Then it, with half an interval to complete the handshake (a
 * librarian that runs does it in milliseconds), so the agent goes round
 * the list about once an interval until one leads.
 */
static int renew_open(struct lfsvol_renewer *rn, const struct lfs_lib_opts *o, char **msg)
{
	char a[LFS_ADDR_LIST_MAX][LFS_ADDR_MAX], rest[LFS_ADDR_LIST_MAX * LFS_ADDR_MAX], m[8];
	int n = lfs_lib_addr_split(o->addr, a, LFS_ADDR_LIST_MAX, m, sizeof(m)), r;
	struct lfs_lib_opts others = *o, one = *o;
	size_t len = 0;

	if (rn->suspect < 0 || rn->suspect >= n || n < 2)
		return lfs_lib_connect(o, &rn->lib, msg);
	for (int i = 0; i < n; i++)
		if (i != rn->suspect)
			len += (size_t)snprintf(rest + len, sizeof(rest) - len, "%s%s",
						len ? "," : "", a[i]);
	others.addr = rest;
	others.start = 0;
	r = lfs_lib_connect(&others, &rn->lib, msg);
	if (r == 0 && !is_standby(rn->lib))
		return 0;
	lfs_lib_close(rn->lib);
	rn->lib = NULL;
	free(*msg);
	*msg = NULL;
	one.addr = a[rn->suspect];
	if (one.connect_timeout_ms > get_interval(rn) * 500)
		one.connect_timeout_ms = get_interval(rn) * 500;
	return lfs_lib_connect(&one, &rn->lib, msg);
}

/* A session of the thread's own; 0, or -errno after the back-off. */
static int renew_connect(struct lfsvol_renewer *rn)
{
	const struct lfsvol_conf *c = rn->conf;
	int ct = c->connect_timeout * 1000;
	struct lfs_lib_opts o = { .addr = c->librarian,
				  .node = c->node,
				  .key_file = c->key_file,
				  /* a stopped librarian must not hold up the next one */
				  .connect_timeout_ms =
					  rn->replicated && ct > get_interval(rn) * 1000 ?
						  get_interval(rn) * 1000 :
						  ct,
				  .reply_timeout_ms = c->reply_timeout * 1000,
				  .start = rn->start };
	json_t *info;
	char *msg = NULL, why[512];
	int r = renew_open(rn, &o, &msg);

	if (r) {
		r = renew_backoff(rn, r, msg);
		free(msg);
		return r;
	}
	info = lfs_lib_server_info(rn->lib);
	if (renew_role(rn, info)) {
		snprintf(why, sizeof(why), "%s is a standby", lfs_lib_addr(rn->lib));
		lfs_lib_close(rn->lib);
		rn->lib = NULL;
		return renew_backoff(rn, -EREMOTE, why);
	}
	take_numbers(rn, info);
	rn->suspect = -1;
	rn->next_send = 0;
	rn->backoff_ms = 0;
	set_state(rn, "connected to %s%s", lfs_lib_addr(rn->lib), rn->probing ? " (probing)" : "");
	snprintf(why, sizeof(why), rn->replicated ? ", the leader, epoch %lld" : "",
		 (long long)rn->epoch);
	lfsvol_err("renewal: connected to the librarian at %s (heartbeat every %d s, lease %d s%s)",
		   lfs_lib_addr(rn->lib), get_interval(rn), rn->lease_s, why);
	return 0;
}

static void *renew_main(void *arg)
{
	struct sched_param sp = { .sched_priority = RENEW_RT_PRIORITY };
	struct lfsvol_renewer *rn = arg;
	int r = pthread_setschedparam(pthread_self(), SCHED_RR, &sp);

	if (r)
		lfsvol_err(
			"renewal: cannot run at real-time priority SCHED_RR %d (%s): a busy node may delay renewals",
			RENEW_RT_PRIORITY, strerror(r));
	while (!stopping(rn)) {
		if (rn->lib || !renew_connect(rn))
			renew_turn(rn);
		log_write(rn);
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
