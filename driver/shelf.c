// SPDX-License-Identifier: GPL-2.0
/*
 * Shelves: ordered lists of books presented as DAX-capable block devices.
 *
 * The I/O path follows drivers/md/dm-linear.c without cloning: a bio that
 * the block layer has split at book boundaries (chunk_sectors = book size)
 * is remapped in place to its fabric device and resubmitted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/badblocks.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/dax.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uio.h>

#include "lfs.h"

LIST_HEAD(lfs_shelves);
DEFINE_IDR(lfs_shelf_ids);

static int lfs_major;
static struct bio_set lfs_bioset;
static struct workqueue_struct *lfs_reaper;

/* Has a block device, and is not being removed. Under lfs_lock. */
bool lfs_shelf_live(const struct lfs_shelf *shelf)
{
	return shelf->disk && !shelf->dying;
}

struct lfs_shelf *lfs_shelf_find(const char *name)
{
	struct lfs_shelf *shelf;

	list_for_each_entry(shelf, &lfs_shelves, node)
		if (!strcmp(shelf->name, name))
			return shelf;
	return NULL;
}

static unsigned int lfs_shelf_count(void)
{
	struct lfs_shelf *shelf;
	unsigned int n = 0;

	list_for_each_entry(shelf, &lfs_shelves, node)
		n++;
	return n;
}

unsigned int lfs_shelf_openers(struct lfs_shelf *shelf)
{
	unsigned int n;

	mutex_lock(&shelf->open_lock);
	n = shelf->open_count;
	mutex_unlock(&shelf->open_lock);
	return n;
}

static struct lfs_map *lfs_shelf_map(struct lfs_shelf *shelf)
{
	return rcu_dereference_protected(shelf->map,
					 lockdep_is_held(&lfs_lock));
}

static struct lfs_map *lfs_map_alloc(u32 nr_books)
{
	struct lfs_map *map =
		kvzalloc(struct_size(map, books, nr_books), GFP_KERNEL);

	if (map)
		map->nr_books = nr_books;
	return map;
}

static sector_t lfs_map_sectors(const struct lfs_shelf *shelf, u32 nr_books)
{
	return (sector_t)nr_books << (shelf->book_shift - SECTOR_SHIFT);
}

/* I/O path */

