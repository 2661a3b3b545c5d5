// SPDX-License-Identifier: GPL-2.0
/*
 * The data of the filesystem's files (docs/NAMESPACE.md "Data"): read and
 * write copy through the fabric's DAX mapping (dax_iomap_rw()), mmap is DAX
 * (dax_iomap_fault(): MAP_SYNC, PMD faults where the books are aligned,
 * private mappings copied on write), as ext2 does on one device.
 *
 * What allocates: a write past the books grows the file by a RESIZE upcall
 * before the data is copied; truncate and fallocate are a RESIZE to the
 * size asked; nothing else (a fault past the end of the file is SIGBUS).
 * Bytes past the size read as zeroes: the server's books come zeroed, and
 * a size change zeroes what a mapping may have stored after the old end in
 * its last page, or what a shrink leaves in the last book.
 */
#include <linux/dax.h>
#include <linux/huge_mm.h>
#include <linux/pagemap.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "fs.h"

/* Zero [@from, @to) of the file, within its books. */
static int lfs_zero(struct inode *inode, loff_t from, loff_t to)
{
	if (from >= to)
		return 0;
	return dax_zero_range(inode, from, to - from, NULL, &lfs_iomap_ops);
}

/*
 * RESIZE to @size bytes and take the new map in. Under act_lock. If the
 * outcome is unknown (no answer, or one this node refused) for a resize
 * that drops books, the server may have freed books this node still maps:
 * the file is fenced (the caller revokes it).
 */
static int lfs_resize_upcall(struct inode *inode, struct dentry *dentry,
			     loff_t size)
{
	struct lfs_inode *li = LFS_I(inode);
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_args a = { .op = LFS_UP_RESIZE, .name = name,
				 .uuid = &li->uuid, .has_size = true,
				 .size = size, .base = lfs_fmap_get(li) };
	bool shrink = size < lfs_fmap_capacity(li);
	struct lfs_up_result r;
	int ret;

	lfs_dentry_name(dentry, name);
	mutex_lock(&li->size_lock);
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb));
	if (!ret) {
		ret = r.attrs.size == size ? lfs_fmap_resize(inode, &r) : -EIO;
		if (!ret)
			li->server_size = size;
		else
			WRITE_ONCE(li->fenced, true);
		lfs_up_result_free(&r);
	} else if (shrink && r.sent &&
		   (ret == -ETIMEDOUT || ret == -EINTR || ret == -ENOTCONN ||
		    ret == -EIO)) {
		WRITE_ONCE(li->fenced, true);
	}
	mutex_unlock(&li->size_lock);
	return ret;
}

/* The server learns the size this node extended the file to (fsync). */
int lfs_sync_size(struct inode *inode, struct dentry *dentry)
{
	struct lfs_inode *li = LFS_I(inode);
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_args a = { .op = LFS_UP_SETSIZE, .name = name,
				 .uuid = &li->uuid, .has_size = true };
	struct lfs_up_result r;
	int ret = 0;

	mutex_lock(&li->size_lock);
	a.size = i_size_read(inode);
	if (a.size != li->server_size) {
		lfs_dentry_name(dentry, name);
		ret = lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb));
		if (!ret) {
			li->server_size = a.size;
			lfs_up_result_free(&r);
		}
	}
	mutex_unlock(&li->size_lock);
	return ret;
}

/*
 * A new size for a file active here, under act_lock and the invalidate
 * lock. Shrinking is refused while the file is mapped or a page past the
 * new end is pinned (EBUSY); the DAX entries past it go before the books.
 */
static int lfs_setsize_active(struct inode *inode, struct dentry *dentry,
			      loff_t size)
{
	struct lfs_inode *li = LFS_I(inode);
	struct address_space *mapping = inode->i_mapping;
	loff_t old = i_size_read(inode);
	int ret;

	if (size < old) {
		if (mapping_mapped(mapping))
			return -EBUSY;
		ret = lfs_dax_break_from(inode, round_up(size, PAGE_SIZE));
		if (ret)
			return ret;
	} else {
		ret = lfs_zero(inode, old, min_t(loff_t, size,
						 round_up(old, PAGE_SIZE)));
		if (ret)
			return ret;
	}
	ret = lfs_resize_upcall(inode, dentry, size);
	if (ret)
		return ret;
	i_size_write(inode, size);
	if (size < old)
		ret = lfs_zero(inode, size,
			       min_t(loff_t, round_up(old, PAGE_SIZE),
				     lfs_fmap_capacity(li)));
	return ret;
}

