// SPDX-License-Identifier: GPL-2.0
/*
 * Which books a file open through the filesystem may map: the owner its
 * books are held under, and the checks of a book map the server sends,
 * made when its reply arrives (upreply.c) and again when the map is taken
 * (fs_map.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/sort.h>

#include "fs.h"

/* The owner of every book of a file open through the filesystem. */
struct lfs_shelf lfs_fs_owner = {
	.name = "(a file open through the lfs filesystem)",
};

/*
 * May book @i of a map be @b? On an attached DAX device with the map's book
 * size; the one @base has there, else one nobody holds. Under lfs_lock.
 */
int lfs_fmap_check_book(const struct lfs_book *b, u32 i, u64 book_size,
			const struct lfs_fmap *base, struct lfs_extent *ext,
			struct netlink_ext_ack *extack)
{
	struct lfs_shelf *owner;
	int ret = lfs_book_resolve(b, ext, extack);

	if (ret)
		return ret;
	if (!ext->fabric->dax_dev) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u:%u: interleave group %u has no DAX",
				   b->ig, b->book, b->ig);
		return -EINVAL;
	}
	if (ext->fabric->book_size != book_size) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u:%u: interleave group %u has book size %llu, not %llu",
				   b->ig, b->book, b->ig, ext->fabric->book_size,
				   book_size);
		return -EINVAL;
	}
	if (base && i < base->nr_books) {
		if (base->books[i].fabric == ext->fabric &&
		    base->books[i].book == ext->book)
			return 0;
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u of the map is %u:%u, but the file open here has %u:%u",
				   i, b->ig, b->book, base->books[i].fabric->ig,
				   base->books[i].book);
		return -EINVAL;
	}
	if (base && base->nr_books && base->sync &&
	    !dax_synchronous(ext->fabric->dax_dev)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u:%u: interleave group %u is not synchronous DAX, the file is",
				   b->ig, b->book, b->ig);
		return -EINVAL;
	}
	owner = xa_load(&ext->fabric->owners, ext->book);
	if (owner == &lfs_fs_owner) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u:%u is held by another file open here, or listed twice",
				   b->ig, b->book);
		return -EBUSY;
	}
	if (owner) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u is in shelf '%s'",
				   b->ig, b->book, owner->name);
		return -EBUSY;
	}
	return 0;
}

static int lfs_book_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* A book listed twice among @books. */
static int lfs_books_unique(const struct lfs_book *books, u32 n,
			    struct netlink_ext_ack *extack)
{
	u64 *keys;
	int ret = 0;
	u32 i;

	if (n < 2)
		return 0;
	keys = kvmalloc_array(n, sizeof(*keys), GFP_KERNEL);
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		keys[i] = (u64)books[i].ig << 32 | books[i].book;
	sort(keys, n, sizeof(*keys), lfs_book_cmp, NULL);
	for (i = 1; i < n && !ret; i++) {
		if (keys[i] != keys[i - 1])
			continue;
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u is listed twice",
				   (u32)(keys[i] >> 32), (u32)keys[i]);
		ret = -EINVAL;
	}
	kvfree(keys);
	return ret;
}

/* Could a file take this map now (upreply.c, for the server's sake)? */
int lfs_fmap_check(const struct lfs_book *books, u32 n, u64 book_size,
		   const struct lfs_fmap *base, struct netlink_ext_ack *extack)
{
	u32 keep = base ? min(base->nr_books, n) : 0, i;
	struct lfs_extent ext;
	int ret = 0;

	if (base && base->nr_books && n && book_size != base->book_size) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book size %llu, but the file open here has %llu",
				   book_size, base->book_size);
		return -EINVAL;
	}
	ret = lfs_books_unique(books + keep, n - keep, extack);
	if (ret)
		return ret;
	mutex_lock(&lfs_lock);
	for (i = 0; i < n && !ret; i++)
		ret = lfs_fmap_check_book(&books[i], i, book_size, base, &ext,
					  extack);
	mutex_unlock(&lfs_lock);
	return ret;
}