static void lfs_flush_fabrics(struct lfs_shelf *shelf, struct bio *parent)
{
	struct bio *flush;
	unsigned int i, n;

	/* Pairs with lfs_flush_add(): entries below n are written. */
	n = smp_load_acquire(&shelf->nr_flush);

	for (i = 0; i < n; i++) {
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

static blk_status_t lfs_copy(struct bio *bio, void *kaddr)
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

/* Returns true if the bio was served (and ended) from the fabric's memory. */
static bool lfs_dax_io(struct bio *bio, const struct lfs_extent *ext,
		       sector_t within, unsigned int shift)
{
	struct lfs_fabric *fabric = ext->fabric;
	struct badblocks *bb = fabric->bdev->bd_disk->bb;
	unsigned int off = (within & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;
	long nr = DIV_ROUND_UP(off + bio->bi_iter.bi_size, PAGE_SIZE);
	pgoff_t pgoff = ((pgoff_t)ext->book << (shift - PAGE_SECTORS_SHIFT)) +
			(within >> PAGE_SECTORS_SHIFT);
	blk_status_t status;
	void *kaddr;
	int id;

	id = dax_read_lock();
	if (!dax_alive(fabric->dax_dev))
		goto remap;
	/*
	 * With no bad blocks anywhere on the fabric, the mapping found at
	 * attach time serves; otherwise the fabric driver checks this range
	 * (pmem refuses a range holding bad blocks, and its bio path then
	 * fails the read or clears the poison on write).
	 */
	if (fabric->kaddr && !(bb && READ_ONCE(bb->count)))
		kaddr = fabric->kaddr + (pgoff << PAGE_SHIFT);
	else if (dax_direct_access(fabric->dax_dev, fabric->dax_pgoff + pgoff,
				   nr, DAX_ACCESS, &kaddr, NULL) < nr)
		goto remap;
	status = lfs_copy(bio, kaddr + off);
	dax_read_unlock(id);
	bio->bi_status = status;
	bio_endio(bio);
	return true;
remap:
	dax_read_unlock(id);
	return false;
}

static void lfs_submit_bio(struct bio *bio)
{
	struct lfs_shelf *shelf = bio->bi_bdev->bd_disk->private_data;
	unsigned int shift = shelf->book_shift - SECTOR_SHIFT;
	struct lfs_extent ext;
	struct lfs_map *map;
	sector_t sector, within;
	u64 index;

	/* Removed (it was closed): its books may be another shelf's already. */
	if (unlikely(READ_ONCE(shelf->dying))) {
		bio_io_error(bio);
		return;
	}
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
	index = sector >> shift;
	within = sector & ((1ULL << shift) - 1);
	rcu_read_lock();
	map = rcu_dereference(shelf->map);
	if (unlikely(index >= map->nr_books)) {
		rcu_read_unlock();
		bio_io_error(bio);
		return;
	}
	ext = map->books[index];
	rcu_read_unlock();

	/*
	 * The copy may run after a shrink has dropped this book from the map:
	 * as for a remapped bio in flight, the fabric stays attached while the
	 * book is owned, and a shrink is only allowed while nothing has the
	 * shelf open.
	 */
	if (READ_ONCE(dax_io) && ext.fabric->dax_dev &&
	    (bio_op(bio) == REQ_OP_READ ||
	     (bio_op(bio) == REQ_OP_WRITE && !(bio->bi_opf & REQ_FUA))) &&
	    lfs_dax_io(bio, &ext, within, shift))
		return;

	bio_set_dev(bio, ext.fabric->bdev);
	bio->bi_iter.bi_sector = ext.fabric->start_sect +
				 ((sector_t)ext.book << shift) + within;
	submit_bio_noacct(bio);
}

static int lfs_open(struct block_device *bdev, fmode_t mode)
{
	struct lfs_shelf *shelf = bdev->bd_disk->private_data;
	int ret = 0;

	mutex_lock(&shelf->open_lock);
	if (shelf->dying) {
		ret = -ENXIO;
	} else {
		shelf->open_count++;
		/* a writer may change the content: udev must probe again */
		if (mode & FMODE_WRITE)
			WRITE_ONCE(shelf->zeroed, false);
	}
	mutex_unlock(&shelf->open_lock);
	return ret;
}

static void lfs_release(struct gendisk *disk, fmode_t mode)
{
	struct lfs_shelf *shelf = disk->private_data;

	mutex_lock(&shelf->open_lock);
	shelf->open_count--;
	mutex_unlock(&shelf->open_lock);
}

static const struct block_device_operations lfs_fops = {
	.owner = THIS_MODULE,
	.submit_bio = lfs_submit_bio,
	.open = lfs_open,
	.release = lfs_release,
};

/* DAX: translate a shelf page offset to its book's fabric dax_device. */

static struct dax_device *lfs_dax_pgoff(struct lfs_shelf *shelf, pgoff_t *pgoff,
					long *nr_pages)
{
	unsigned int shift = shelf->book_shift - PAGE_SHIFT;
	pgoff_t within = *pgoff & ((1UL << shift) - 1);
	u64 index = *pgoff >> shift;
	const struct lfs_extent *ext;
	struct lfs_fabric *fabric;
	struct lfs_map *map;

	rcu_read_lock();
	map = rcu_dereference(shelf->map);
	if (index >= map->nr_books) {
		rcu_read_unlock();
		return NULL;
	}
	ext = &map->books[index];
	fabric = ext->fabric;
	*pgoff = fabric->dax_pgoff + ((pgoff_t)ext->book << shift) + within;
	rcu_read_unlock();

	if (nr_pages)
		*nr_pages = min_t(long, *nr_pages, (1L << shift) - within);
	return fabric->dax_dev;
}

static long lfs_dax_direct_access(struct dax_device *dax_dev, pgoff_t pgoff,
				  long nr_pages, enum dax_access_mode mode,
				  void **kaddr, pfn_t *pfn)
{
	struct dax_device *lower =
		lfs_dax_pgoff(dax_get_private(dax_dev), &pgoff, &nr_pages);

	if (!lower)
		return -ERANGE;
	return dax_direct_access(lower, pgoff, nr_pages, mode, kaddr, pfn);
}

static int lfs_dax_zero_page_range(struct dax_device *dax_dev, pgoff_t pgoff,
				   size_t nr_pages)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct dax_device *lower;
	pgoff_t lower_pgoff;
	long n;
	int ret;

	while (nr_pages) {
		lower_pgoff = pgoff;
		n = min_t(size_t, nr_pages, LONG_MAX);
		lower = lfs_dax_pgoff(shelf, &lower_pgoff, &n);
		if (!lower)
			return -ERANGE;
		ret = dax_zero_page_range(lower, lower_pgoff, n);
		if (ret)
			return ret;
		pgoff += n;
		nr_pages -= n;
	}
	return 0;
}

static size_t lfs_dax_recovery_write(struct dax_device *dax_dev, pgoff_t pgoff,
				     void *addr, size_t bytes,
				     struct iov_iter *iter)
{
	struct dax_device *lower =
		lfs_dax_pgoff(dax_get_private(dax_dev), &pgoff, NULL);

	if (!lower)
		return 0;
	return dax_recovery_write(lower, pgoff, addr, bytes, iter);
}

static const struct dax_operations lfs_dax_ops = {
	.direct_access = lfs_dax_direct_access,
	.zero_page_range = lfs_dax_zero_page_range,
	.recovery_write = lfs_dax_recovery_write,
};

/* sysfs: /sys/block/lfsN/lfs/ */

static struct lfs_shelf *lfs_dev_shelf(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t name_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", lfs_dev_shelf(dev)->name);
}
static DEVICE_ATTR_RO(name);

static ssize_t uuid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%pUb\n", &lfs_dev_shelf(dev)->uuid);
}
static DEVICE_ATTR_RO(uuid);

static ssize_t book_size_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%llu\n", lfs_dev_shelf(dev)->book_size);
}
static DEVICE_ATTR_RO(book_size);

