// SPDX-License-Identifier: GPL-2.0
/*
 * Moving one book of an active shelf to another book (LFS_CMD_BOOK_MOVE)
 * while the shelf stays open and mounted (issue 33, a spike: 6.1 only).
 *
 * dax_direct_access() has no release, so a DAX copy that got the old book's
 * address may still store there after ours; only the filesystem can drain
 * them. The move therefore freezes the filesystem on the shelf's disk:
 * freeze_super() waits for write syscalls and write faults in progress, and
 * its sync writes back the dirty DAX entries, write-protecting every user
 * PTE (dax_entry_mkclean()), so every store faults and waits for the thaw.
 * Bios that reach the disk directly wait at the move's gate (disk.c).
 * Frozen, the book is copied, the new map published (RCU, as an extend
 * does), and then every DAX entry of every file is dropped with its PTEs:
 * they hold pfns, and a fault that found an entry of the old book would
 * map it again (or trip fs/dax.c's and insert_pfn()'s pfn checks).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dax.h>
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "lfs.h"

#ifndef LFS_HAVE_BDEV_FREEZE

struct lfs_move {
	struct lfs_shelf *shelf;
	u32 index;
	struct lfs_extent from, to;
	struct block_device *bdev;
	struct super_block *sb; /* the frozen filesystem, or NULL */
	struct inode **inodes; /* held until after the thaw (iput may evict) */
	unsigned int nr_inodes, cap;
	unsigned int nr_dirty; /* files with dirty DAX entries, frozen */
	unsigned int nr_files; /* files with DAX entries, frozen */
	bool switched; /* the map holds the new book */
	u64 t_start, t_frozen, t_gated, t_copied, t_switched, t_invalidated, t_done;
};

/*
 * The filesystem on the disk frozen, with an active reference kept so that
 * an unmount cannot free it before the thaw; or none mounted, the disk synced.
 */
static int lfs_move_freeze(struct lfs_move *mv, struct netlink_ext_ack *extack)
{
	struct block_device *bdev = mv->bdev;
	int ret;

	ret = freeze_bdev(bdev);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "freezing the filesystem on %s failed (error %d)",
				   mv->shelf->disk->disk_name, ret);
		return ret;
	}
	mutex_lock(&bdev->bd_fsfreeze_mutex);
	mv->sb = bdev->bd_fsfreeze_sb;
	if (mv->sb && !atomic_inc_not_zero(&mv->sb->s_active))
		mv->sb = NULL;
	mutex_unlock(&bdev->bd_fsfreeze_mutex);
	return 0;
}

static void lfs_move_thaw(struct lfs_move *mv)
{
	unsigned int i;

	thaw_bdev(mv->bdev);
	/* after the thaw: the last iput of an unlinked file writes */
	for (i = 0; i < mv->nr_inodes; i++)
		iput(mv->inodes[i]);
	kfree(mv->inodes);
	mv->inodes = NULL;
	mv->nr_inodes = 0;
	if (mv->sb)
		deactivate_super(mv->sb);
}

static int lfs_move_hold(struct lfs_move *mv, struct inode *inode)
{
	struct inode **more;

	if (mv->nr_inodes == mv->cap) {
		more = krealloc_array(mv->inodes, mv->cap * 2 + 16,
				      sizeof(*more), GFP_KERNEL);
		if (!more) {
			iput(inode); /* not the last: the list holds it too */
			return -ENOMEM;
		}
		mv->inodes = more;
		mv->cap = mv->cap * 2 + 16;
	}
	mv->inodes[mv->nr_inodes++] = inode;
	return 0;
}

/*
 * Call @fn on every file of the frozen filesystem that has DAX entries,
 * each held (lfs_move_hold()) until the thaw; as drop_pagecache_sb() walks.
 */
static int lfs_move_walk(struct lfs_move *mv,
			 int (*fn)(struct lfs_move *mv, struct inode *inode))
{
	struct super_block *sb = mv->sb;
	struct inode *inode;
	int ret = 0;

	if (!sb)
		return 0;
	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		spin_lock(&inode->i_lock);
		if ((inode->i_state & (I_FREEING | I_WILL_FREE | I_NEW)) ||
		    !dax_mapping(inode->i_mapping) ||
		    mapping_empty(inode->i_mapping)) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		__iget(inode);
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);

		ret = lfs_move_hold(mv, inode);
		if (!ret)
			ret = fn(mv, inode);
		cond_resched();
		spin_lock(&sb->s_inode_list_lock);
		if (ret)
			break;
	}
	spin_unlock(&sb->s_inode_list_lock);
	return ret;
}

