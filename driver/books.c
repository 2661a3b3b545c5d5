// SPDX-License-Identifier: GPL-2.0
/*
 * Books no shelf holds: zeroing them before reuse (LFS_CMD_BOOK_ZERO) and
 * checking, by reading only, whether they read as zeroes (BOOK_CHECK).
 * Neither holds lfs_lock for long: a zeroing reserves one book at a time to
 * lfs_zeroing (so no shelf can take it), writes it without the lock and
 * gives it back; a check takes the lock a few pages at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/badblocks.h>
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "lfs.h"

static int lfs_book_zero(struct lfs_extent *ext)
{
	struct lfs_fabric *fabric = ext->fabric;
	sector_t sector =
		fabric->start_sect +
		((sector_t)ext->book << (fabric->book_shift - SECTOR_SHIFT));
	int ret;

	if (lfs_fabric_devdax(fabric))
		return lfs_devdax_zero(fabric, fabric->offset +
					       ((u64)ext->book << fabric->book_shift),
				       fabric->book_size);
	ret = blkdev_issue_zeroout(fabric->bdev, sector,
				   fabric->book_size >> SECTOR_SHIFT,
				   GFP_KERNEL, BLKDEV_ZERO_NOUNMAP);
	return ret ? ret : blkdev_issue_flush(fabric->bdev);
}

/*
 * Reserve one book for zeroing. Returns 0 and fills @ext, 1 if a shelf (or
 * another zeroing) holds it, or an error (the fabric went away meanwhile).
 */
static int lfs_zero_claim(const struct lfs_book *b, struct lfs_extent *ext,
			  struct netlink_ext_ack *extack)
{
	int ret;

	mutex_lock(&lfs_lock);
	ret = lfs_book_resolve(b, ext, extack);
	if (!ret && xa_load(&ext->fabric->owners, ext->book))
		ret = 1;
	if (!ret)
		ret = xa_err(xa_store(&ext->fabric->owners, ext->book,
				      &lfs_zeroing, GFP_KERNEL));
	if (!ret)
		ext->fabric->nr_used++;
	mutex_unlock(&lfs_lock);
	return ret;
}

static void lfs_zero_release(struct lfs_extent *ext)
{
	mutex_lock(&lfs_lock);
	lfs_books_unreserve(ext, 1);
	mutex_unlock(&lfs_lock);
}

/* Does the book hold a page of its fabric's bad list (bad.c)? */
static bool lfs_book_bad(const struct lfs_extent *ext)
{
	unsigned int shift = ext->fabric->book_shift - PAGE_SHIFT;
	u64 page = (u64)ext->book << shift;

	return lfs_bad_first(ext->fabric, page, 1ULL << shift) <
	       page + (1ULL << shift);
}

/*
 * Every book must exist before any is written; and, for a zeroing, hold no
 * bad page: writing zeroes would not make it good (docs/CXL.md "Poison").
 */
static int lfs_books_resolve_all(const struct lfs_book *books, u32 n,
				 bool zeroing, struct netlink_ext_ack *extack)
{
	struct lfs_extent ext;
	u32 i;
	int ret = 0;

	mutex_lock(&lfs_lock);
	for (i = 0; i < n && !ret; i++) {
		ret = lfs_book_resolve(&books[i], &ext, extack);
		if (!ret && zeroing && lfs_book_bad(&ext)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "book %u:%u holds bad memory (see the device's bad ranges): not zeroed",
					   books[i].ig, books[i].book);
			ret = -EIO;
		}
	}
	mutex_unlock(&lfs_lock);
	return ret;
}

/*
 * Zero the books no shelf holds, one at a time; set bit i of @done for each
 * book i zeroed and flushed. A book a shelf holds is skipped.
 */
int lfs_books_zero(const struct lfs_book *books, u32 n, unsigned long *done,
		   struct netlink_ext_ack *extack)
{
	struct lfs_extent ext;
	u32 i;
	int ret;

	ret = lfs_books_resolve_all(books, n, true, extack);
	for (i = 0; i < n && !ret; i++) {
		if (fatal_signal_pending(current)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "interrupted before book %u:%u",
					   books[i].ig, books[i].book);
			return -EINTR;
		}
		ret = lfs_zero_claim(&books[i], &ext, extack);
		if (ret == 1) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		ret = lfs_book_zero(&ext);
		lfs_zero_release(&ext);
		if (ret)
			NL_SET_ERR_MSG_FMT(
				extack,
				"writing zeroes to book %u:%u failed (error %d)",
				books[i].ig, books[i].book, ret);
		else
			__set_bit(i, done);
		cond_resched();
	}
	return ret;
}

/*
 * One page of a book that no shelf holds, read through the fabric's DAX
 * mapping into buf with copy_mc_to_kernel() (like pmem's reads, so poisoned
 * memory fails the check rather than the machine). True if it reads as
 * zeroes; false if not, or if it cannot be read that way (no DAX, a bad
 * range of the device's or in the fabric's bad list, the book taken by a
 * shelf meanwhile). Called with lfs_lock held.
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
	pgoff = ((pgoff_t)ext->book << (fabric->book_shift - PAGE_SHIFT)) +
		page;
	if (lfs_bad_first(fabric, pgoff, 1) == pgoff)
		return false;
	bb = fabric->bdev ? fabric->bdev->bd_disk->bb : NULL;
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

	ret = lfs_books_resolve_all(books, n, false, extack);
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
