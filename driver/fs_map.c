// SPDX-License-Identifier: GPL-2.0
/*
 * The book map of a file open through the filesystem: the server's IG:BOOK
 * list resolved to fabric devices and held in their owner entries as
 * lfs_fs_owner (fs_mapcheck.c), like a shelf's books, so that no shelf can take a book and
 * no fabric device can be detached under an open file; and the iomap
 * through which fs/dax.c reaches the books (one dax_device per extent, as
 * ext2 does with one).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "fs.h"

/* The map of a file, for whoever holds its act_lock. */
struct lfs_fmap *lfs_fmap_get(struct lfs_inode *li)
{
	return rcu_dereference_protected(li->map,
					 lockdep_is_held(&li->act_lock));
}

/* Bytes the books of the map hold (0 without one). Under act_lock. */
u64 lfs_fmap_capacity(struct lfs_inode *li)
{
	struct lfs_fmap *map = lfs_fmap_get(li);

	return map ? (u64)map->nr_books * map->book_size : 0;
}

static int lfs_fmap_take(struct lfs_extent *ext)
{
	int ret = xa_err(xa_store(&ext->fabric->owners, ext->book,
				  &lfs_fs_owner, GFP_KERNEL));

	if (!ret)
		ext->fabric->nr_used++;
	return ret;
}

/* MAP_SYNC needs every device synchronous; writeback flushes with one. */
static void lfs_fmap_props(struct lfs_fmap *map)
{
	struct dax_device *dax;
	u32 i;

	map->sync = true;
	map->wb_dax = NULL;
	for (i = 0; i < map->nr_books; i++) {
		dax = map->books[i].fabric->dax_dev;
		map->sync &= dax_synchronous(dax);
		if (!map->wb_dax || (dax_write_cache_enabled(dax) &&
				     !dax_write_cache_enabled(map->wb_dax)))
			map->wb_dax = dax;
	}
}

/*
 * The map of the answer @r: @base's books where it has them, the others
 * taken for the file, all or none. Called with lfs_lock held.
 */
