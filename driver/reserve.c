// SPDX-License-Identifier: GPL-2.0
/*
 * Book reservation: a shelf takes books into its owner entries on the fabric
 * devices (one xarray per device), after checking that each book may join
 * the shelf (book size, DAX, logical block size). Under lfs_lock.
 */
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/xarray.h>

#include "lfs.h"

/* The owner of a book being zeroed (books.c), in the fabric's owners xarray. */
struct lfs_shelf lfs_zeroing = { .name = "(being zeroed)" };

void lfs_books_unreserve(struct lfs_extent *exts, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		xa_erase(&exts[i].fabric->owners, exts[i].book);
		exts[i].fabric->nr_used--;
	}
}

/* A DAX shelf cannot lose DAX (a filesystem may be mounted with it). */
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
	if (dax_synchronous(shelf->dax_dev) && !lfs_fabric_sync(fabric)) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"book %u:%u: interleave group %u is not synchronous DAX, shelf '%s' is",
			b->ig, b->book, b->ig, shelf->name);
		return -EINVAL;
	}
	if (lfs_fabric_lbs(fabric) !=
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
	if (owner == &lfs_zeroing) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u is being zeroed", b->ig,
				   b->book);
		return -EBUSY;
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

/* All of them or none: on error, the books of this call are given back. */
int lfs_books_reserve(struct lfs_shelf *shelf, const struct lfs_book *books,
		      u32 n, struct lfs_extent *exts,
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