static ssize_t dax_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", lfs_dev_shelf(dev)->dax_dev ? 1 : 0);
}
static DEVICE_ATTR_RO(dax);

static ssize_t zeroed_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(lfs_dev_shelf(dev)->zeroed));
}
static DEVICE_ATTR_RO(zeroed);

/*
 * books: one "IG:BOOK" line per book in shelf order. The list can be far
 * longer than a page, so it is a binary attribute read in pieces; the text
 * is produced on the fly from the book map.
 */
static ssize_t books_read(struct file *file, struct kobject *kobj,
			  struct bin_attribute *attr, char *buf, loff_t off,
			  size_t count)
{
	struct lfs_shelf *shelf = lfs_dev_shelf(kobj_to_dev(kobj));
	char line[24];
	size_t done = 0;
	loff_t pos = 0;
	struct lfs_map *map;
	u32 i;
	int len;

	rcu_read_lock();
	map = rcu_dereference(shelf->map);
	for (i = 0; i < map->nr_books && done < count; i++) {
		len = scnprintf(line, sizeof(line), "%u:%u\n",
				map->books[i].fabric->ig, map->books[i].book);
		if (pos + len > off) {
			size_t skip = off > pos ? off - pos : 0;
			size_t n = min_t(size_t, len - skip, count - done);

			memcpy(buf + done, line + skip, n);
			done += n;
		}
		pos += len;
	}
	rcu_read_unlock();
	return done;
}
static BIN_ATTR_RO(books, 0);

static struct attribute *lfs_attrs[] = {
	&dev_attr_name.attr,
	&dev_attr_uuid.attr,
	&dev_attr_book_size.attr,
	&dev_attr_dax.attr,
	&dev_attr_zeroed.attr,
	NULL,
};

static struct bin_attribute *lfs_bin_attrs[] = {
	&bin_attr_books,
	NULL,
};

static const struct attribute_group lfs_attr_group = {
	.name = "lfs",
	.attrs = lfs_attrs,
	.bin_attrs = lfs_bin_attrs,
};

static const struct attribute_group *lfs_disk_groups[] = {
	&lfs_attr_group,
	NULL,
};

/* Book ownership */

static void lfs_books_unreserve(struct lfs_extent *exts, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		xa_erase(&exts[i].fabric->owners, exts[i].book);
		exts[i].fabric->nr_used--;
	}
}

static int lfs_book_check_dax(struct lfs_shelf *shelf, const struct lfs_book *b,
			      struct lfs_fabric *fabric,
			      struct netlink_ext_ack *extack)
{
	if (!shelf->dax_dev)
		return 0;
	if (!fabric->dax_dev) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u has no DAX, shelf '%s' is DAX-capable",
			b->ig, b->book, b->ig, shelf->name);
		return -EINVAL;
	}
	if (dax_synchronous(shelf->dax_dev) &&
	    !dax_synchronous(fabric->dax_dev)) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u is not synchronous DAX, shelf '%s' is",
			b->ig, b->book, b->ig, shelf->name);
		return -EINVAL;
	}
	if (bdev_logical_block_size(fabric->bdev) !=
	    queue_logical_block_size(shelf->disk->queue)) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u has a different logical block size than shelf '%s'",
			b->ig, b->book, b->ig, shelf->name);
		return -EINVAL;
	}
	return 0;
}

