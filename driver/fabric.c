// SPDX-License-Identifier: GPL-2.0
/*
 * Fabric devices: block devices holding fabric memory, cut into books.
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

static struct lfs_fabric *lfs_fabric_find_devt(dev_t devt)
{
	struct lfs_fabric *fabric;

	list_for_each_entry(fabric, &lfs_fabrics, node)
		if (fabric->bdev->bd_dev == devt)
			return fabric;
	return NULL;
}

struct lfs_fabric *lfs_fabric_find_path(const char *path,
					struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric;
	dev_t devt;
	int ret;

	ret = lookup_bdev(path, &devt);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is not a block device (error %d)",
				   path, ret);
		return ERR_PTR(ret);
	}
	fabric = lfs_fabric_find_devt(devt);
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
	ret = lookup_bdev(path, &devt);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is not a block device (error %d)",
				   path, ret);
		return ret;
	}
	other = lfs_fabric_find_devt(devt);
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
static int lfs_fabric_check_bdev(struct block_device *bdev, const char *path,
				 u64 book_size, u64 offset,
				 struct netlink_ext_ack *extack)
{
	u64 size = bdev_nr_bytes(bdev);

	/* The path may have changed since lfs_fabric_check_args() looked. */
	if (lfs_fabric_find_devt(bdev->bd_dev)) {
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
 * range is one linear mapping without bad blocks when attached. Otherwise
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

int lfs_fabric_attach(const char *path, u32 ig, u64 book_size, u64 offset,
		      struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric;
	struct block_device *bdev;
	struct file *bdev_file;
	u64 size, start_off = 0;
	int ret;

	ret = lfs_fabric_check_args(path, ig, book_size, offset, extack);
	if (ret)
		return ret;

	fabric = kzalloc(sizeof(*fabric), GFP_KERNEL);
	if (!fabric)
		return -ENOMEM;

	bdev = lfs_bdev_open(path, fabric, &bdev_file);
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
		goto out_free;
	}

	ret = lfs_fabric_check_bdev(bdev, path, book_size, offset, extack);
	if (ret)
		goto out_close;
	size = bdev_nr_bytes(bdev);
	fabric->ig = ig;
	strscpy(fabric->path, path, sizeof(fabric->path));
	fabric->bdev = bdev;
	fabric->bdev_file = bdev_file;
	fabric->book_size = book_size;
	fabric->book_shift = ilog2(book_size);
	fabric->offset = offset;
	fabric->nr_books = div64_u64(size - offset, book_size);
	fabric->start_sect = offset >> SECTOR_SHIFT;
	fabric->dax_dev = fs_dax_get_by_bdev(bdev, &start_off, NULL, NULL);
	fabric->dax_pgoff = (start_off + offset) >> PAGE_SHIFT;
	lfs_fabric_map_kaddr(fabric);
	xa_init(&fabric->owners);

	lfs_fabric_insert(fabric);
	lfs_generation++;
	pr_info("attached %s as interleave group %u: %u books of %llu bytes%s\n",
		path, ig, fabric->nr_books, book_size,
		fabric->dax_dev ? ", dax" : "");
	return 0;

out_close:
	lfs_bdev_close(bdev, bdev_file);
out_free:
	kfree(fabric);
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
	fs_put_dax(fabric->dax_dev, NULL);
	lfs_bdev_close(fabric->bdev, fabric->bdev_file);
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

static int lfs_book_zero(struct lfs_extent *ext)
{
	struct lfs_fabric *fabric = ext->fabric;
	sector_t sector =
		fabric->start_sect +
		((sector_t)ext->book << (fabric->book_shift - SECTOR_SHIFT));

	return blkdev_issue_zeroout(fabric->bdev, sector,
				    fabric->book_size >> SECTOR_SHIFT,
				    GFP_KERNEL, BLKDEV_ZERO_NOUNMAP);
}

int lfs_books_zero(const struct lfs_book *books, u32 n,
		   struct netlink_ext_ack *extack)
{
	struct lfs_fabric *fabric;
	struct lfs_shelf *owner;
	struct lfs_extent ext;
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = lfs_book_resolve(&books[i], &ext, extack);
		if (ret)
			return ret;
		owner = xa_load(&ext.fabric->owners, ext.book);
		if (owner) {
			NL_SET_ERR_MSG_FMT(extack,
					   "book %u:%u is in shelf '%s'",
					   books[i].ig, books[i].book,
					   owner->name);
			return -EBUSY;
		}
	}
	for (i = 0; i < n; i++) {
		if (fatal_signal_pending(current)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "interrupted before book %u:%u",
					   books[i].ig, books[i].book);
			return -EINTR;
		}
		lfs_book_resolve(&books[i], &ext, extack);
		ret = lfs_book_zero(&ext);
		if (ret) {
			NL_SET_ERR_MSG_FMT(
				extack,
				"writing zeroes to book %u:%u failed (error %d)",
				books[i].ig, books[i].book, ret);
			return ret;
		}
		cond_resched();
	}
	list_for_each_entry(fabric, &lfs_fabrics, node) {
		ret = blkdev_issue_flush(fabric->bdev);
		if (ret) {
			NL_SET_ERR_MSG_FMT(extack,
					   "flushing %s failed (error %d)",
					   fabric->path, ret);
			return ret;
		}
	}
	return 0;
}

