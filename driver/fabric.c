// SPDX-License-Identifier: GPL-2.0
/*
 * Fabric devices: block devices holding fabric memory, or device-DAX
 * character devices (devdax.c), cut into books.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/badblocks.h>
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "lfs.h"

LIST_HEAD(lfs_fabrics);

struct lfs_fabric *lfs_fabric_find(u32 ig)
{
	struct lfs_fabric *fabric;

	list_for_each_entry(fabric, &lfs_fabrics, node)
		if (fabric->ig == ig)
			return fabric;
	return NULL;
}

/* By device number: of a character device (device-DAX) if @chr. */
static struct lfs_fabric *lfs_fabric_find_devt(dev_t devt, bool chr)
{
	struct lfs_fabric *fabric;

	list_for_each_entry(fabric, &lfs_fabrics, node)
		if (fabric->devt == devt && lfs_fabric_devdax(fabric) == chr)
			return fabric;
	return NULL;
}

/* Has the fabric's device gone (pmem or fsdev_dax unbound)? */
static bool lfs_fabric_gone(const struct lfs_fabric *fabric)
{
	if (lfs_fabric_devdax(fabric))
		return READ_ONCE(fabric->dead);
	return !disk_live(fabric->bdev->bd_disk);
}

/*
 * The device @path names, a block device or else a character device (*chr);
 * or an error, said in @extack.
 */
static int lfs_fabric_lookup(const char *path, dev_t *devt, bool *chr,
			     struct netlink_ext_ack *extack)
{
	int ret;

	*chr = false;
	ret = lookup_bdev(path, devt);
	if (!ret)
		return 0;
	if (lfs_devdax_path(path, devt)) {
		*chr = true;
		return 0;
	}
	NL_SET_ERR_MSG_FMT(extack,
			   "'%s' is not a block device nor a device-DAX (error %d)",
			   path, ret);
	return ret;
}

/*
 * A fabric attached by this path whose disk has been deleted since (pmem
 * unbound): the path names no device any more, but the fabric can still be
 * asked for and detached by it.
 */
static struct lfs_fabric *lfs_fabric_find_deleted(const char *path)
{
	struct lfs_fabric *fabric;

	list_for_each_entry(fabric, &lfs_fabrics, node)
		if (!strcmp(fabric->path, path) && lfs_fabric_gone(fabric))
			return fabric;
	return NULL;
}

struct lfs_fabric *lfs_fabric_find_path(const char *path,
					struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric;
	dev_t devt;
	bool chr;
	int ret;

	fabric = lfs_fabric_find_deleted(path);
	if (fabric)
		return fabric;
	ret = lfs_fabric_lookup(path, &devt, &chr, extack);
	if (ret)
		return ERR_PTR(ret);
	fabric = lfs_fabric_find_devt(devt, chr);
	if (!fabric) {
		NL_SET_ERR_MSG_FMT(extack, "'%s' is not attached", path);
		return ERR_PTR(-ENODEV);
	}
	return fabric;
}

static unsigned int lfs_fabric_count(void)
{
	struct lfs_fabric *fabric;
	unsigned int n = 0;

	list_for_each_entry(fabric, &lfs_fabrics, node)
		n++;
	return n;
}

static void lfs_fabric_insert(struct lfs_fabric *fabric)
{
	struct lfs_fabric *pos;

	list_for_each_entry(pos, &lfs_fabrics, node) {
		if (pos->ig > fabric->ig) {
			list_add_tail(&fabric->node, &pos->node);
			return;
		}
	}
	list_add_tail(&fabric->node, &lfs_fabrics);
}

