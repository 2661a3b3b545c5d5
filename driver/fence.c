// SPDX-License-Identifier: GPL-2.0
/*
 * Fencing shelves (docs/FENCING.md): one at the node agent's request
 * (LFS_CMD_SHELF_FENCE), or every leased shelf of a lapsed lease, which the
 * shelves' cover of the lease (lease.c) does after the filesystem's files
 * were revoked.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/reboot.h>

#include "lfs.h"

/*
 * Fence one shelf: from now on its bios fail and its DAX device is dead, and
 * when this returns no bio or DAX access that passed the check is still
 * running in this driver. Called with lfs_lock held; may sleep.
 */
void lfs_shelf_fence(struct lfs_shelf *shelf, const char *why)
{
	unsigned int open;

	if (shelf->fenced)
		return;
	WRITE_ONCE(shelf->fenced, true);
	open = lfs_shelf_openers(shelf);
	if (open && lfs_lease_resets()) {
		pr_emerg("%s: shelf '%s' fenced (%s) while open: restarting (fence_action reset)\n",
			 shelf->disk->disk_name, shelf->name, why);
		emergency_restart();
	}
	lfs_io_wait();
	/*
	 * No new bio passes the check now, but a remapped one may still be
	 * on its way to the fabric: wait for its end.
	 */
	lfs_remaps_wait(shelf);
	/*
	 * The bios copied inside lfs_copy_lock() alone, which only a shelf with
	 * a DAX device has (lfs_bio_dax()): waited for here from 6.10, by
	 * kill_dax() (dax_read_lock()) before (compat.h).
	 */
	if (shelf->dax_dev) {
		lfs_copy_wait();
		kill_dax(shelf->dax_dev);
	}
	lfs_generation++;
	if (open)
		pr_warn("%s: shelf '%s' fenced (%s) while open: I/O and new faults fail, pages mapped before stay writable (fence_action eio)\n",
			shelf->disk->disk_name, shelf->name, why);
	else
		pr_notice("%s: shelf '%s' fenced (%s)\n", shelf->disk->disk_name,
			  shelf->name, why);
}

/* The lease lapsed: fence every live shelf of an epoch that ran out. */
static void lfs_shelves_fence_lapsed(const char *why, u64 *refused)
{
	struct lfs_shelf *shelf;

	mutex_lock(&lfs_lock);
	list_for_each_entry(shelf, &lfs_shelves, node)
		if (shelf->leased && lfs_shelf_live(shelf) &&
		    lfs_lease_over(shelf->lease_epoch))
			lfs_shelf_fence(shelf, why);
	mutex_unlock(&lfs_lock);
}

/* Leased shelves that exist, fenced or not. Called with lfs_lock held. */
static unsigned int lfs_shelves_nr_leased(void)
{
	struct lfs_shelf *shelf;
	unsigned int n = 0;

	list_for_each_entry(shelf, &lfs_shelves, node)
		n += shelf->leased;
	return n;
}

/* Fenced shelves, for LFS_CMD_LEASE_GET. Called with lfs_lock held. */
unsigned int lfs_fenced_shelves(void)
{
	struct lfs_shelf *shelf;
	unsigned int n = 0;

	list_for_each_entry(shelf, &lfs_shelves, node)
		n += lfs_shelf_live(shelf) && lfs_shelf_fenced(shelf);
	return n;
}

static const struct lfs_lease_cover lfs_shelves_cover = {
	.nr_leased = lfs_shelves_nr_leased,
	.fence = lfs_shelves_fence_lapsed,
};

void lfs_fence_init(void)
{
	lfs_lease_cover_set(LFS_COVER_SHELVES, &lfs_shelves_cover);
}

void lfs_fence_exit(void)
{
	lfs_lease_cover_set(LFS_COVER_SHELVES, NULL);
}