static int lfs_book_reserve(struct lfs_shelf *shelf, const struct lfs_book *b,
			    struct lfs_extent *ext,
			    struct netlink_ext_ack *extack)
{
	struct lfs_shelf *owner;
	int ret;

	ret = lfs_book_resolve(b, ext, extack);
	if (ret)
		return ret;
	if (!shelf->book_size) {
		shelf->book_size = ext->fabric->book_size;
		shelf->book_shift = ext->fabric->book_shift;
	}
	if (ext->fabric->book_size != shelf->book_size) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u has book size %llu, shelf '%s' uses %llu",
			b->ig, b->book, b->ig, ext->fabric->book_size,
			shelf->name, shelf->book_size);
		return -EINVAL;
	}
	ret = lfs_book_check_dax(shelf, b, ext->fabric, extack);
	if (ret)
		return ret;
	owner = xa_load(&ext->fabric->owners, ext->book);
	if (owner == shelf) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u:%u appears twice in shelf '%s'",
				   b->ig, b->book, shelf->name);
		return -EINVAL;
	}
	if (owner) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u is in shelf '%s'", b->ig,
				   b->book, owner->name);
		return -EBUSY;
	}
	ret = xa_err(
		xa_store(&ext->fabric->owners, ext->book, shelf, GFP_KERNEL));
	if (ret)
		return ret;
	ext->fabric->nr_used++;
	return 0;
}

static int lfs_books_reserve(struct lfs_shelf *shelf,
			     const struct lfs_book *books, u32 n,
			     struct lfs_extent *exts,
			     struct netlink_ext_ack *extack)
{
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = lfs_book_reserve(shelf, &books[i], &exts[i], extack);
		if (ret) {
			lfs_books_unreserve(exts, i);
			return ret;
		}
	}
	return 0;
}

/* The set of fabric devices a shelf's flushes go to. */

static bool lfs_flush_has(struct lfs_shelf *shelf, struct lfs_fabric *fabric)
{
	unsigned int i;

	for (i = 0; i < shelf->nr_flush; i++)
		if (shelf->flush[i] == fabric)
			return true;
	return false;
}

static void lfs_flush_add(struct lfs_shelf *shelf, struct lfs_fabric *fabric)
{
	if (lfs_flush_has(shelf, fabric))
		return;
	shelf->flush[shelf->nr_flush] = fabric;
	/* Publish the entry before the count; see lfs_flush_fabrics(). */
	smp_store_release(&shelf->nr_flush, shelf->nr_flush + 1);
}

static void lfs_flush_rebuild(struct lfs_shelf *shelf, struct lfs_map *map)
{
	u32 i;

	shelf->nr_flush = 0;
	for (i = 0; i < map->nr_books; i++)
		lfs_flush_add(shelf, map->books[i].fabric);
}

/* Block device setup and teardown, in the order of drivers/nvdimm/pmem.c. */

static void lfs_disk_set_limits(struct lfs_shelf *shelf,
				struct request_queue *q)
{
	bool wc = false, fua = false;
	unsigned int i;

	blk_set_stacking_limits(&q->limits);
	for (i = 0; i < shelf->nr_flush; i++) {
		struct block_device *bdev = shelf->flush[i]->bdev;

		if (blk_stack_limits(&q->limits, &bdev_get_queue(bdev)->limits,
				     get_start_sect(bdev) +
					     shelf->flush[i]->start_sect) < 0)
			pr_notice("%s: %pg is misaligned\n", shelf->name, bdev);
		wc |= bdev_write_cache(bdev);
		fua |= bdev_fua(bdev);
	}
	blk_queue_chunk_sectors(q, shelf->book_size >> SECTOR_SHIFT);
	blk_queue_write_cache(q, wc, fua);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
}

static bool lfs_shelf_can_dax(struct lfs_shelf *shelf, bool *sync, bool *wc)
{
	unsigned int i;

	*sync = true;
	*wc = false;
	for (i = 0; i < shelf->nr_flush; i++) {
		struct dax_device *dax = shelf->flush[i]->dax_dev;

		if (!dax)
			return false;
		*sync &= dax_synchronous(dax);
		*wc |= dax_write_cache_enabled(dax);
	}
	return true;
}