static int lfs_fabric_check_args(const char *path, u32 ig, u64 book_size,
				 u64 offset, struct netlink_ext_ack *extack)
{
	struct lfs_fabric *other;
	dev_t devt;
	bool chr;
	int ret;

	if (!is_power_of_2(book_size) || book_size < LFS_BOOK_SIZE_MIN ||
	    book_size > LFS_BOOK_SIZE_MAX) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book size %llu is not a power of two from 2 MiB to 1 TiB",
			book_size);
		return -EINVAL;
	}
	if (offset % LFS_OFFSET_ALIGN) {
		NL_SET_ERR_MSG_FMT(extack,
				   "offset %llu is not a multiple of 2 MiB",
				   offset);
		return -EINVAL;
	}
	other = lfs_fabric_find(ig);
	if (other) {
		NL_SET_ERR_MSG_FMT(
			extack, "interleave group %u is already attached (%s)",
			ig, other->path);
		return -EEXIST;
	}
	if (lfs_fabric_count() >= LFS_FABRICS_MAX) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"%u fabric devices are attached already, the maximum",
			LFS_FABRICS_MAX);
		return -ENFILE;
	}
	ret = lfs_fabric_lookup(path, &devt, &chr, extack);
	if (ret)
		return ret;
	other = lfs_fabric_find_devt(devt, chr);
	if (other) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"'%s' is already attached as interleave group %u", path,
			other->ig);
		return -EBUSY;
	}
	return 0;
}

/* The device, once open: not attached meanwhile, and large enough. */
static int lfs_fabric_check_dev(struct lfs_fabric *fabric, const char *path,
				u64 book_size, u64 offset,
				struct netlink_ext_ack *extack)
{
	u64 size = fabric->dev_size;

	/* The path may have changed since lfs_fabric_check_args() looked. */
	if (lfs_fabric_find_devt(fabric->devt, lfs_fabric_devdax(fabric))) {
		NL_SET_ERR_MSG_FMT(extack, "'%s' is already attached", path);
		return -EBUSY;
	}
	if (offset >= size || size - offset < book_size) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"offset %llu plus book size %llu is larger than '%s' (%llu bytes)",
			offset, book_size, path, size);
		return -ENOSPC;
	}
	if (div64_u64(size - offset, book_size) > U32_MAX) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book size %llu gives '%s' more than 2^32 books",
			book_size, path);
		return -EINVAL;
	}
	return 0;
}

/*
 * Where the books are in the kernel's address space, for reads and writes
 * served through the DAX mapping (shelf.c): known only if the whole book
 * range is one linear mapping without bad blocks when attached (pmem's
 * badblocks; ranges in the fabric's bad list are refused by every user). Otherwise
 * each bio asks dax_direct_access() for its own range.
 */
static void lfs_fabric_map_kaddr(struct lfs_fabric *fabric)
{
	long nr = (long)fabric->nr_books
		  << (fabric->book_shift - PAGE_SHIFT);
	void *kaddr;
	int id;

	if (!fabric->dax_dev)
		return;
	id = dax_read_lock();
	if (dax_direct_access(fabric->dax_dev, fabric->dax_pgoff, nr,
			      DAX_ACCESS, &kaddr, NULL) >= nr)
		fabric->kaddr = kaddr;
	dax_read_unlock(id);
}

/*
 * The fabric's DAX device, if it has one, with the module as its holder:
 * memory failures in it are told to bad.c. Then the bad blocks the disk
 * reports, and the mapping of the books.
 */
static void lfs_fabric_get_dax(struct lfs_fabric *fabric)
{
	struct block_device *bdev = fabric->bdev;
	u64 start_off = 0;

	if (lfs_fabric_devdax(fabric)) /* held since lfs_devdax_open() */
		goto map;
	fabric->dax_dev = fs_dax_get_by_bdev(bdev, &start_off, fabric,
					     &lfs_fabric_dax_hops);
	if (!fabric->dax_dev && blk_queue_dax(bdev_get_queue(bdev)))
		pr_warn("%s: DAX-capable, but its DAX device was not granted (another holder, or a misaligned partition): attached without DAX\n",
			fabric->path);
map:
	fabric->dax_pgoff = (start_off + fabric->offset) >> PAGE_SHIFT;
	lfs_bad_init(fabric);
	lfs_fabric_map_kaddr(fabric);
}