/*
 * truncate, ftruncate, O_TRUNC, fallocate: the file becomes @size bytes,
 * with books covering it exactly. A file not open here is activated for
 * the time of the change. Under the inode lock.
 */
int lfs_setsize(struct dentry *dentry, loff_t size)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	bool fenced;
	int ret;

	ret = mutex_lock_killable(&li->act_lock);
	if (ret)
		return ret;
	ret = lfs_activate(inode, dentry, true);
	if (ret)
		goto out_unlock;
	fenced = READ_ONCE(li->fenced);
	filemap_invalidate_lock(inode->i_mapping);
	if (size != i_size_read(inode))
		ret = lfs_setsize_active(inode, dentry, size);
	filemap_invalidate_unlock(inode->i_mapping);
	if (!fenced && READ_ONCE(li->fenced))
		lfs_file_revoke(li, "the resize's outcome is unknown");
	lfs_release_activation(inode, dentry);
out_unlock:
	mutex_unlock(&li->act_lock);
	return ret;
}

/* Bytes a read or write copies between two checks of the fence. */
#define LFS_IO_CHUNK SZ_2M

/*
 * One chunk of a read or write: checked against the fence, copied inside
 * lfs_fs_srcu (a revocation waits for it) with page faults disabled, so
 * that a user page nobody serves (a userfaultfd, a hung FUSE daemon) stalls
 * no fence. Returns what dax_iomap_rw() did: short, or EFAULT, where a user
 * page is not there.
 */
static ssize_t lfs_dax_rw_chunk(struct kiocb *iocb, struct iov_iter *iter)
{
	struct lfs_inode *li = LFS_I(file_inode(iocb->ki_filp));
	size_t count = iov_iter_count(iter), left = 0;
	ssize_t ret;
	int idx;

	if (count > LFS_IO_CHUNK) {
		left = count - LFS_IO_CHUNK;
		iov_iter_truncate(iter, LFS_IO_CHUNK);
	}
	idx = lfs_fs_srcu_lock();
	if (lfs_file_fenced(li)) {
		ret = -EIO;
	} else {
		pagefault_disable();
		ret = dax_iomap_rw(iocb, iter, &lfs_iomap_ops);
		pagefault_enable();
	}
	lfs_fs_srcu_unlock(idx);
	iov_iter_reexpand(iter, iov_iter_count(iter) + left);
	return ret;
}

/* Fault in the user pages of the next chunk; false if none could be. */
static bool lfs_fault_in(struct iov_iter *iter)
{
	size_t n = min_t(size_t, iov_iter_count(iter), LFS_IO_CHUNK);

	if (iov_iter_rw(iter) == WRITE)
		return fault_in_iov_iter_readable(iter, n) < n;
	return fault_in_iov_iter_writeable(iter, n) < n;
}

/*
 * read() and write() through the DAX mapping, in chunks of at most 2 MiB,
 * the fence checked before each (docs/FENCING.md): a fenced file stores
 * nothing more, however long the write. The user pages a chunk could not
 * reach are faulted in between chunks, outside lfs_fs_srcu, for as long as
 * that makes progress (the end of the file or a page that cannot be
 * faulted in ends the call: a short count, or EFAULT).
 */
static ssize_t lfs_dax_rw(struct kiocb *iocb, struct iov_iter *iter)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t done = 0, ret = 0;

	while (iov_iter_count(iter)) {
		ret = lfs_dax_rw_chunk(iocb, iter);
		if (ret > 0) {
			done += ret;
			continue;
		}
		/* EFAULT: a user page is not there; 0: a read at the end */
		if (ret != -EFAULT &&
		    (ret || iocb->ki_pos >= i_size_read(inode)))
			break;
		if (iocb->ki_flags & IOCB_NOWAIT) {
			ret = -EAGAIN;
			break;
		}
		/*
		 * As filemap_read() does: go on while faulting the pages in
		 * makes progress (a page may be taken away again before the
		 * copy: another mapping's truncation, reclaim), until a
		 * fatal signal.
		 */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (!lfs_fault_in(iter)) {
			ret = -EFAULT;
			break;
		}
	}
	return done ? done : ret;
}