/*
 * A page pinned by get_user_pages() (O_DIRECT into a mapping, RDMA) may be
 * written after the copy, and that write would be lost: refuse the move.
 * dax_layout_busy_page() unmaps the file first, as a truncate does.
 */
static int lfs_move_pinned(struct lfs_move *mv, struct inode *inode)
{
	struct address_space *mapping = inode->i_mapping;
	struct page *page;

	/*
	 * The freeze's sync writes back only inodes on the dirty list; a
	 * MAP_SYNC fault's dax_insert_pfn_mkwrite() tags its entry dirty
	 * without dirtying the inode. Counted, and written back here.
	 */
	if (mapping_tagged(mapping, PAGECACHE_TAG_DIRTY)) {
		pr_notice("%s: move: inode %lu has dirty DAX entries, frozen\n",
			  mv->shelf->disk->disk_name, inode->i_ino);
		mv->nr_dirty++;
		filemap_write_and_wait(mapping);
	}
	filemap_invalidate_lock(mapping);
	page = dax_layout_busy_page(mapping);
	filemap_invalidate_unlock(mapping);
	return page ? -EBUSY : 0;
}

/*
 * Drop the file's DAX entries and their PTEs: a fault maps the new book
 * afterwards. The invalidate_lock keeps faults out meanwhile; a fault that
 * took the old book's pfn before the switch holds its entry locked, which
 * invalidate_inode_pages2() waits for. Entries are clean (frozen): an entry
 * still dirty would be -EBUSY.
 */
static int lfs_move_invalidate(struct lfs_move *mv, struct inode *inode)
{
	struct address_space *mapping = inode->i_mapping;
	int ret, tries;

	for (tries = 0; tries < 3; tries++) {
		filemap_invalidate_lock(mapping);
		ret = invalidate_inode_pages2(mapping);
		filemap_invalidate_unlock(mapping);
		if (!ret)
			break;
		pr_notice("%s: move: inode %lu: DAX entries busy (error %d, %lu left), again\n",
			  mv->shelf->disk->disk_name, inode->i_ino, ret,
			  mapping->nrpages);
		filemap_write_and_wait(mapping);
	}
	if (ret)
		pr_err("%s: move: inode %lu keeps DAX entries (error %d)\n",
		       mv->shelf->disk->disk_name, inode->i_ino, ret);
	return ret;
}

/* The pages of an extent, mapped; NULL if the fabric cannot map them. */
static void *lfs_move_kaddr(const struct lfs_extent *ext, u64 page, long nr)
{
	struct lfs_fabric *fabric = ext->fabric;
	pgoff_t pgoff = ((pgoff_t)ext->book << (fabric->book_shift - PAGE_SHIFT)) + page;
	void *kaddr;

	if (fabric->kaddr)
		return fabric->kaddr + (pgoff << PAGE_SHIFT);
	if (dax_direct_access(fabric->dax_dev, fabric->dax_pgoff + pgoff, nr,
			      DAX_ACCESS, &kaddr, NULL) < nr)
		return NULL;
	return kaddr;
}

#define LFS_MOVE_CHUNK (64 * 1024)

/*
 * Copy the book through a bounce buffer: the read tolerates poison
 * (copy_mc), the write bypasses the cache to the fabric (flushcache).
 */
