// SPDX-License-Identifier: GPL-2.0
/*
 * A shelf's block device: the bio path, block_device_operations, and the
 * gendisk's setup and teardown (its queue limits and flush set: queue.c).
 *
 * The I/O path follows drivers/md/dm-linear.c: a bio that the block layer
 * has split at book boundaries (chunk_sectors = book size) is cloned to its
 * fabric device and resubmitted, or served through the fabric's DAX mapping
 * as drivers/nvdimm/pmem.c serves its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/badblocks.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/module.h>
#include <linux/uio.h>

#include "lfs.h"

static int lfs_major;
static struct bio_set lfs_bioset;

/*
 * A bio remapped to its fabric device is a clone, as dm makes them, so that
 * its end is seen: a fence waits until the shelf's remapped bios have ended
 * (lfs_remaps_wait()), not only until they were handed on. A bio handed on by
 * submit_bio_noacct() inside a submit_bio is only queued; the fabric's driver
 * runs it after this driver's submit_bio has returned, and a slow fabric (a
 * loop device, a disk) writes it much later.
 */
struct lfs_remap {
	struct lfs_shelf *shelf;
	struct bio clone; /* last: the bio_set's front_pad */
};

static struct bio_set lfs_remap_bs;

/* I/O path */

static void lfs_flush_fabrics(struct lfs_shelf *shelf, struct bio *parent)
{
	struct bio *flush;
	unsigned int i, n;

	/* Pairs with lfs_flush_add(): entries below n are written. */
	n = smp_load_acquire(&shelf->nr_flush);

	for (i = 0; i < n; i++) {
		/*
		 * A device-DAX's copies store past the cache (lfs_copy()'s
		 * memcpy_flushcache()): they need only be done, as pmem's
		 * flush of a platform without flush hints does.
		 */
		if (lfs_fabric_devdax(shelf->flush[i])) {
			wmb(); /* the copies' stores are done before the flush ends */
			continue;
		}
		flush = bio_alloc_bioset(shelf->flush[i]->bdev, 0,
					 REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC,
					 GFP_NOIO, &lfs_bioset);
		bio_chain(flush, parent);
		submit_bio_noacct(flush);
	}
}

/*
 * Reads and plain writes to a fabric device that has DAX are served like
 * drivers/nvdimm/pmem.c serves them: copied between the bio's pages and the
 * book's memory, found through dax_direct_access(). Remapping to the fabric's
 * block device costs a second pass through the block layer for the same copy.
 * Everything else is remapped: FUA (the flush after the write is the fabric
 * driver's), discards and the like, fabrics without DAX, and any range the
 * fabric reports bad (dax_direct_access() fails, and the fabric's own bio path
 * then returns -EIO on read or clears the poison on write).
 */
static bool dax_io = true;
module_param(dax_io, bool, 0644);
MODULE_PARM_DESC(dax_io,
		 "Serve reads and writes through the fabric's DAX mapping (default 1); 0 remaps every bio");

static __always_inline blk_status_t lfs_copy(struct bio *bio, void *kaddr)
{
	bool write = op_is_write(bio_op(bio));
	struct bvec_iter iter;
	struct bio_vec bv;
	void *mem;

	bio_for_each_segment(bv, bio, iter) {
		mem = bvec_kmap_local(&bv);
		if (write) {
			memcpy_flushcache(kaddr, mem, bv.bv_len);
		} else if (copy_mc_to_kernel(mem, kaddr, bv.bv_len)) {
			kunmap_local(mem);
			return BLK_STS_IOERR;
		}
		kunmap_local(mem);
		kaddr += bv.bv_len;
	}
	return BLK_STS_OK;
}

/* The book's page that holds the bio's first sector, in the fabric's pages. */
static pgoff_t lfs_bio_pgoff(const struct lfs_extent *ext, sector_t within,
			     unsigned int shift)
{
	return ((pgoff_t)ext->book << (shift - PAGE_SECTORS_SHIFT)) +
	       (within >> PAGE_SECTORS_SHIFT);
}

