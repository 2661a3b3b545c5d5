// SPDX-License-Identifier: GPL-2.0
/*
 * The renewal thread's side of the kernel: renew the lease with a
 * heartbeat's send time, fence the shelves and files the librarian no
 * longer lists here (every one when it says the node is offline). A
 * driver session of the thread's own, opened again after a failure (the
 * module may have been reloaded).
 */
#include <errno.h>
#include <string.h>

#include "kernel.h"
#include "msg.h"
#include "renewer.h"
#include "upserver.h"

static void drv_reset(struct lfsvol_renewer *rn)
{
	lfs_client_close(rn->drv);
	rn->drv = NULL;
}

static bool drv_ready(struct lfsvol_renewer *rn)
{
	return rn->drv || !lfs_client_open(&rn->drv);
}

static int renew_lease(struct lfsvol_renewer *rn, uint64_t sent)
{
	uint32_t ms = lfsvol_lease_ms(rn->lease_s);
	int r = lfsnl_lease_renew_watch(rn->drv, sent, ms, rn->conf->fence_action,
					renew_watchdog_ms(rn));

	lfsvol_trace("kernel lease renewed (sent %.3f s ago, %u ms, fence watchdog %lld ms): %d",
		     (double)(lfs_boottime_ns() - sent) / 1e9, ms, (long long)renew_watchdog_ms(rn),
		     r);
	return r;
}

/* Tell the kernel: the librarian heard a heartbeat sent at sent. */
void renew_kernel(struct lfsvol_renewer *rn, uint64_t sent, bool by_ack)
{
	struct renew_log *l = &rn->log;
	uint64_t now;
	int64_t gap;
	int r = drv_ready(rn) ? renew_lease(rn, sent) : -ENOENT;

	if (r) {
		renew_error(rn, "renewing the kernel's lease failed: %s",
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
	if (l->last_ns && gap > renew_interval(rn) * 1000LL + LATE_MARGIN_MS) {
		l->late++;
		lfsvol_err(
			"renewal: late: %lld ms since the last renewal (this heartbeat was sent %lld ms ago; renewed on its %s)",
			(long long)gap, (long long)((now - sent) / 1000000),
			by_ack ? "acknowledgement" : "reply");
	}
	if (now > sent) {
		l->rtt_last_us = (int64_t)((now - sent) / 1000);
		if (l->rtt_last_us > l->rtt_max_us)
			l->rtt_max_us = l->rtt_last_us;
	}
	l->renewals++;
	l->by_ack += by_ack;
	l->last_ns = now;
	l->last_wall = time(NULL);
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
		renew_error(rn, "fencing file %s of the lfs filesystem failed: %s", name,
			    rn->drv ? lfs_client_error(rn->drv) : strerror(-r));
	else
		renew_fenced(rn, name, "a file: the librarian no longer lists it as active here");
}

void renew_fence_unlisted(struct lfsvol_renewer *rn, json_t *activations, uint64_t sent,
			  const char *why)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r;

	if (!drv_ready(rn) || lfsnl_shelf_list(rn->drv, NULL, &kv, &kn)) {
		renew_error(rn, "cannot list this node's shelves to fence them");
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
			renew_error(rn, "fencing shelf %s failed: %s", s->name,
				    lfs_client_error(rn->drv));
		else
			renew_fenced(rn, s->name, why);
	}
	lfsnl_shelf_list_free(kv, kn);
	lfsvol_upactive_fence(activations, sent, fence_file, rn);
}

void renew_offline(struct lfsvol_renewer *rn, const char *msg)
{
	for (int i = 0; i < rn->nq; i++)
		rn->q[i].renewed = true; /* no acknowledgement renews from now on */
	if (!rn->probing)
		lfsvol_err(
			"renewal: the librarian refuses this node's heartbeat (%s): fencing every leased shelf, probing until it accepts the node again",
			msg);
	rn->probing = true;
	renew_fence_unlisted(rn, NULL, 0, "the librarian says this node is offline");
	renew_state(rn, "offline: %s; every leased shelf fenced, probing", msg);
}
