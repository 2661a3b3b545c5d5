// SPDX-License-Identifier: GPL-2.0
/*
 * The node's lease and the fencing of shelves (docs/FENCING.md).
 *
 * The node agent renews the lease after the librarian received a heartbeat,
 * giving the time the heartbeat was sent; the deadline only moves forward.
 * Every shelf created with LFS_A_LEASED is covered, and every file of the
 * filesystem whose OPEN the server answered with LFS_A_LEASED (fs_map.c:
 * those are revoked, never a reason to reset).
 *
 * Each covered object records the lease epoch it was activated under, and
 * is fenced from the instant that epoch's deadline passes: every check
 * (bios, DAX accesses, read, write, faults) compares the clock with the
 * deadline, locklessly, so all covered objects refuse at once, before any
 * work item runs, and however late the timer. A renewal that arrives after
 * the deadline starts a new epoch: it never makes an object of the old one
 * writable again; only a new activation does.
 *
 * When the deadline passes an hrtimer fires: with LFS_FENCE_RESET and any
 * covered shelf open, the machine restarts from the timer itself (a page a
 * DAX filesystem mapped cannot be taken back, so nothing short of stopping
 * the CPUs stops its stores); otherwise a work item unmaps every covered
 * file's mappings first, without waiting for anything, then waits for the
 * reads and writes in flight and fences the shelves (docs/FENCING.md). The
 * lease knows the files and the shelves only as the covers their owners
 * register (fs_active.c, fence.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/reboot.h>
#include <linux/srcu.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "lfs.h"

static DEFINE_SPINLOCK(lfs_lease_lock); /* orders renewals */
static u64 lfs_lease_deadline; /* CLOCK_BOOTTIME ns; valid if lfs_lease_ms */
/* The lease's epoch: a new one for a renewal after the deadline. */
static u64 lfs_lease_epoch = 1;
static u32 lfs_lease_ms; /* 0: no lease enforced */
static u32 lfs_lease_action = LFS_FENCE_RESET;
static struct hrtimer lfs_lease_timer;
static struct work_struct lfs_fence_work;
/*
 * The fence latency: the deadline of the lapse the fence work has still to
 * measure (0: none), and the figures of the lapses measured so far.
 */
static u64 lfs_fence_deadline;
static u64 lfs_fence_queued; /* the last deadline queued to be measured */
static u64 lfs_fence_fired; /* when it was queued (the timer fired) */
static DEFINE_SPINLOCK(lfs_fence_stats_lock);
static struct lfs_fence_stats lfs_fence_stats;

/* Opens of covered shelves: what a reset must protect. */
atomic_t lfs_leased_open = ATOMIC_INIT(0);

/* Bios and DAX accesses of shelves between their fence check and their end. */
DEFINE_STATIC_SRCU(lfs_io_srcu);

/* What the lease covers, in the order fenced (lfs_lease_cover_set()). */
static const struct lfs_lease_cover *lfs_lease_covers[LFS_COVERS];

int lfs_io_lock(void)
{
	return srcu_read_lock(&lfs_io_srcu);
}

void lfs_io_unlock(int idx)
{
	srcu_read_unlock(&lfs_io_srcu, idx);
}

/* Wait for every bio and DAX access that passed its fence check. */
void lfs_io_wait(void)
{
	synchronize_srcu(&lfs_io_srcu);
}

/*
 * Covered objects are registered by their owners, so that the lease knows
 * none of them: the filesystem's files (fs_active.c) and the shelves
 * (fence.c). @cover stays until the module is unloaded (the fence work may
 * still hold it after a NULL is set); NULL unregisters.
 */
void lfs_lease_cover_set(unsigned int slot, const struct lfs_lease_cover *cover)
{
	WRITE_ONCE(lfs_lease_covers[slot], cover);
}

/* Does a fence of an open covered shelf restart the machine? */
bool lfs_lease_resets(void)
{
	return READ_ONCE(lfs_lease_action) == LFS_FENCE_RESET;
}

/*
 * Has the lease of @epoch run out, now or before? Lockless: every access
 * to a covered object asks. A deadline read here belongs to @epoch if the
 * epoch read after it is still @epoch (lfs_lease_renew() writes them in the
 * other order); once the deadline has passed, an epoch never comes back.
 */
bool lfs_lease_over(u64 epoch)
{
	u64 deadline = READ_ONCE(lfs_lease_deadline);

	smp_rmb(); /* pairs with smp_wmb() in lfs_lease_renew() */
	if (READ_ONCE(lfs_lease_epoch) != epoch)
		return true;
	return ktime_get_boottime_ns() >= deadline;
}

/* ns from @deadline to @t, 0 if before */
static u64 lfs_since(u64 deadline, u64 t)
{
	return t > deadline ? t - deadline : 0;
}

/*
 * Record one lapse: @refused and @done are CLOCK_BOOTTIME ns when every
 * covered object refused writes and stores, and when the fence ended; the
 * log line also says when the timer fired and the work started.
 */
