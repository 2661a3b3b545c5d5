// SPDX-License-Identifier: GPL-2.0
/*
 * The renewal thread's numbers and its log: the interval, the fence
 * watchdog's bound, the lease time and ZOMBIE count of the librarian's
 * replies, the state line, errors, the shelves fenced, and
 * STATE_DIR/renewal.json (`lfsvol status' shows it).
 */
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "renewer.h"

bool renew_stopping(struct lfsvol_renewer *rn)
{
	return __atomic_load_n(&rn->stop, __ATOMIC_ACQUIRE);
}

/*
 * The fence watchdog's bound (docs/FENCING.md "The fence watchdog"): three
 * quarters of the librarian's fence_grace, so that a node whose fence cannot
 * end has restarted before the librarian may grant its shelves to another
 * node, the last quarter for what the grace covered before (clock rates,
 * timer latency); never under the kernel's least. -1 (sent as nothing)
 * until the librarian told its fence_grace.
 */
int64_t renew_watchdog_ms(const struct lfsvol_renewer *rn)
{
	int64_t ms = (int64_t)rn->grace_s * 750;

	if (rn->grace_s < 0)
		return -1;
	if (ms < LFS_FENCE_WATCHDOG_MS_MIN)
		return LFS_FENCE_WATCHDOG_MS_MIN;
	return ms > LFS_FENCE_WATCHDOG_MS_MAX ? LFS_FENCE_WATCHDOG_MS_MAX : ms;
}

int renew_interval(struct lfsvol_renewer *rn)
{
	int v;

	pthread_mutex_lock(&rn->mu);
	v = rn->interval;
	pthread_mutex_unlock(&rn->mu);
	return v;
}

void renew_state(struct lfsvol_renewer *rn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rn->state, sizeof(rn->state), fmt, ap);
	va_end(ap);
	rn->dirty = true;
}

void renew_error(struct lfsvol_renewer *rn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rn->log.last_error, sizeof(rn->log.last_error), fmt, ap);
	va_end(ap);
	rn->log.errors++;
	rn->dirty = true;
	lfsvol_err("renewal: %s", rn->log.last_error);
}

void renew_sleep(struct lfsvol_renewer *rn, int ms)
{
	struct pollfd p = { .fd = rn->wake[0], .events = POLLIN };

	if (!renew_stopping(rn))
		poll(&p, 1, ms);
}

static json_t *log_json(struct lfsvol_renewer *rn)
{
	const struct renew_log *l = &rn->log;

	return json_pack(
		"{s:i,s:I,s:s,s:b,s:b,s:I,s:i,s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:s,s:I}",
		"pid", (int)getpid(), "updated", (json_int_t)time(NULL), "librarian", rn->state,
		"probing", rn->probing, "leader_row", rn->replicated, "epoch",
		(json_int_t)rn->epoch, "heartbeat_interval", renew_interval(rn), "lease_time",
		rn->lease_s, "fence_action",
		lfs_fence_action_name((uint32_t)rn->conf->fence_action), "heartbeats",
		(json_int_t)l->heartbeats, "replies", (json_int_t)l->replies, "renewals",
		(json_int_t)l->renewals, "renewals_by_ack", (json_int_t)l->by_ack, "late",
		(json_int_t)l->late, "longest_gap_ms", (json_int_t)l->longest_gap_ms,
		"heartbeat_rtt_last_us", (json_int_t)l->rtt_last_us, "heartbeat_rtt_max_us",
		(json_int_t)l->rtt_max_us, "last_renewal", (json_int_t)l->last_wall, "errors",
		(json_int_t)l->errors, "fenced", rn->fenced, "last_error", l->last_error,
		"fence_watchdog_ms", (json_int_t)renew_watchdog_ms(rn));
}

void renew_log_write(struct lfsvol_renewer *rn)
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

void renew_fenced(struct lfsvol_renewer *rn, const char *name, const char *why)
{
	lfsvol_err("renewal: fenced shelf %s: %s", name, why);
	if (json_array_size(rn->fenced) >= FENCED_LOG_MAX)
		json_array_remove(rn->fenced, 0);
	json_array_append_new(rn->fenced, json_pack("{s:s,s:s,s:I}", "name", name, "why", why, "at",
						    (json_int_t)time(NULL)));
	rn->dirty = true;
}

void renew_numbers(struct lfsvol_renewer *rn, json_t *res)
{
	json_int_t hb = json_integer_value(json_object_get(res, "heartbeat_interval"));
	json_int_t lt = json_integer_value(json_object_get(res, "lease_time"));
	json_t *g = json_object_get(res, "fence_grace");
	json_t *z = json_object_get(res, "zombies");

	if (lt > 0 && lt != rn->lease_s) {
		rn->lease_s = (int)lt;
		rn->dirty = true;
	}
	if (json_is_integer(g) && json_integer_value(g) >= 0 &&
	    json_integer_value(g) != rn->grace_s) {
		rn->grace_s = (int)json_integer_value(g);
		rn->dirty = true;
	}
	pthread_mutex_lock(&rn->mu);
	if (hb > 0)
		rn->interval = (int)hb;
	if (json_is_integer(z))
		rn->zombies = json_integer_value(z);
	pthread_mutex_unlock(&rn->mu);
}