static int lfs_move_copy(struct lfs_move *mv, struct netlink_ext_ack *extack)
{
	u64 size = mv->shelf->book_size, off;
	long nr = LFS_MOVE_CHUNK >> PAGE_SHIFT;
	void *buf, *src, *dst;
	int id, ret = 0;

	buf = kmalloc(LFS_MOVE_CHUNK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (off = 0; off < size && !ret; off += LFS_MOVE_CHUNK) {
		id = dax_read_lock();
		src = lfs_move_kaddr(&mv->from, off >> PAGE_SHIFT, nr);
		dst = lfs_move_kaddr(&mv->to, off >> PAGE_SHIFT, nr);
		if (!src || !dst || copy_mc_to_kernel(buf, src, LFS_MOVE_CHUNK)) {
			/* the old book unless only the new one failed to map */
			const struct lfs_extent *bad = src && !dst ? &mv->to : &mv->from;

			NL_SET_ERR_MSG_FMT(extack,
					   "book %u:%u: reading or writing at offset %llu failed",
					   bad->fabric->ig, bad->book, off);
			ret = -EIO;
		} else {
			memcpy_flushcache(dst, buf, LFS_MOVE_CHUNK);
		}
		dax_read_unlock(id);
		cond_resched();
	}
	wmb(); /* the non-temporal stores reached the fabric */
	kfree(buf);
	return ret;
}

/* Bios wait at the gate (disk.c); those past it are waited for here. */
static void lfs_move_gate(struct lfs_shelf *shelf)
{
	WRITE_ONCE(shelf->moving, true);
	lfs_io_wait(); /* bios remapped or copied inside lfs_io_lock() */
	synchronize_rcu(); /* the copies inside lfs_copy_lock() (rcu) */
	lfs_remaps_wait(shelf);
}

static void lfs_move_ungate(struct lfs_shelf *shelf)
{
	WRITE_ONCE(shelf->moving, false);
	smp_mb(); /* pairs with wait_var_event()'s check */
	wake_up_var(&shelf->moving);
}

/* Publish the map with the new book; faults and bios see it from now on. */
static int lfs_move_switch(struct lfs_move *mv)
{
	struct lfs_shelf *shelf = mv->shelf;
	struct lfs_map *old = rcu_dereference_protected(
		shelf->map, lockdep_is_held(&lfs_lock));
	struct lfs_map *map = lfs_map_alloc(old->nr_books);

	if (!map)
		return -ENOMEM;
	memcpy(map->books, old->books, old->nr_books * sizeof(*map->books));
	map->books[mv->index] = mv->to;
	if (!lfs_flush_has(shelf, mv->to.fabric)) {
		lfs_disk_stack_fabric(shelf, mv->to.fabric);
		lfs_flush_add(shelf, mv->to.fabric);
	}
	rcu_assign_pointer(shelf->map, map);
	synchronize_rcu();
	kvfree(old);
	return 0;
}

/* Frozen: check, copy, switch; the gate held only around copy and switch. */
static int lfs_move_frozen(struct lfs_move *mv, struct netlink_ext_ack *extack)
{
	int ret;

	ret = lfs_move_walk(mv, lfs_move_pinned);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "a page of shelf '%s' is pinned (O_DIRECT or RDMA in progress), try again",
				   mv->shelf->name);
		return ret;
	}
	mv->nr_files = mv->nr_inodes;
	lfs_move_gate(mv->shelf);
	mv->t_gated = ktime_get_ns();
	ret = lfs_move_copy(mv, extack);
	mv->t_copied = ktime_get_ns();
	if (!ret)
		ret = lfs_move_switch(mv);
	mv->switched = !ret;
	lfs_move_ungate(mv->shelf);
	mv->t_switched = ktime_get_ns();
	if (ret)
		return ret;
	/*
	 * Not under the gate: a fault that waits for the invalidate_lock may
	 * hold a bio of its own (an extent block) at the gate.
	 */
	ret = lfs_move_walk(mv, lfs_move_invalidate);
	if (ret)
		NL_SET_ERR_MSG_FMT(extack,
				   "book %u of shelf '%s' moved, but mappings of the old book %u:%u remain: it stays reserved",
				   mv->index, mv->shelf->name, mv->from.fabric->ig,
				   mv->from.book);
	return ret;
}

/* The stall: from the freeze's start to the thaw's end, and its parts. */
static void lfs_move_report(const struct lfs_move *mv)
{
	pr_info("%s: book %u of shelf '%s' moved from %u:%u to %u:%u: stall %llu us (freeze %llu, unmap+gate %llu, copy %llu, switch %llu, invalidate %llu, thaw %llu), %u of %u files dirty when frozen\n",
		mv->shelf->disk->disk_name, mv->index, mv->shelf->name,
		mv->from.fabric->ig, mv->from.book, mv->to.fabric->ig,
		mv->to.book, (mv->t_done - mv->t_start) / 1000,
		(mv->t_frozen - mv->t_start) / 1000,
		(mv->t_gated - mv->t_frozen) / 1000,
		(mv->t_copied - mv->t_gated) / 1000,
		(mv->t_switched - mv->t_copied) / 1000,
		(mv->t_invalidated - mv->t_switched) / 1000,
		(mv->t_done - mv->t_invalidated) / 1000, mv->nr_dirty,
		mv->nr_files);
}