/*
 * The fabric's disk is being deleted (pmem unbound, its namespace or region
 * destroyed): pmem has killed its DAX device and unmaps its memory once this
 * returns. From now on no copy uses the fabric's mapping, and none that began
 * before is still running (compat.h). Called by the block layer with the
 * claim's lock held, so the fabric is still attached; its bios fail from
 * now on in the fabric's own driver.
 */
#ifdef LFS_HAVE_BDEV_FILE
static void lfs_fabric_dead(struct block_device *bdev)
{
	struct lfs_fabric *fabric = bdev->bd_holder;

	WRITE_ONCE(fabric->dead, true);
	lfs_copy_wait();
	pr_warn("%pg: fabric device deleted under interleave group %u: I/O to its books fails\n",
		bdev, fabric->ig);
}

/* blk_holder_ops.mark_dead, called with the claim's lock held. */
static void lfs_fabric_mark_dead(struct block_device *bdev, bool surprise)
	__releases(&bdev->bd_holder_lock)
{
	lfs_fabric_dead(bdev);
	mutex_unlock(&bdev->bd_holder_lock);
}

static const struct blk_holder_ops lfs_fabric_hops = {
	.mark_dead = lfs_fabric_mark_dead,
};

#define LFS_FABRIC_HOPS (&lfs_fabric_hops)
#else
/* Before 6.10 a deleted disk is seen only through dax_alive() (compat.h). */
#define LFS_FABRIC_HOPS NULL
#endif

/*
 * Open the device at @path for @fabric: a block device exclusively, by
 * @holder with @hops, or a device-DAX (devdax.c), the fabric holding its
 * dax_device.
 */
static int lfs_fabric_open(struct lfs_fabric *fabric, const char *path,
			   void *holder, const struct blk_holder_ops *hops,
			   struct netlink_ext_ack *extack)
{
	struct block_device *bdev;
	dev_t devt;
	int ret;

	if (lookup_bdev(path, &devt) && lfs_devdax_path(path, &devt))
		return lfs_devdax_open(fabric, path, extack);
	bdev = lfs_bdev_open(path, holder, hops, &fabric->bdev_file);
	if (IS_ERR(bdev)) {
		ret = PTR_ERR(bdev);
		if (ret == -EBUSY)
			NL_SET_ERR_MSG_FMT(
				extack,
				"'%s' is in use (mounted or opened exclusively)",
				path);
		else
			NL_SET_ERR_MSG_FMT(extack,
					   "cannot open '%s' (error %d)", path,
					   ret);
		return ret;
	}
	fabric->bdev = bdev;
	fabric->devt = bdev->bd_dev;
	fabric->dev_size = bdev_nr_bytes(bdev);
	fabric->numa_node = bdev->bd_disk->node_id;
	return 0;
}

static void lfs_fabric_close(struct lfs_fabric *fabric)
{
	if (lfs_fabric_devdax(fabric))
		lfs_devdax_close(fabric);
	else
		lfs_bdev_close(fabric->bdev, fabric->bdev_file);
}

/* LFS_CMD_FABRIC_LABEL: label a device that is not attached. */
int lfs_fabric_label(const char *path, u32 ig, u64 book_size, u64 offset,
		     const u8 *fabric_uuid, struct netlink_ext_ack *extack)
{
	struct lfs_fabric *dev;
	int ret;

	ret = lfs_fabric_check_args(path, ig, book_size, offset, extack);
	if (ret)
		return ret;
	if (offset < LFS_OFFSET_ALIGN) {
		NL_SET_ERR_MSG_FMT(extack,
				   "a label needs a data offset of 2 MiB or more, not %llu",
				   offset);
		return -EINVAL;
	}
	/* the device alone, opened as for an attach but by lfs_zeroing */
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	spin_lock_init(&dev->bad_lock);
	ret = lfs_fabric_open(dev, path, &lfs_zeroing, NULL, extack);
	if (ret)
		goto out_free;
	ret = lfs_fabric_check_dev(dev, path, book_size, offset, extack);
	if (!ret)
		ret = lfs_label_write(dev, path, ig, book_size, offset,
				      fabric_uuid, extack);
	lfs_fabric_close(dev);
out_free:
	kfree_rcu(dev, rcu); /* a notify_failure may still see it */
	return ret;
}