static int lfs_disk_add_dax(struct lfs_shelf *shelf, struct gendisk *disk)
{
	struct dax_device *dax_dev;
	bool sync, wc;
	int ret;

	if (!lfs_shelf_can_dax(shelf, &sync, &wc))
		return 0;
	dax_dev = alloc_dax(shelf, &lfs_dax_ops);
	if (IS_ERR(dax_dev))
		return PTR_ERR(dax_dev);
	set_dax_nocache(dax_dev);
	set_dax_nomc(dax_dev);
	if (sync)
		set_dax_synchronous(dax_dev);
	ret = dax_add_host(dax_dev, disk);
	if (ret) {
		kill_dax(dax_dev);
		put_dax(dax_dev);
		return ret;
	}
	dax_write_cache(dax_dev, wc);
	blk_queue_flag_set(QUEUE_FLAG_DAX, disk->queue);
	shelf->dax_dev = dax_dev;
	return 0;
}

static void lfs_disk_remove_dax(struct lfs_shelf *shelf)
{
	if (!shelf->dax_dev)
		return;
	dax_remove_host(shelf->disk);
	kill_dax(shelf->dax_dev);
	put_dax(shelf->dax_dev);
	shelf->dax_dev = NULL;
}

static int lfs_disk_create(struct lfs_shelf *shelf, u32 nr_books,
			   struct netlink_ext_ack *extack)
{
	struct gendisk *disk;
	int ret;

	disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!disk)
		return -ENOMEM;
	disk->major = lfs_major;
	disk->first_minor = shelf->id;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &lfs_fops;
	disk->private_data = shelf;
	snprintf(disk->disk_name, DISK_NAME_LEN, "lfs%d", shelf->id);
	shelf->disk = disk;

	lfs_disk_set_limits(shelf, disk->queue);
	set_capacity(disk, lfs_map_sectors(shelf, nr_books));

	ret = lfs_disk_add_dax(shelf, disk);
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
	lfs_disk_remove_dax(shelf);
out_put_disk:
	put_disk(disk);
	shelf->disk = NULL;
	return ret;
}

/* Shelf lifetime */

/* The shelf name rule of uapi/lfs.h, as userspace's common/names.c applies it. */
static bool lfs_name_valid(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len > LFS_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '.' && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

static struct lfs_shelf *lfs_shelf_new(const char *name, const uuid_t *uuid,
				       struct netlink_ext_ack *extack)
{
	struct lfs_shelf *shelf;

	if (!lfs_name_valid(name)) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"shelf name '%*pE' is not 1-%d characters of A-Z a-z 0-9 . _ - not starting with . or -",
			(int)min_t(size_t, strlen(name), LFS_NAME_MAX), name,
			LFS_NAME_MAX);
		return ERR_PTR(-EINVAL);
	}
	if (uuid && uuid_is_null(uuid)) {
		NL_SET_ERR_MSG(extack, "the null UUID is not a shelf UUID");
		return ERR_PTR(-EINVAL);
	}
	if (lfs_shelf_count() >= LFS_SHELVES_MAX) {
		NL_SET_ERR_MSG_FMT(extack,
				   "%u shelves exist already, the maximum",
				   LFS_SHELVES_MAX);
		return ERR_PTR(-ENFILE);
	}
	if (!try_module_get(THIS_MODULE)) {
		NL_SET_ERR_MSG(extack, "the lfs module is being unloaded");
		return ERR_PTR(-ENODEV);
	}
	shelf = kzalloc(sizeof(*shelf), GFP_KERNEL);
	if (!shelf) {
		module_put(THIS_MODULE);
		return ERR_PTR(-ENOMEM);
	}
	shelf->id = -1;
	strscpy(shelf->name, name, sizeof(shelf->name));
	if (uuid)
		uuid_copy(&shelf->uuid, uuid);
	else
		uuid_gen(&shelf->uuid);
	mutex_init(&shelf->open_lock);
	list_add_tail(&shelf->node, &lfs_shelves);
	return shelf;
}

static void lfs_shelf_release(struct lfs_shelf *shelf)
{
	kvfree(rcu_dereference_protected(shelf->map, true));
	kvfree(shelf->staged);
	mutex_destroy(&shelf->open_lock);
	kfree(shelf);
}

static void lfs_shelf_free(struct lfs_shelf *shelf)
{
	list_del(&shelf->node);
	if (shelf->id >= 0)
		idr_remove(&lfs_shelf_ids, shelf->id);
	lfs_shelf_release(shelf);
	module_put(THIS_MODULE);
}