/*
 * Where the fabric's page is in the mapping kept at attach, or NULL if that
 * mapping may not serve: none kept, bad ranges in the fabric's list
 * (lfs_bio_map() refuses them), bad blocks on the fabric now (pmem
 * refuses a range holding them in dax_direct_access(), and its bio path
 * then fails the read or clears the poison on write), or the fabric's disk
 * deleted. Called inside lfs_copy_lock() or dax_read_lock().
 */
static void *lfs_fabric_page(const struct lfs_fabric *fabric, pgoff_t pgoff)
{
	struct badblocks *bb = fabric->bdev ? fabric->bdev->bd_disk->bb : NULL;

	if (!fabric->kaddr || lfs_fabric_has_bad(fabric) ||
	    !lfs_fabric_mapped(READ_ONCE(fabric->dead), fabric->dax_dev) ||
	    (bb && READ_ONCE(bb->count)))
		return NULL;
	return fabric->kaddr + (pgoff << PAGE_SHIFT);
}

/* Copy and end the bio; kaddr maps the bio's first sector. */
static void lfs_dax_end(struct bio *bio, void *kaddr, sector_t within)
{
	unsigned int off = (within & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;

	bio->bi_status = lfs_copy(bio, kaddr + off);
	bio_endio(bio);
}

/*
 * Returns true if the bio was served (and ended) from the fabric's memory.
 * Called inside dax_read_lock(), which keeps the fabric's mapping alive and
 * lets dax_direct_access() be asked.
 */
static bool lfs_dax_io(struct bio *bio, const struct lfs_extent *ext,
		       sector_t within, unsigned int shift)
{
	struct lfs_fabric *fabric = ext->fabric;
	unsigned int off = (within & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;
	long nr = DIV_ROUND_UP(off + bio->bi_iter.bi_size, PAGE_SIZE);
	pgoff_t pgoff = lfs_bio_pgoff(ext, within, shift);
	void *kaddr;

	if (!fabric->dax_dev || !dax_alive(fabric->dax_dev))
		return false;
	kaddr = lfs_fabric_page(fabric, pgoff);
	if (!kaddr && dax_direct_access(fabric->dax_dev,
					fabric->dax_pgoff + pgoff, nr,
					DAX_ACCESS, &kaddr, NULL) < nr)
		return false;
	lfs_dax_end(bio, kaddr, within);
	return true;
}

/* A read or a plain write: what lfs_dax_io() may serve. */
static bool lfs_bio_copies(const struct bio *bio)
{
	return READ_ONCE(dax_io) &&
	       (bio_op(bio) == REQ_OP_READ ||
		(bio_op(bio) == REQ_OP_WRITE &&
		 !(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH))));
}

static void lfs_remap_endio(struct bio *clone)
{
	struct lfs_remap *remap = container_of(clone, struct lfs_remap, clone);
	struct lfs_shelf *shelf = remap->shelf;
	struct bio *bio = clone->bi_private;

	bio->bi_status = clone->bi_status;
	bio_put(clone);
	/* The shelf outlives its bio, which ends only below. */
	if (atomic_dec_and_test(&shelf->remaps))
		wake_up_var(&shelf->remaps);
	bio_endio(bio);
}

static void lfs_bio_remap(struct lfs_shelf *shelf, struct bio *bio,
			  const struct lfs_extent *ext, sector_t within,
			  unsigned int shift)
{
	struct lfs_remap *remap;
	struct bio *clone;

	clone = bio_alloc_clone(ext->fabric->bdev, bio, GFP_NOIO,
				&lfs_remap_bs);
	if (unlikely(!clone)) {
		bio_io_error(bio);
		return;
	}
	remap = container_of(clone, struct lfs_remap, clone);
	remap->shelf = shelf;
	clone->bi_iter.bi_sector = ext->fabric->start_sect +
				   ((sector_t)ext->book << shift) + within;
	clone->bi_end_io = lfs_remap_endio;
	clone->bi_private = bio;
	atomic_inc(&shelf->remaps);
	submit_bio_noacct(clone);
}

/*
 * Wait until every bio of the shelf remapped to a fabric has ended. Called
 * by the fence once no new bio can pass its check (lease.c). A fabric that
 * never ends a bio holds the fence here: no write may reach the books after
 * the fence has reported done.
 */
void lfs_remaps_wait(struct lfs_shelf *shelf)
{
	wait_var_event(&shelf->remaps, !atomic_read(&shelf->remaps));
}

/* A bio over a bad page (bad.c) fails whole, read or write, as pmem's do. */
static bool lfs_bio_bad(const struct bio *bio, const struct lfs_extent *ext,
			sector_t within, unsigned int shift)
{
	unsigned int off = (within & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;
	u64 page, nr;

	if (likely(!lfs_fabric_has_bad(ext->fabric)))
		return false;
	page = lfs_bio_pgoff(ext, within, shift);
	nr = DIV_ROUND_UP(off + bio->bi_iter.bi_size, PAGE_SIZE);
	return lfs_bad_first(ext->fabric, page, nr) < page + nr;
}

/*
 * A device-DAX has no block device to remap to: reads and writes, FUA ones
 * too (the copy's stores are flushed, wmb() orders them before the end), are
 * copied; anything else is not supported.
 */
static void lfs_bio_devdax(struct bio *bio, const struct lfs_extent *ext,
			   sector_t within, unsigned int shift)
{
	bool done = false;
	int id;

	if (bio_op(bio) != REQ_OP_READ && bio_op(bio) != REQ_OP_WRITE) {
		bio->bi_status = BLK_STS_NOTSUPP;
		bio_endio(bio);
		return;
	}
	id = dax_read_lock();
	done = lfs_dax_io(bio, ext, within, shift);
	dax_read_unlock(id);
	if (!done)
		bio_io_error(bio);
}

/* Served through the DAX mapping, or remapped to the fabric device. */
static void lfs_bio_map(struct lfs_shelf *shelf, struct bio *bio,
			const struct lfs_extent *ext, sector_t within,
			unsigned int shift)
{
	bool done = false;
	int id;

	if (unlikely(lfs_bio_bad(bio, ext, within, shift))) {
		bio_io_error(bio);
		return;
	}
	if (lfs_fabric_devdax(ext->fabric)) {
		lfs_bio_devdax(bio, ext, within, shift);
		return;
	}

	/*
	 * The copy may run after a shrink has dropped this book from the map:
	 * as for a remapped bio in flight, the fabric stays attached while the
	 * book is owned, and a shrink is only allowed while nothing has the
	 * shelf open.
	 */
	if (lfs_bio_copies(bio)) {
		id = dax_read_lock();
		done = lfs_dax_io(bio, ext, within, shift);
		dax_read_unlock(id);
		if (done)
			return;
	}
	lfs_bio_remap(shelf, bio, ext, within, shift);
}

/*
 * The book holding the bio's first sector, or false if beyond the shelf.
 * Inside rcu_read_lock().
 */
static __always_inline bool lfs_bio_book_rcu(struct lfs_shelf *shelf,
					     struct bio *bio,
					     struct lfs_extent *ext)
{
	u64 index = bio->bi_iter.bi_sector >>
		    (shelf->book_shift - SECTOR_SHIFT);
	struct lfs_map *map = rcu_dereference(shelf->map);

	if (index >= map->nr_books)
		return false;
	*ext = map->books[index];
	return true;
}

static bool lfs_bio_book(struct lfs_shelf *shelf, struct bio *bio,
			 struct lfs_extent *ext)
{
	bool found;

	rcu_read_lock();
	found = lfs_bio_book_rcu(shelf, bio, ext);
	rcu_read_unlock();
	return found;
}

static void lfs_shelf_bio(struct lfs_shelf *shelf, struct bio *bio)
{
	unsigned int shift = shelf->book_shift - SECTOR_SHIFT;
	struct lfs_extent ext;
	sector_t sector;

	if (unlikely(bio->bi_opf & REQ_PREFLUSH)) {
		lfs_flush_fabrics(shelf, bio);
		bio->bi_opf &= ~REQ_PREFLUSH;
		if (!bio_sectors(bio)) {
			bio_endio(bio);
			return;
		}
	}

	/*
	 * Only a bio crossing a book boundary needs splitting here: the fabric
	 * device splits to its own limits, as below dm. Testing for that first
	 * spares the common small bio the general splitting code.
	 */
	sector = bio->bi_iter.bi_sector;
	if (unlikely((sector ^ (bio_end_sector(bio) - 1)) >> shift) &&
	    bio_sectors(bio)) {
		bio = bio_split_to_limits(bio);
		if (!bio)
			return;
		sector = bio->bi_iter.bi_sector;
	}
	if (unlikely(!lfs_bio_book(shelf, bio, &ext))) {
		bio_io_error(bio);
		return;
	}
	lfs_bio_map(shelf, bio, &ext, sector & ((1ULL << shift) - 1), shift);
}

/*
 * The common bio, a read or plain write within one book of a shelf with a
 * DAX device, is copied through the mapping kept at attach inside
 * lfs_copy_lock() alone (compat.h): RCU from 6.10, where the fabric's
 * deletion is told to us (lfs_fabric_dead()), dax_read_lock() before. A
 * fence sets the flag checked here, then waits for this section: by
 * lfs_copy_wait() or by its kill_dax() of the shelf's DAX device. No SRCU
 * read section (a full memory barrier on entry and on exit) from 6.10, one
 * before: each is about 0.1 us per 4 KiB write under TCG
 * (docs/bench-driver.md).
 * Returns false, having done nothing, for any other bio, and for one the
 * mapping cannot serve (none kept, bad blocks, a deleted fabric).
 */
static bool lfs_bio_dax(struct lfs_shelf *shelf, struct bio *bio)
{
	unsigned int shift = shelf->book_shift - SECTOR_SHIFT;
	sector_t sector = bio->bi_iter.bi_sector, within;
	struct lfs_extent ext;
	bool done = true;
	void *kaddr;
	int id;

	if (!shelf->dax_dev || !lfs_bio_copies(bio) || !bio_sectors(bio) ||
	    ((sector ^ (bio_end_sector(bio) - 1)) >> shift))
		return false;
	within = sector & ((1ULL << shift) - 1);
	id = lfs_copy_lock();
	if (unlikely(READ_ONCE(shelf->dying) || lfs_shelf_fenced(shelf) ||
		     !lfs_bio_book_rcu(shelf, bio, &ext))) {
		bio_io_error(bio);
	} else {
		kaddr = lfs_fabric_page(ext.fabric,
					lfs_bio_pgoff(&ext, within, shift));
		if (kaddr && !READ_ONCE(shelf->moving))
			lfs_dax_end(bio, kaddr, within);
		else
			done = false;
	}
	lfs_copy_unlock(id);
	return done;
}

/*
 * A removed shelf's books may be another shelf's already, and a fenced
 * shelf's may be another node's: their bios fail. The check and the whole
 * remap or copy run inside lfs_io_lock(), which a fence waits for, or, for
 * the common copy, inside lfs_copy_lock() (lfs_bio_dax()).
 */
static void lfs_submit_bio(struct bio *bio)
{
	struct lfs_shelf *shelf = bio->bi_bdev->bd_disk->private_data;
	int idx;

again:
	if (lfs_bio_dax(shelf, bio))
		return;
	idx = lfs_io_lock();
	if (lfs_move_gated(shelf, idx))
		goto again;
	if (unlikely(READ_ONCE(shelf->dying) || lfs_shelf_fenced(shelf)))
		bio_io_error(bio);
	else
		lfs_shelf_bio(shelf, bio);
	lfs_io_unlock(idx);
}

/* block_device_operations.open, through lfs_bdops_open(). */
static int lfs_disk_open(struct gendisk *disk, bool write)
{
	struct lfs_shelf *shelf = disk->private_data;
	int ret = 0;

	mutex_lock(&shelf->open_lock);
	if (shelf->dying) {
		ret = -ENXIO;
	} else if (lfs_shelf_fenced(shelf)) {
		ret = -EIO;
	} else {
		shelf->open_count++;
		if (shelf->leased)
			atomic_inc(&lfs_leased_open);
		/* a writer may change the content: udev must probe again */
		if (write)
			WRITE_ONCE(shelf->zeroed, false);
	}
	mutex_unlock(&shelf->open_lock);
	return ret;
}

static void lfs_disk_release(struct gendisk *disk)
{
	struct lfs_shelf *shelf = disk->private_data;

	mutex_lock(&shelf->open_lock);
	shelf->open_count--;
	if (shelf->leased)
		atomic_dec(&lfs_leased_open);
	mutex_unlock(&shelf->open_lock);
}

/* From 6.5 open and release take the gendisk and a blk_mode_t. */
#ifdef LFS_HAVE_BLK_MODE
static int lfs_bdops_open(struct gendisk *disk, blk_mode_t mode)
{
	return lfs_disk_open(disk, mode & BLK_OPEN_WRITE);
}

static void lfs_bdops_release(struct gendisk *disk)
{
	lfs_disk_release(disk);
}
#else
static int lfs_bdops_open(struct block_device *bdev, fmode_t mode)
{
	return lfs_disk_open(bdev->bd_disk, mode & FMODE_WRITE);
}

static void lfs_bdops_release(struct gendisk *disk, fmode_t mode)
{
	lfs_disk_release(disk);
}
#endif

static const struct block_device_operations lfs_fops = {
	.owner = THIS_MODULE,
	.submit_bio = lfs_submit_bio,
	.open = lfs_bdops_open,
	.release = lfs_bdops_release,
};

/* Block device setup and teardown, in the order of drivers/nvdimm/pmem.c. */

int lfs_disk_create(struct lfs_shelf *shelf, u32 nr_books,
		    struct netlink_ext_ack *extack)
{
	struct gendisk *disk;
	int ret;

	disk = lfs_queue_alloc(shelf);
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	disk->major = lfs_major;
	disk->first_minor = shelf->id;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &lfs_fops;
	disk->private_data = shelf;
	snprintf(disk->disk_name, DISK_NAME_LEN, "lfs%d", shelf->id);
	shelf->disk = disk;
	set_capacity(disk, lfs_map_sectors(shelf, nr_books));

	ret = lfs_dax_add(shelf, disk);
	if (ret) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"setting up DAX for shelf '%s' failed (error %d)",
			shelf->name, ret);
		goto out_put_disk;
	}
	ret = device_add_disk(NULL, disk, lfs_disk_groups);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack, "adding disk %s failed (error %d)",
				   disk->disk_name, ret);
		goto out_remove_dax;
	}
	return 0;