int lfs_fabric_attach(const char *path, u32 ig, u64 book_size, u64 offset,
		      const u8 *fabric_uuid, struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric;
	int ret;

	ret = lfs_fabric_check_args(path, ig, book_size, offset, extack);
	if (ret)
		return ret;

	fabric = kzalloc(sizeof(*fabric), GFP_KERNEL);
	if (!fabric)
		return -ENOMEM;
	spin_lock_init(&fabric->bad_lock);
	ret = lfs_fabric_open(fabric, path, fabric, LFS_FABRIC_HOPS, extack);
	if (ret)
		goto out_free;
	ret = lfs_fabric_check_dev(fabric, path, book_size, offset, extack);
	if (ret)
		goto out_close;
	fabric->ig = ig;
	strscpy(fabric->path, path, sizeof(fabric->path));
	fabric->book_size = book_size;
	fabric->book_shift = ilog2(book_size);
	fabric->offset = offset;
	fabric->nr_books = div64_u64(fabric->dev_size - offset, book_size);
	fabric->start_sect = offset >> SECTOR_SHIFT;
	lfs_fabric_get_dax(fabric);
	ret = lfs_label_check(fabric, fabric_uuid, extack);
	if (ret)
		goto out_put_dax;
	xa_init(&fabric->owners);

	lfs_fabric_insert(fabric);
	lfs_generation++;
	pr_info("attached %s as interleave group %u: %u books of %llu bytes%s%s%s%s\n",
		path, ig, fabric->nr_books, book_size,
		fabric->dax_dev ? ", dax" : "",
		lfs_fabric_devdax(fabric) ? ", device-DAX" : "",
		fabric->volatile_mem ? ", volatile" : "",
		fabric->labelled ? ", labelled" : "");
	return 0;

out_put_dax:
	if (!lfs_fabric_devdax(fabric))
		fs_put_dax(fabric->dax_dev, fabric);
out_close:
	lfs_fabric_close(fabric);
out_free:
	kfree_rcu(fabric, rcu); /* as lfs_fabric_free(): a notify_failure */
	return ret;
}

/*
 * The struct itself outlives an RCU grace period: a removed shelf's book
 * list in sysfs may still be read until the reaper deletes its disk
 * (books_read() in sysfs.c).
 */
static void lfs_fabric_free(struct lfs_fabric *fabric)
{
	list_del(&fabric->node);
	if (!lfs_fabric_devdax(fabric))
		fs_put_dax(fabric->dax_dev, fabric);
	lfs_fabric_close(fabric);
	xa_destroy(&fabric->owners);
	kfree_rcu(fabric, rcu);
}

int lfs_fabric_detach(struct lfs_fabric *fabric, struct netlink_ext_ack *extack)
{
	if (fabric->nr_used) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"interleave group %u (%s) holds %u books of shelves; remove or shrink them first",
			fabric->ig, fabric->path, fabric->nr_used);
		return -EBUSY;
	}
	pr_info("detached %s (interleave group %u)\n", fabric->path,
		fabric->ig);
	lfs_fabric_free(fabric);
	lfs_generation++;
	return 0;
}

/* Module unload: every shelf is gone (each holds a module reference). */
void lfs_fabric_detach_all(void)
{
	struct lfs_fabric *fabric, *next;

	list_for_each_entry_safe(fabric, next, &lfs_fabrics, node)
		lfs_fabric_free(fabric);
}

int lfs_book_resolve(const struct lfs_book *b, struct lfs_extent *ext,
		     struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric = lfs_fabric_find(b->ig);

	if (!fabric) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u is not attached",
			b->ig, b->book, b->ig);
		return -ENODEV;
	}
	if (b->book >= fabric->nr_books) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u is beyond the end of interleave group %u (books 0-%u)",
			b->ig, b->book, b->ig, fabric->nr_books - 1);
		return -ERANGE;
	}
	ext->fabric = fabric;
	ext->book = b->book;
	return 0;
}