/* The second half of lfs_shelf_remove(), on lfs_reaper. */
static void lfs_shelf_reap(struct work_struct *work)
{
	struct lfs_shelf *shelf = container_of(work, struct lfs_shelf, reap);

	del_gendisk(shelf->disk);
	put_disk(shelf->disk);
	mutex_lock(&lfs_lock);
	idr_remove(&lfs_shelf_ids, shelf->id);
	mutex_unlock(&lfs_lock);
	lfs_shelf_release(shelf);
}

/* Shelves with a multi-message operation under way; read without lfs_lock. */
static atomic_t lfs_nr_staging = ATOMIC_INIT(0);

static void lfs_staging_start(struct lfs_shelf *shelf, u8 cmd, u32 portid)
{
	if (!shelf->staged_cmd)
		atomic_inc(&lfs_nr_staging);
	shelf->staged_cmd = cmd;
	shelf->staged_portid = portid;
}

static void lfs_staging_clear(struct lfs_shelf *shelf)
{
	kvfree(shelf->staged);
	shelf->staged = NULL;
	shelf->nr_staged = 0;
	shelf->staged_cap = 0;
	if (shelf->staged_cmd)
		atomic_dec(&lfs_nr_staging);
	shelf->staged_cmd = 0;
}

static void lfs_staging_abort(struct lfs_shelf *shelf)
{
	u8 cmd = shelf->staged_cmd;

	lfs_books_unreserve(shelf->staged, shelf->nr_staged);
	lfs_staging_clear(shelf);
	if (cmd == LFS_CMD_SHELF_CREATE)
		lfs_shelf_free(shelf);
	lfs_generation++;
}

void lfs_shelf_release_staging(u32 portid)
{
	struct lfs_shelf *shelf, *next;

	if (!atomic_read(&lfs_nr_staging))
		return;
	mutex_lock(&lfs_lock);
	list_for_each_entry_safe(shelf, next, &lfs_shelves, node)
		if (shelf->staged_cmd && shelf->staged_portid == portid)
			lfs_staging_abort(shelf);
	mutex_unlock(&lfs_lock);
}

static int lfs_staging_grow(struct lfs_shelf *shelf, u32 n,
			    struct netlink_ext_ack *extack)
{
	u32 have = lfs_shelf_live(shelf) ? lfs_shelf_map(shelf)->nr_books : 0;
	u32 want = shelf->nr_staged + n;
	struct lfs_extent *staged;

	if (have + want > LFS_SHELF_BOOKS_MAX) {
		NL_SET_ERR_MSG_FMT(extack,
				   "shelf '%s' would have more than %u books",
				   shelf->name, LFS_SHELF_BOOKS_MAX);
		return -E2BIG;
	}
	if (want <= shelf->staged_cap)
		return 0;
	want = max(want, 2 * shelf->staged_cap);
	staged = kvrealloc(shelf->staged, shelf->staged_cap * sizeof(*staged),
			   want * sizeof(*staged), GFP_KERNEL);
	if (!staged)
		return -ENOMEM;
	shelf->staged = staged;
	shelf->staged_cap = want;
	return 0;
}

static int lfs_shelf_commit_create(struct lfs_shelf *shelf,
				   struct netlink_ext_ack *extack)
{
	struct lfs_map *map;
	int id, ret;

	map = lfs_map_alloc(shelf->nr_staged);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, shelf->staged,
	       shelf->nr_staged * sizeof(*map->books));

	id = idr_alloc(&lfs_shelf_ids, shelf, 0, LFS_SHELVES_MAX, GFP_KERNEL);
	if (id < 0) {
		NL_SET_ERR_MSG(extack, "no free lfs device number");
		kvfree(map);
		return id == -ENOSPC ? -ENFILE : id;
	}
	shelf->id = id;
	lfs_flush_rebuild(shelf, map);
	rcu_assign_pointer(shelf->map, map);

	ret = lfs_disk_create(shelf, map->nr_books, extack);
	if (ret) {
		idr_remove(&lfs_shelf_ids, id);
		shelf->id = -1;
		RCU_INIT_POINTER(shelf->map, NULL);
		kvfree(map);
		return ret;
	}
	lfs_staging_clear(shelf);
	pr_info("%s: shelf '%s' with %u books of %llu bytes%s\n",
		shelf->disk->disk_name, shelf->name, map->nr_books,
		shelf->book_size, shelf->dax_dev ? ", dax" : "");
	return 0;
}

static void lfs_shelf_stack_new(struct lfs_shelf *shelf,
				struct lfs_fabric *fabric)
{
	struct request_queue *q = shelf->disk->queue;
	struct queue_limits lim = q->limits;