struct lfs_fmap *lfs_fmap_build(const struct lfs_up_result *r,
				const struct lfs_fmap *base)
{
	u32 n = r->attrs.nr_books, keep = base ? min(base->nr_books, n) : 0;
	struct lfs_fmap *map;
	int ret = 0;
	u32 i;

	lockdep_assert_held(&lfs_lock);
	map = kvzalloc(struct_size(map, books, n), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->nr_books = n;
	map->book_size = n ? r->attrs.book_size : 0;
	map->book_shift = n ? ilog2(map->book_size) : 0;
	for (i = 0; i < n; i++) {
		ret = lfs_fmap_check_book(&r->books[i], i, map->book_size, base,
					  &map->books[i], NULL);
		if (!ret && i >= keep)
			ret = lfs_fmap_take(&map->books[i]);
		if (ret)
			break;
	}
	if (ret) {
		if (i > keep)
			lfs_books_unreserve(map->books + keep, i - keep);
		kvfree(map);
		return ERR_PTR(ret);
	}
	lfs_fmap_props(map);
	if (n > keep)
		lfs_generation++;
	return map;
}

/* Give back @map's books from @keep on; free it after a grace period. */
void lfs_fmap_release(struct lfs_fmap *map, u32 keep)
{
	if (!map)
		return;
	if (map->nr_books > keep) {
		mutex_lock(&lfs_lock);
		lfs_books_unreserve(map->books + keep, map->nr_books - keep);
		lfs_generation++;
		mutex_unlock(&lfs_lock);
	}
	kvfree_rcu(map, rcu);
}

/*
 * Take a RESIZE's answer in for a file open here. Dropping books needs the
 * inode lock, the invalidate lock and no mapping (no read, write or fault
 * can reach them); growing does not. A map that cannot be taken in means the
 * server and this node disagree about the file's books: the file is fenced
 * (the caller revokes it) and the answer is EIO. Under act_lock.
 */
int lfs_fmap_resize(struct inode *inode, const struct lfs_up_result *r)
{
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_fmap *old = lfs_fmap_get(li), *map = ERR_PTR(-EIO);

	if (uuid_equal(&r->attrs.uuid, &li->uuid)) {
		mutex_lock(&lfs_lock);
		map = lfs_fmap_build(r, old);
		mutex_unlock(&lfs_lock);
	}
	if (IS_ERR(map)) {
		pr_warn("file '%s' of the lfs filesystem: its resized book map cannot be used (error %ld); fenced\n",
			li->name, PTR_ERR(map));
		WRITE_ONCE(li->fenced, true);
		return -EIO;
	}
	down_write(&li->map_sem);
	rcu_assign_pointer(li->map, map);
	up_write(&li->map_sem);
	lfs_fmap_release(old, map->nr_books);
	lfs_inode_set_books(inode, map->nr_books, map->book_size);
	return 0;
}

/* fsync: every fabric device under the file flushes its write queue. */
int lfs_fmap_flush(struct lfs_inode *li)
{
	struct lfs_fmap *map;
	unsigned long *seen;
	int ret = 0;
	u32 i;

	seen = bitmap_zalloc(LFS_IG_MAX + 1, GFP_KERNEL);
	if (!seen)
		return -ENOMEM;
	down_read(&li->map_sem);
	map = rcu_dereference_protected(li->map, lockdep_is_held(&li->map_sem));
	for (i = 0; map && i < map->nr_books && !ret; i++) {
		if (__test_and_set_bit(map->books[i].fabric->ig, seen))
			continue;
		/* a device-DAX's stores are flushed as they are made */
		if (!lfs_fabric_devdax(map->books[i].fabric))
			ret = blkdev_issue_flush(map->books[i].fabric->bdev);
	}
	up_read(&li->map_sem);
	bitmap_free(seen);
	return ret;
}

/*
 * Ends the extent before the first bad page (bad.c) from @pos on, as pmem
 * shortens a range before its bad blocks; -EIO if the page at @pos is bad:
 * a read stops short before it, then fails at it, and a fault there is
 * SIGBUS. A PMD fault over a bad page falls back to pages (the extent is
 * shorter than the PMD).
 */
static int lfs_iomap_bad(const struct lfs_extent *ext, unsigned int shift,
			 loff_t pos, struct iomap *iomap)
{
	u64 base = (u64)ext->book << (shift - PAGE_SHIFT);
	u64 page = base + ((pos - iomap->offset) >> PAGE_SHIFT);
	u64 end = base + (iomap->length >> PAGE_SHIFT);
	u64 first;

	if (likely(!lfs_fabric_has_bad(ext->fabric)))
		return 0;
	first = lfs_bad_first(ext->fabric, page, end - page);
	if (first == page)
		return -EIO;
	iomap->length = (first - base) << PAGE_SHIFT;
	return 0;
}

/*
 * One extent: from the book holding @pos, with the books that follow it on
 * the same device while the range asks for them; past the books (a read at
 * the end of the file, where the size is a multiple of the book size) a
 * hole. A write or a MAP_SYNC fault past the size the server knows has
 * metadata to sync first (IOMAP_F_DIRTY: dax_finish_sync_fault() then
 * calls our fsync).
 */
static int lfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			   unsigned int flags, struct iomap *iomap,
			   struct iomap *srcmap)
{
	struct lfs_inode *li = LFS_I(inode);
	const struct lfs_extent *ext;
	struct lfs_fmap *map;
	u64 index, n;
	int ret = -EIO;

	if (lfs_file_fenced(li))
		return -EIO;
	rcu_read_lock();
	map = rcu_dereference(li->map);
	index = map && map->nr_books ? (u64)pos >> map->book_shift : U64_MAX;
	if (map && index < map->nr_books) {
		ext = &map->books[index];
		for (n = 1; index + n < map->nr_books &&
			    (index + n) << map->book_shift < pos + length &&
			    ext[n].fabric == ext->fabric &&
			    ext[n].book == ext->book + n;
		     n++)
			;
		iomap->type = IOMAP_MAPPED;
		iomap->flags = 0;
		iomap->offset = index << map->book_shift;
		iomap->length = n << map->book_shift;
		iomap->addr = ((u64)ext->fabric->dax_pgoff << PAGE_SHIFT) +
			      ((u64)ext->book << map->book_shift);
		iomap->dax_dev = ext->fabric->dax_dev;
		iomap->bdev = ext->fabric->bdev;
		ret = lfs_iomap_bad(ext, map->book_shift, pos, iomap);
		if (ret) {
			rcu_read_unlock();
			return ret;
		}
	}
	rcu_read_unlock();
	if (ret && !(flags & IOMAP_WRITE)) {
		/* a read at or past the end: dax_iomap_rw() stops there */
		iomap->type = IOMAP_HOLE;
		iomap->flags = 0;
		iomap->offset = pos;
		iomap->length = length;
		iomap->addr = IOMAP_NULL_ADDR;
		iomap->dax_dev = NULL;
		ret = 0;
	} else if (!ret && (flags & IOMAP_WRITE) &&
		   pos + length > READ_ONCE(li->server_size)) {
		iomap->flags |= IOMAP_F_DIRTY;
	}
	return ret;
}

const struct iomap_ops lfs_iomap_ops = {
	.iomap_begin = lfs_iomap_begin,
};