out_remove_dax:
	lfs_dax_remove(shelf);
out_put_disk:
	put_disk(disk);
	shelf->disk = NULL;
	return ret;
}

/* The rest of a removal, after the DAX device is gone (lfs_dax_remove). */
void lfs_disk_delete(struct lfs_shelf *shelf)
{
	del_gendisk(shelf->disk);
	put_disk(shelf->disk);
}

int lfs_disk_init(void)
{
	int ret;

	ret = bioset_init(&lfs_bioset, BIO_POOL_SIZE, 0, BIOSET_NEED_RESCUER);
	if (ret)
		return ret;
	ret = bioset_init(&lfs_remap_bs, BIO_POOL_SIZE,
			  offsetof(struct lfs_remap, clone), BIOSET_NEED_RESCUER);
	if (ret)
		goto out_bioset;
	lfs_major = register_blkdev(0, "lfs");
	if (lfs_major < 0) {
		ret = lfs_major;
		goto out_remap_bs;
	}
	return 0;

out_remap_bs:
	bioset_exit(&lfs_remap_bs);
out_bioset:
	bioset_exit(&lfs_bioset);
	return ret;
}

void lfs_disk_exit(void)
{
	unregister_blkdev(lfs_major, "lfs");
	bioset_exit(&lfs_remap_bs);
	bioset_exit(&lfs_bioset);
}
