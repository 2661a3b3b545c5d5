// SPDX-License-Identifier: GPL-2.0
/*
 * The fabric devices under a shelf's disk: the set its flushes go to, and
 * the queue limits stacked from them (a device-DAX has no queue: compat.h's
 * lfs_limits_devdax()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>

#include "lfs.h"

/* The set of fabric devices a shelf's flushes go to. */

bool lfs_flush_has(struct lfs_shelf *shelf, struct lfs_fabric *fabric)
{
	unsigned int i;

	for (i = 0; i < shelf->nr_flush; i++)
		if (shelf->flush[i] == fabric)
			return true;
	return false;
}

void lfs_flush_add(struct lfs_shelf *shelf, struct lfs_fabric *fabric)
{
	if (lfs_flush_has(shelf, fabric))
		return;
	shelf->flush[shelf->nr_flush] = fabric;
	/* Publish the entry before the count; see lfs_flush_fabrics(). */
	smp_store_release(&shelf->nr_flush, shelf->nr_flush + 1);
}

void lfs_flush_rebuild(struct lfs_shelf *shelf, struct lfs_map *map)
{
	u32 i;

	shelf->nr_flush = 0;
	for (i = 0; i < map->nr_books; i++)
		lfs_flush_add(shelf, map->books[i].fabric);
}

/*
 * The queue: limits stacked from every fabric device (as dm does), a book
 * per chunk so that no bio crosses a book boundary, write cache and FUA if
 * any fabric device has them, DAX if every one has.
 */
struct gendisk *lfs_queue_alloc(struct lfs_shelf *shelf)
{
	struct queue_limits lim;
	bool wc = false, fua = false;
	unsigned int i;

	blk_set_stacking_limits(&lim);
	for (i = 0; i < shelf->nr_flush; i++) {
		struct block_device *bdev = shelf->flush[i]->bdev;

		if (!bdev) {
			lfs_limits_devdax(&lim);
			continue;
		}
		if (blk_stack_limits(&lim, &bdev_get_queue(bdev)->limits,
				     get_start_sect(bdev) +
					     shelf->flush[i]->start_sect) < 0)
			pr_notice("%s: %pg is misaligned\n", shelf->name, bdev);
		wc |= bdev_write_cache(bdev);
		fua |= bdev_fua(bdev);
	}
	lim.chunk_sectors = shelf->book_size >> SECTOR_SHIFT;
	return lfs_alloc_disk(&lim, wc, fua, lfs_dax_capable(shelf));
}

/* A fabric device new to an open shelf: its limits join the queue's. */
void lfs_disk_stack_fabric(struct lfs_shelf *shelf, struct lfs_fabric *fabric)
{
	/* what a device-DAX limits (lfs_limits_devdax()) no shelf has ever */
	if (lfs_fabric_devdax(fabric))
		return;
	if (lfs_queue_stack_bdev(shelf->disk->queue, fabric->bdev,
				 get_start_sect(fabric->bdev) +
					 fabric->start_sect,
				 shelf->book_size >> SECTOR_SHIFT))
		pr_notice("%s: %pg is misaligned\n", shelf->name, fabric->bdev);
}
