// SPDX-License-Identifier: GPL-2.0
/*
 * The fence watchdog (docs/FENCING.md "The fence watchdog"): the fence work
 * of a lapsed lease must end within a bound of the deadline, or the node
 * restarts. With fence_action eio the work may wait for a copy that a DAX
 * filesystem on a shelf (fs/dax.c) runs inside dax_read_lock() and that is
 * stuck on a user page fault: kill_dax() waits for it, and the copy may
 * store its bytes whenever the page comes. The librarian grants the shelf
 * to another node at lease + fence_grace, so the node agent sets the bound
 * below fence_grace (LFS_A_FENCE_WATCHDOG_MS); 0, the default, is none.
 *
 * The watchdog is an hrtimer of its own under a spinlock that no one holds
 * across a wait: nothing the fence work waits for can hold it back. Lapses
 * are counted; the fence work tells which lapses a run covers (the count
 * when it starts) and when it ends. The timer watches the oldest lapse not
 * yet ended, and restarts the machine only if that one has still not ended
 * when it fires.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/reboot.h>
#include <linux/timekeeping.h>

#include "lfs.h"

static DEFINE_SPINLOCK(lfs_watch_lock); /* irqsave: taken in the timers */
static struct hrtimer lfs_watch_timer;
static u32 lfs_watch_ms; /* the bound; 0: no watchdog */
static u64 lfs_watch_lapses; /* lapses queued to the fence work */
static u64 lfs_watch_ended; /* lapses covered by a run that ended */
static u64 lfs_watch_lapse; /* the lapse watched, 0: none */
static u64 lfs_watch_deadline; /* its deadline (CLOCK_BOOTTIME ns) */
static u64 lfs_watch_expires; /* when the watchdog restarts for it */
static u64 lfs_watch_next; /* the deadline of the last lapse queued */

/* Is @ms a bound (LFS_A_FENCE_WATCHDOG_MS)? 0 is none. */
int lfs_fence_watch_check(u32 ms, struct netlink_ext_ack *extack)
{
	if (ms && (ms < LFS_FENCE_WATCHDOG_MS_MIN ||
		   ms > LFS_FENCE_WATCHDOG_MS_MAX)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "fence watchdog %u ms is not 0 (none) or %u to %u ms",
				   ms, LFS_FENCE_WATCHDOG_MS_MIN,
				   LFS_FENCE_WATCHDOG_MS_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The bound for the lapses to come (checked); a lapse watched keeps its. */
void lfs_fence_watch_set(u32 ms)
{
	WRITE_ONCE(lfs_watch_ms, ms);
}

u32 lfs_fence_watch_ms(void)
{
	return READ_ONCE(lfs_watch_ms);
}

/*
 * Watch @lapse of @deadline: the fence work has the bound from the deadline,
 * or from @now if the lapse is seen later (a timer late by more than the
 * bound, a machine resumed from suspend), so that it always gets the whole
 * bound and a fence that ends never restarts the machine.
 */
static void lfs_watch_arm(u64 lapse, u64 deadline, u64 now)
{
	u32 ms = READ_ONCE(lfs_watch_ms);

	lockdep_assert_held(&lfs_watch_lock);
	if (!ms)
		return;
	lfs_watch_lapse = lapse;
	lfs_watch_deadline = deadline;
	lfs_watch_expires = max(deadline, now) + (u64)ms * NSEC_PER_MSEC;
	hrtimer_start(&lfs_watch_timer, ns_to_ktime(lfs_watch_expires),
		      HRTIMER_MODE_ABS);
}

/* The lapse of @deadline was queued to the fence work. Any context. */
void lfs_fence_watch_lapse(u64 deadline)
{
	unsigned long flags;

	spin_lock_irqsave(&lfs_watch_lock, flags);
	lfs_watch_lapses++;
	lfs_watch_next = deadline;
	if (!lfs_watch_lapse)
		lfs_watch_arm(lfs_watch_lapses, deadline,
			      ktime_get_boottime_ns());
	spin_unlock_irqrestore(&lfs_watch_lock, flags);
}

/* A run of the fence work starts: the lapses it covers. */
u64 lfs_fence_watch_begin(void)
{
	unsigned long flags;
	u64 lapses;

	spin_lock_irqsave(&lfs_watch_lock, flags);
	lapses = lfs_watch_lapses;
	spin_unlock_irqrestore(&lfs_watch_lock, flags);
	return lapses;
}

/*
 * The run that covered every lapse up to @lapses ended: the watchdog stands
 * down for them, or watches a lapse queued since the run started.
 */
void lfs_fence_watch_end(u64 lapses)
{
	unsigned long flags;

	spin_lock_irqsave(&lfs_watch_lock, flags);
	lfs_watch_ended = max(lfs_watch_ended, lapses);
	if (lfs_watch_lapse && lfs_watch_lapse <= lfs_watch_ended) {
		/* a running callback sees the lapse ended, under the lock */
		hrtimer_try_to_cancel(&lfs_watch_timer);
		lfs_watch_lapse = 0;
		if (lfs_watch_lapses > lfs_watch_ended)
			lfs_watch_arm(lfs_watch_lapses, lfs_watch_next,
				      ktime_get_boottime_ns());
	}
	spin_unlock_irqrestore(&lfs_watch_lock, flags);
}

static enum hrtimer_restart lfs_watch_fire(struct hrtimer *timer)
{
	u64 now = ktime_get_boottime_ns(), deadline;
	unsigned long flags;
	bool stuck;

	spin_lock_irqsave(&lfs_watch_lock, flags);
	/* not ended, and its own expiry (not one re-armed meanwhile) */
	stuck = lfs_watch_lapse && lfs_watch_lapse > lfs_watch_ended &&
		now >= lfs_watch_expires;
	deadline = lfs_watch_deadline;
	spin_unlock_irqrestore(&lfs_watch_lock, flags);
	if (!stuck)
		return HRTIMER_NORESTART;
	pr_emerg("the fence of the lease of deadline %llu has not ended %llu ms after it (fence watchdog %u ms): a write stuck in flight could still land; restarting\n",
		 deadline, div_u64(now - min(now, deadline), NSEC_PER_MSEC),
		 READ_ONCE(lfs_watch_ms));
	emergency_restart();
	return HRTIMER_NORESTART;
}

void lfs_fence_watch_init(void)
{
	lfs_hrtimer_setup(&lfs_watch_timer, lfs_watch_fire, CLOCK_BOOTTIME,
			  HRTIMER_MODE_ABS);
}

/* Module unload: the fence work is over (cancel_work_sync()). */
void lfs_fence_watch_exit(void)
{
	hrtimer_cancel(&lfs_watch_timer);
}