static void lfs_fence_note(u64 deadline, u64 started, u64 refused, u64 done)
{
	struct lfs_fence_stats *st = &lfs_fence_stats;
	u64 lat = lfs_since(deadline, refused), end = lfs_since(deadline, done);
	unsigned int b = 0;

	while (b < LFS_FENCE_HIST - 1 && lat >= (NSEC_PER_MSEC << b))
		b++;
	spin_lock(&lfs_fence_stats_lock);
	st->count++;
	st->last_ns = lat;
	st->max_ns = max(st->max_ns, lat);
	st->done_last_ns = end;
	st->done_max_ns = max(st->done_max_ns, end);
	st->hist[b]++;
	spin_unlock(&lfs_fence_stats_lock);
	pr_info("fence of the lease of deadline %llu: timer after %llu us, work after %llu us, every covered object refused after %llu us, the fence ended after %llu us\n",
		deadline,
		div_u64(lfs_since(deadline, READ_ONCE(lfs_fence_fired)),
			NSEC_PER_USEC),
		div_u64(lfs_since(deadline, started), NSEC_PER_USEC),
		div_u64(lat, NSEC_PER_USEC), div_u64(end, NSEC_PER_USEC));
}

void lfs_fence_stats_get(struct lfs_fence_stats *out)
{
	spin_lock(&lfs_fence_stats_lock);
	*out = lfs_fence_stats;
	spin_unlock(&lfs_fence_stats_lock);
}

/*
 * Every object the lapsed lease covered refuses already (lfs_lease_over()).
 * The files of the filesystem are revoked first, outside lfs_lock: their
 * mappings go before anything is waited for; from then on every covered
 * object refuses writes and stores (the fence latency). Then the shelves,
 * each of which waits for its I/O in flight.
 */
static void lfs_fence_leased(struct work_struct *work)
{
	u64 started = ktime_get_boottime_ns(), refused = started;
	u64 deadline = xchg(&lfs_fence_deadline, 0);
	u64 lapses = lfs_fence_watch_begin();
	const struct lfs_lease_cover *cover;
	unsigned int i;

	for (i = 0; i < LFS_COVERS; i++) {
		cover = READ_ONCE(lfs_lease_covers[i]);
		if (cover)
			cover->fence("the node's lease expired", &refused);
	}
	lfs_fence_watch_end(lapses);
	if (deadline)
		lfs_fence_note(deadline, started, refused,
			       ktime_get_boottime_ns());
}

/* Queue the fence work for the lapse of @deadline, measured once. */
static void lfs_fence_queue(u64 deadline)
{
	u64 prev = READ_ONCE(lfs_fence_queued);

	if (prev != deadline &&
	    cmpxchg(&lfs_fence_queued, prev, deadline) == prev) {
		WRITE_ONCE(lfs_fence_fired, ktime_get_boottime_ns());
		WRITE_ONCE(lfs_fence_deadline, deadline);
		/* before the work is queued: its run counts this lapse */
		lfs_fence_watch_lapse(deadline);
	}
	queue_work(system_highpri_wq, &lfs_fence_work);
}

static enum hrtimer_restart lfs_lease_fire(struct hrtimer *timer)
{
	u64 deadline = READ_ONCE(lfs_lease_deadline);

	if (!READ_ONCE(lfs_lease_ms))
		return HRTIMER_NORESTART;
	/* renewed since the timer was set */
	if (ktime_get_boottime_ns() < deadline) {
		hrtimer_set_expires(timer, ns_to_ktime(deadline));
		return HRTIMER_RESTART;
	}
	if (READ_ONCE(lfs_lease_action) == LFS_FENCE_RESET &&
	    atomic_read(&lfs_leased_open)) {
		pr_emerg("the node's lease expired with a leased shelf open: restarting (fence_action reset)\n");
		emergency_restart();
	}
	lfs_fence_queue(deadline);
	return HRTIMER_NORESTART;
}

/*
 * Move the deadline to @deadline if it is later. A lease whose deadline has
 * passed (or none) gets a new epoch: what the old one covered stays fenced,
 * since the librarian may have given it to another node. The clock is read
 * under lfs_lease_lock, after any renewal before it.
 */
static void lfs_lease_extend(u64 deadline)
{
	u64 old = lfs_lease_deadline;

	lockdep_assert_held(&lfs_lease_lock);
	if (!lfs_lease_ms ||
	    ktime_get_boottime_ns() >= lfs_lease_deadline) {
		WRITE_ONCE(lfs_lease_epoch, lfs_lease_epoch + 1);
		smp_wmb(); /* the epoch before the deadline: lfs_lease_over() */
		WRITE_ONCE(lfs_lease_deadline, deadline);
		if (!lfs_lease_ms)
			return;
		pr_notice("the node's lease was renewed after its deadline: a new lease (epoch %llu); what the old one covered stays fenced\n",
			  lfs_lease_epoch);
		/* the timer, re-armed now, may not have fired for the old one */
		lfs_fence_queue(old);
	} else if (deadline > lfs_lease_deadline) {
		WRITE_ONCE(lfs_lease_deadline, deadline);
	}
}