	if (blk_stack_limits(&lim, &bdev_get_queue(fabric->bdev)->limits,
			     get_start_sect(fabric->bdev) +
				     fabric->start_sect) < 0)
		pr_notice("%s: %pg is misaligned\n", shelf->name, fabric->bdev);
	lim.chunk_sectors = shelf->book_size >> SECTOR_SHIFT;
	q->limits = lim;
	if (bdev_write_cache(fabric->bdev) &&
	    !test_bit(QUEUE_FLAG_WC, &q->queue_flags))
		blk_queue_write_cache(q, true,
				      test_bit(QUEUE_FLAG_FUA,
					       &q->queue_flags) ||
					      bdev_fua(fabric->bdev));
}

/*
 * Extending while the disk is open: the new map is a superset of the old
 * one, so a bio or DAX fault that looked up the old map still lands on the
 * same book. New fabric devices join the flush set before any book of theirs
 * becomes reachable.
 */
static int lfs_shelf_commit_extend(struct lfs_shelf *shelf)
{
	struct lfs_map *old = lfs_shelf_map(shelf), *map;
	u32 i;

	/* the new books' content is unknown; cleared before the change uevent */
	WRITE_ONCE(shelf->zeroed, false);
	map = lfs_map_alloc(old->nr_books + shelf->nr_staged);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, old->books, old->nr_books * sizeof(*map->books));
	memcpy(map->books + old->nr_books, shelf->staged,
	       shelf->nr_staged * sizeof(*map->books));

	for (i = 0; i < shelf->nr_staged; i++) {
		struct lfs_fabric *fabric = shelf->staged[i].fabric;

		if (!lfs_flush_has(shelf, fabric)) {
			lfs_shelf_stack_new(shelf, fabric);
			lfs_flush_add(shelf, fabric);
		}
	}
	rcu_assign_pointer(shelf->map, map);
	set_capacity_and_notify(shelf->disk,
				lfs_map_sectors(shelf, map->nr_books));

	lfs_staging_clear(shelf);
	synchronize_rcu();
	kvfree(old);
	return 0;
}

static struct lfs_shelf *lfs_shelf_stage_target(u8 cmd, const char *name,
						const uuid_t *uuid, u32 portid,
						struct netlink_ext_ack *extack)
{
	struct lfs_shelf *shelf = lfs_shelf_find(name);

	if (shelf && shelf->staged_cmd && shelf->staged_portid != portid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "shelf '%s' is being %s by another request",
				   name,
				   shelf->staged_cmd == LFS_CMD_SHELF_CREATE ?
					   "created" :
					   "extended");
		return ERR_PTR(-EBUSY);
	}
	if (cmd == LFS_CMD_SHELF_CREATE) {
		if (!shelf)
			return lfs_shelf_new(name, uuid, extack);
		if (shelf->staged_cmd != LFS_CMD_SHELF_CREATE) {
			NL_SET_ERR_MSG_FMT(extack, "shelf '%s' exists", name);
			return ERR_PTR(-EEXIST);
		}
		if (uuid) {
			NL_SET_ERR_MSG(
				extack,
				"the UUID belongs in the first message only");
			return ERR_PTR(-EINVAL);
		}
		return shelf;
	}
	if (!shelf || shelf->staged_cmd == LFS_CMD_SHELF_CREATE) {
		NL_SET_ERR_MSG_FMT(extack, "no shelf '%s'", name);
		return ERR_PTR(-ENOENT);
	}
	return shelf;
}

/*
 * One message of a create or extend: reserve its books, and on the last
 * message make them visible. An error abandons the whole operation,
 * including books staged by earlier messages.
 */
int lfs_shelf_stage(u8 cmd, const char *name, const uuid_t *uuid,
		    const struct lfs_book *books, u32 n, bool more, bool zeroed,
		    u32 portid, struct netlink_ext_ack *extack,
		    struct lfs_shelf **out)
{
	struct lfs_shelf *shelf;
	int ret;

	shelf = lfs_shelf_stage_target(cmd, name, uuid, portid, extack);
	if (IS_ERR(shelf))
		return PTR_ERR(shelf);
	/* a create's first message decides; any message without it clears */
	if (cmd == LFS_CMD_SHELF_CREATE)
		shelf->zeroed = zeroed && (!shelf->staged_cmd || shelf->zeroed);
	lfs_staging_start(shelf, cmd, portid);

	ret = lfs_staging_grow(shelf, n, extack);
	if (ret)
		goto out_abort;
	ret = lfs_books_reserve(shelf, books, n,
				shelf->staged + shelf->nr_staged, extack);
	if (ret)
		goto out_abort;
	shelf->nr_staged += n;
	lfs_generation++;
	if (more)
		return 0;