static int lfs_move_target(struct lfs_move *mv, const struct lfs_book *to,
			   struct netlink_ext_ack *extack)
{
	unsigned int shift = mv->shelf->book_shift - PAGE_SHIFT;
	u64 page;
	int ret;

	ret = lfs_book_resolve(to, &mv->to, extack);
	if (ret)
		return ret;
	if (xa_load(&mv->to.fabric->owners, to->book) == mv->shelf) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u is a book of shelf '%s' already",
				   to->ig, to->book, mv->shelf->name);
		return -EINVAL;
	}
	ret = lfs_books_reserve(mv->shelf, to, 1, &mv->to, extack);
	if (ret)
		return ret;
	page = (u64)to->book << shift;
	if (lfs_bad_first(mv->to.fabric, page, 1ULL << shift) < page + (1ULL << shift)) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u holds a bad range", to->ig,
				   to->book);
		lfs_books_unreserve(&mv->to, 1);
		return -EIO;
	}
	if (!mv->to.fabric->dax_dev || !mv->from.fabric->dax_dev) {
		NL_SET_ERR_MSG_FMT(extack, "book %u:%u: both books need DAX to move",
				   to->ig, to->book);
		lfs_books_unreserve(&mv->to, 1);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int lfs_move_check(struct lfs_move *mv, struct netlink_ext_ack *extack)
{
	struct lfs_shelf *shelf = mv->shelf;
	struct lfs_map *map = rcu_dereference_protected(
		shelf->map, lockdep_is_held(&lfs_lock));

	if (lfs_shelf_fenced(shelf))
		return lfs_shelf_fenced_error(shelf, extack);
	if (mv->index >= map->nr_books) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book index %u is beyond the %u books of shelf '%s'",
				   mv->index, map->nr_books, shelf->name);
		return -ERANGE;
	}
	if (shelf->staged_cmd) {
		NL_SET_ERR_MSG_FMT(extack,
				   "shelf '%s' is being extended by another request",
				   shelf->name);
		return -EBUSY;
	}
	mv->from = map->books[mv->index];
	return 0;
}

/*
 * Under lfs_lock throughout: nothing else changes the shelf's map, and the
 * old book is given back only once nothing maps it.
 */
int lfs_book_move(struct lfs_shelf *shelf, u32 index, const struct lfs_book *to,
		  struct netlink_ext_ack *extack)
{
	struct lfs_move mv = { .shelf = shelf, .index = index };
	int ret;

	lockdep_assert_held(&lfs_lock);
	ret = lfs_move_check(&mv, extack);
	if (!ret)
		ret = lfs_move_target(&mv, to, extack);
	if (ret)
		return ret;
	mv.bdev = shelf->disk->part0;
	mv.t_start = ktime_get_ns();
	ret = lfs_move_freeze(&mv, extack);
	if (ret)
		goto out_unreserve;
	mv.t_frozen = ktime_get_ns();
	ret = lfs_move_frozen(&mv, extack);
	mv.t_invalidated = ktime_get_ns();
	lfs_move_thaw(&mv);
	mv.t_done = ktime_get_ns();
	if (mv.switched)
		lfs_generation++;
	if (ret && mv.switched)
		return ret; /* both books stay reserved */
	if (ret)
		goto out_unreserve;
	lfs_books_unreserve(&mv.from, 1);
	lfs_move_report(&mv);
	return 0;

out_unreserve:
	lfs_books_unreserve(&mv.to, 1);
	return ret;
}

#else /* LFS_HAVE_BDEV_FREEZE */

int lfs_book_move(struct lfs_shelf *shelf, u32 index, const struct lfs_book *to,
		  struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "moving a book needs Linux 6.1 (not yet ported to bdev_freeze())");
	return -EOPNOTSUPP;
}

#endif