static ssize_t lfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret;

	if (!iov_iter_count(to))
		return 0;
	if (iocb->ki_flags & IOCB_NOWAIT) {
		if (!inode_trylock_shared(inode))
			return -EAGAIN;
	} else {
		inode_lock_shared(inode);
	}
	ret = lfs_dax_rw(iocb, to);
	inode_unlock_shared(inode);
	return ret;
}

/*
 * Before a write of @count bytes at the position: the page after the old
 * end is zeroed up to the write, and a write past the books grows the file
 * (RESIZE to the write's end) first. Under the inode lock.
 */
static int lfs_write_prepare(struct kiocb *iocb, size_t count)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct lfs_inode *li = LFS_I(inode);
	loff_t pos = iocb->ki_pos, end = pos + count;
	loff_t size = i_size_read(inode);
	bool fenced = READ_ONCE(li->fenced);
	int ret = 0;

	if (lfs_file_fenced(li))
		return -EIO;
	if (pos > size) {
		ret = lfs_zero(inode, size,
			       min_t(loff_t, pos, round_up(size, PAGE_SIZE)));
		if (ret)
			return ret;
	}
	ret = mutex_lock_killable(&li->act_lock);
	if (ret)
		return ret;
	if (end > lfs_fmap_capacity(li))
		ret = iocb->ki_flags & IOCB_NOWAIT ?
			      -EAGAIN :
			      lfs_resize_upcall(inode, file->f_path.dentry, end);
	mutex_unlock(&li->act_lock);
	if (!fenced && READ_ONCE(li->fenced))
		lfs_file_revoke(li, "its grown book map was refused");
	return ret;
}

static ssize_t lfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret;

	if (iocb->ki_flags & IOCB_NOWAIT) {
		if (!inode_trylock(inode))
			return -EAGAIN;
	} else {
		inode_lock(inode);
	}
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out_unlock;
	ret = lfs_write_prepare(iocb, ret);
	if (ret)
		goto out_unlock;
	ret = lfs_dax_rw(iocb, from);
	if (ret > 0 && iocb->ki_pos > i_size_read(inode))
		i_size_write(inode, iocb->ki_pos);
out_unlock:
	inode_unlock(inode);
	if (ret > 0)
		ret = generic_write_sync(iocb, ret);
	return ret;
}

/*
 * The lock order of faults, as ext2's: mmap_lock, sb_start_pagefault, the
 * invalidate lock, inside which the fenced flag is checked (a revocation
 * unmaps under it exclusively), then the DAX entry locks.
 */
static vm_fault_t lfs_dax_huge_fault(struct vm_fault *vmf, lfs_fault_size_t sz)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	bool write = (vmf->flags & FAULT_FLAG_WRITE) &&
		     (vmf->vma->vm_flags & VM_SHARED);
	lfs_dax_pfn_t pfn;
	vm_fault_t ret;

	if (write)
		sb_start_pagefault(inode->i_sb);
	filemap_invalidate_lock_shared(inode->i_mapping);
	if (lfs_file_fenced(LFS_I(inode))) {
		ret = VM_FAULT_SIGBUS;
	} else {
		ret = dax_iomap_fault(vmf, sz, &pfn, NULL, &lfs_iomap_ops);
		/* MAP_SYNC past the size the server knows: sync it first */
		if (ret & VM_FAULT_NEEDDSYNC)
			ret = dax_finish_sync_fault(vmf, sz, pfn);
	}
	filemap_invalidate_unlock_shared(inode->i_mapping);
	if (write)
		sb_end_pagefault(inode->i_sb);
	return ret;
}

static vm_fault_t lfs_dax_fault(struct vm_fault *vmf)
{
	return lfs_dax_huge_fault(vmf, LFS_FAULT_PTE);
}

static const struct vm_operations_struct lfs_vm_ops = {
	.fault = lfs_dax_fault,
	.huge_fault = lfs_dax_huge_fault,
	.page_mkwrite = lfs_dax_fault,
	.pfn_mkwrite = lfs_dax_fault,
};