	if (cmd == LFS_CMD_SHELF_CREATE)
		ret = lfs_shelf_commit_create(shelf, extack);
	else
		ret = lfs_shelf_commit_extend(shelf);
	if (ret)
		goto out_abort;
	*out = shelf;
	return 0;

out_abort:
	lfs_staging_abort(shelf);
	return ret;
}

static int lfs_shelf_check_idle(struct lfs_shelf *shelf,
				struct netlink_ext_ack *extack)
{
	if (shelf->staged_cmd) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"shelf '%s' is being extended by another request",
			shelf->name);
		return -EBUSY;
	}
	if (shelf->open_count) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"/dev/%s (shelf '%s') is open or mounted; unmount and close it first",
			shelf->disk->disk_name, shelf->name);
		return -EBUSY;
	}
	return 0;
}

int lfs_shelf_shrink(struct lfs_shelf *shelf, u32 nr_books,
		     struct netlink_ext_ack *extack)
{
	struct lfs_map *old = lfs_shelf_map(shelf), *map;
	int ret;

	if (!nr_books || nr_books >= old->nr_books) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"new book count %u for shelf '%s' is not between 1 and %u",
			nr_books, shelf->name, old->nr_books - 1);
		return -EINVAL;
	}
	map = lfs_map_alloc(nr_books);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, old->books, nr_books * sizeof(*map->books));

	/* Holding open_lock keeps the disk closed until the new map is in. */
	mutex_lock(&shelf->open_lock);
	ret = lfs_shelf_check_idle(shelf, extack);
	if (ret) {
		mutex_unlock(&shelf->open_lock);
		kvfree(map);
		return ret;
	}
	set_capacity_and_notify(shelf->disk, lfs_map_sectors(shelf, nr_books));
	rcu_assign_pointer(shelf->map, map);
	synchronize_rcu();
	lfs_flush_rebuild(shelf, map);
	mutex_unlock(&shelf->open_lock);

	lfs_books_unreserve(old->books + nr_books, old->nr_books - nr_books);
	kvfree(old);
	lfs_generation++;
	return 0;
}

int lfs_shelf_remove(struct lfs_shelf *shelf, struct netlink_ext_ack *extack)
{
	struct lfs_map *map = lfs_shelf_map(shelf);
	int ret;

	mutex_lock(&shelf->open_lock);
	ret = lfs_shelf_check_idle(shelf, extack);
	if (!ret)
		shelf->dying = true;
	mutex_unlock(&shelf->open_lock);
	if (ret)
		return ret;

	pr_info("%s: removing shelf '%s'\n", shelf->disk->disk_name,
		shelf->name);
	/*
	 * Nothing can reach the books any more: the disk is not open and
	 * cannot be opened (dying), and with the DAX device killed no mapping
	 * remains. The books and the name are free now. del_gendisk() waits
	 * for an RCU grace period after the device is gone (quiescing the
	 * queue), tens of milliseconds on a slow machine, so it runs in
	 * lfs_shelf_reap(); the disk's number is reused only after that.
	 */
	lfs_disk_remove_dax(shelf);
	lfs_books_unreserve(map->books, map->nr_books);
	list_del(&shelf->node);
	INIT_WORK(&shelf->reap, lfs_shelf_reap);
	queue_work(lfs_reaper, &shelf->reap);
	/* lfs_shelf_exit() waits for the reaper */
	module_put(THIS_MODULE);
	lfs_generation++;
	return 0;
}

int lfs_shelf_init(void)
{
	int ret;

	lfs_reaper = alloc_workqueue("lfs_reaper", WQ_UNBOUND, 0);
	if (!lfs_reaper)
		return -ENOMEM;
	ret = bioset_init(&lfs_bioset, BIO_POOL_SIZE, 0, BIOSET_NEED_RESCUER);
	if (ret)
		goto out_wq;
	lfs_major = register_blkdev(0, "lfs");
	if (lfs_major < 0) {
		ret = lfs_major;
		goto out_bioset;
	}
	return 0;

out_bioset:
	bioset_exit(&lfs_bioset);
out_wq:
	destroy_workqueue(lfs_reaper);
	return ret;
}

void lfs_shelf_exit(void)
{
	/* removed shelves whose disks are still being deleted */
	destroy_workqueue(lfs_reaper);
	unregister_blkdev(lfs_major, "lfs");
	bioset_exit(&lfs_bioset);
}