/*
 * Leased objects that exist (fenced or not): shelves and files of the
 * filesystem open under the lease. Called with lfs_lock held.
 */
static unsigned int lfs_lease_nr_covered(void)
{
	const struct lfs_lease_cover *cover;
	unsigned int i, n = 0;

	for (i = 0; i < LFS_COVERS; i++) {
		cover = READ_ONCE(lfs_lease_covers[i]);
		if (cover)
			n += cover->nr_leased();
	}
	return n;
}

/*
 * A renewal the librarian received, sent at @start (CLOCK_BOOTTIME ns);
 * @action and @watch_ms (the fence watchdog, fence_watch.c) are kept for
 * the lapses to come unless negative (absent).
 */
int lfs_lease_renew(u64 start, u32 ms, int action, s64 watch_ms,
		    struct netlink_ext_ack *extack)
{
	u64 now = ktime_get_boottime_ns(), deadline;
	int ret;

	/* first, so that nothing of a refused renewal takes effect */
	if (watch_ms >= 0) {
		ret = lfs_fence_watch_check(watch_ms, extack);
		if (ret)
			return ret;
	}

	if (!ms) {
		if (lfs_lease_nr_covered()) {
			NL_SET_ERR_MSG(extack,
				       "leased shelves exist: the lease cannot be given up");
			return -EBUSY;
		}
		WRITE_ONCE(lfs_lease_ms, 0);
		hrtimer_cancel(&lfs_lease_timer);
		return 0;
	}
	if (ms < LFS_LEASE_MS_MIN || ms > LFS_LEASE_MS_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "lease %u ms is not %u to %u ms", ms,
				   LFS_LEASE_MS_MIN, LFS_LEASE_MS_MAX);
		return -EINVAL;
	}
	if (start > now) {
		NL_SET_ERR_MSG_FMT(extack,
				   "renewal start %llu is in the future (now %llu)",
				   start, now);
		return -EINVAL;
	}
	deadline = start + (u64)ms * NSEC_PER_MSEC;
	if (deadline <= now) {
		NL_SET_ERR_MSG_FMT(extack,
				   "renewal sent %llu ms ago is older than the lease (%u ms)",
				   div_u64(now - start, NSEC_PER_MSEC), ms);
		return -EINVAL;
	}
	spin_lock(&lfs_lease_lock);
	if (action >= 0)
		WRITE_ONCE(lfs_lease_action, action);
	if (watch_ms >= 0)
		lfs_fence_watch_set(watch_ms);
	lfs_lease_extend(deadline);
	deadline = lfs_lease_deadline;
	WRITE_ONCE(lfs_lease_ms, ms);
	spin_unlock(&lfs_lease_lock);
	hrtimer_start(&lfs_lease_timer, ns_to_ktime(deadline),
		      HRTIMER_MODE_ABS);
	return 0;
}

/*
 * Can a leased shelf or file be activated now? If so, *@epoch is the
 * lease's epoch, which the object keeps: when that lease runs out, the
 * object is fenced.
 */
int lfs_lease_check(struct netlink_ext_ack *extack, u64 *epoch)
{
	int ret = 0;

	spin_lock(&lfs_lease_lock);
	*epoch = lfs_lease_epoch;
	if (!lfs_lease_ms) {
		NL_SET_ERR_MSG(extack,
			       "this node holds no lease: is the node agent (lfs-agent) running?");
		ret = -ENOLCK;
	} else if (lfs_lease_over(*epoch)) {
		NL_SET_ERR_MSG(extack,
			       "this node's lease expired: no leased shelf until the agent renews it");
		ret = -ENOLCK;
	}
	spin_unlock(&lfs_lease_lock);
	return ret;
}

void lfs_lease_get(u32 *ms, s64 *left_ms, u32 *action)
{
	*ms = READ_ONCE(lfs_lease_ms);
	*action = READ_ONCE(lfs_lease_action);
	*left_ms = *ms ? div_s64((s64)READ_ONCE(lfs_lease_deadline) -
					 (s64)ktime_get_boottime_ns(),
				 NSEC_PER_MSEC) :
			 0;
}

void lfs_lease_init(void)
{
	lfs_hrtimer_setup(&lfs_lease_timer, lfs_lease_fire, CLOCK_BOOTTIME,
			  HRTIMER_MODE_ABS);
	INIT_WORK(&lfs_fence_work, lfs_fence_leased);
	lfs_fence_watch_init();
}

/* Module unload: no shelf is left (each holds a module reference). */
void lfs_lease_exit(void)
{
	hrtimer_cancel(&lfs_lease_timer);
	cancel_work_sync(&lfs_fence_work);
	lfs_fence_watch_exit();
}