static bool lfs_map_sync_ok(struct lfs_inode *li)
{
	struct lfs_fmap *map;
	bool ok;

	rcu_read_lock();
	map = rcu_dereference(li->map);
	ok = !map || map->sync;
	rcu_read_unlock();
	return ok;
}

static int lfs_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lfs_inode *li = LFS_I(file_inode(file));

	if (lfs_file_fenced(li))
		return -EIO;
	/* MAP_SYNC promises what only synchronous DAX devices keep */
	if ((vma->vm_flags & VM_SYNC) && !lfs_map_sync_ok(li))
		return -EOPNOTSUPP;
	file_accessed(file);
	vma->vm_ops = &lfs_vm_ops;
	lfs_vma_set_hugepage(vma);
	return 0;
}

/* The last page's cache lines of mapped stores, flushed; the size, told. */
static int lfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	struct lfs_inode *li = LFS_I(inode);
	int ret = file_write_and_wait_range(file, start, end);

	if (ret)
		return ret;
	if (lfs_file_fenced(li))
		return -EIO;
	ret = lfs_sync_size(inode, file->f_path.dentry);
	return ret ? ret : lfs_fmap_flush(li);
}

static long lfs_fallocate(struct file *file, int mode, loff_t offset,
			  loff_t len)
{
	struct inode *inode = file_inode(file);
	loff_t end = offset + len;
	long ret = 0;

	if (mode)
		return -EOPNOTSUPP;
	if (lfs_file_fenced(LFS_I(inode)))
		return -EIO;
	inode_lock(inode);
	if (end > i_size_read(inode)) {
		ret = inode_newsize_ok(inode, end);
		if (!ret)
			ret = lfs_setsize(file->f_path.dentry, end);
	}
	inode_unlock(inode);
	return ret;
}

static int lfs_file_open(struct inode *inode, struct file *file)
{
	struct lfs_inode *li = LFS_I(inode);
	int ret = generic_file_open(inode, file);

	if (ret)
		return ret;
	ret = mutex_lock_killable(&li->act_lock);
	if (ret)
		return ret;
	ret = lfs_activate(inode, file->f_path.dentry,
			   file->f_mode & FMODE_WRITE);
	mutex_unlock(&li->act_lock);
	if (!ret)
		lfs_file_allow_odirect(file);
	return ret;
}

/* finish_open() of a file CREATE_OPEN made and activated (fs_dir.c). */
int lfs_file_open_given(struct inode *inode, struct file *file)
{
	int ret = generic_file_open(inode, file);

	if (!ret)
		lfs_file_allow_odirect(file);
	return ret;
}

/* The last reference to the file: no descriptor and no mapping uses it. */
static int lfs_file_release(struct inode *inode, struct file *file)
{
	struct lfs_inode *li = LFS_I(inode);

	mutex_lock(&li->act_lock);
	lfs_release_activation(inode, file->f_path.dentry);
	mutex_unlock(&li->act_lock);
	return 0;
}

const struct file_operations lfs_file_fops = {
	.llseek = generic_file_llseek,
	.read_iter = lfs_read_iter,
	.write_iter = lfs_write_iter,
	.mmap = lfs_file_mmap,
	LFS_FOPS_MAP_SYNC,
	.open = lfs_file_open,
	.release = lfs_file_release,
	.fsync = lfs_fsync,
	.fallocate = lfs_fallocate,
	.get_unmapped_area = thp_get_unmapped_area,
	.splice_read = lfs_splice_read,
	.splice_write = iter_file_splice_write,
};

/* msync and fsync write mapped stores back through here (super_setup_bdi). */
static int lfs_writepages(struct address_space *mapping,
			  struct writeback_control *wbc)
{
	struct lfs_inode *li = LFS_I(mapping->host);
	struct lfs_fmap *map;
	int ret = 0;

	down_read(&li->map_sem);
	map = rcu_dereference_protected(li->map, lockdep_is_held(&li->map_sem));
	if (map && map->nr_books)
		ret = dax_writeback_mapping_range(mapping, map->wb_dax, wbc);
	up_read(&li->map_sem);
	return ret;
}

const struct address_space_operations lfs_aops = {
	.writepages = lfs_writepages,
	.direct_IO = noop_direct_IO,
	.dirty_folio = noop_dirty_folio,
};