/*
 * One page of a book that no shelf holds, read through the fabric's DAX
 * mapping into buf with copy_mc_to_kernel() (like pmem's reads, so poisoned
 * memory fails the check rather than the machine). True if it reads as
 * zeroes; false if not, or if it cannot be read that way (no DAX, a bad
 * range, the book taken by a shelf meanwhile). Called with lfs_lock held.
 */
static bool lfs_page_zero(const struct lfs_extent *ext, pgoff_t page, void *buf)
{
	struct lfs_fabric *fabric = ext->fabric;
	struct badblocks *bb;
	pgoff_t pgoff;
	void *kaddr;
	bool ret;
	int id;

	if (!fabric->dax_dev || xa_load(&fabric->owners, ext->book))
		return false;
	bb = fabric->bdev->bd_disk->bb;
	pgoff = ((pgoff_t)ext->book << (fabric->book_shift - PAGE_SHIFT)) +
		page;
	id = dax_read_lock();
	ret = false;
	if (!dax_alive(fabric->dax_dev))
		goto out;
	if (fabric->kaddr && !(bb && READ_ONCE(bb->count)))
		kaddr = fabric->kaddr + (pgoff << PAGE_SHIFT);
	else if (dax_direct_access(fabric->dax_dev, fabric->dax_pgoff + pgoff,
				   1, DAX_ACCESS, &kaddr, NULL) < 1)
		goto out;
	ret = !copy_mc_to_kernel(buf, kaddr, PAGE_SIZE) &&
	      !memchr_inv(buf, 0, PAGE_SIZE);
out:
	dax_read_unlock(id);
	return ret;
}

/*
 * Which of these books, held by no shelf, read as zeroes? Sets bit i of zero
 * for book i that does. Only reads. lfs_lock is taken for LFS_CHECK_PAGES
 * pages at a time, so shelves can be created and removed meanwhile; a book
 * that a shelf takes during the check does not count as zero.
 */
#define LFS_CHECK_PAGES 64

int lfs_books_check_zero(const struct lfs_book *books, u32 n,
			 unsigned long *zero, struct netlink_ext_ack *extack)
{
	pgoff_t page, pages = 0;
	struct lfs_extent ext;
	bool zeroes;
	void *buf;
	u32 i;
	int ret = 0;

	mutex_lock(&lfs_lock);
	for (i = 0; i < n && !ret; i++)
		ret = lfs_book_resolve(&books[i], &ext, extack);
	mutex_unlock(&lfs_lock);
	if (ret)
		return ret;
	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		page = 0;
		do {
			if (fatal_signal_pending(current)) {
				NL_SET_ERR_MSG_FMT(extack,
						   "interrupted while reading book %u:%u",
						   books[i].ig, books[i].book);
				ret = -EINTR;
				goto out;
			}
			/* the fabric may have been detached meanwhile */
			mutex_lock(&lfs_lock);
			ret = lfs_book_resolve(&books[i], &ext, extack);
			if (ret) {
				mutex_unlock(&lfs_lock);
				goto out;
			}
			pages = ext.fabric->book_size >> PAGE_SHIFT;
			zeroes = true;
			for (pgoff_t end = page + LFS_CHECK_PAGES;
			     zeroes && page < end && page < pages; page++)
				zeroes = lfs_page_zero(&ext, page, buf);
			mutex_unlock(&lfs_lock);
			cond_resched();
		} while (zeroes && page < pages);
		if (zeroes)
			__set_bit(i, zero);
	}
	ret = 0;
out:
	kfree(buf);
	return ret;
}
