// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes of the filesystem: one per shelf this node has looked at, found by
 * the stable inode number the server gives and told apart by the shelf's
 * UUID; their attributes as the server last said (trusted for the mount's
 * attr_timeout). fs_iget.c makes them.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/slab.h>

#include "fs.h"

static struct kmem_cache *lfs_inode_cache;

struct inode *lfs_alloc_inode(struct super_block *sb)
{
	struct lfs_inode *li = alloc_inode_sb(sb, lfs_inode_cache, GFP_KERNEL);

	if (!li)
		return NULL;
	uuid_copy(&li->uuid, &uuid_null);
	li->attr_time = 0;
	li->book_size = 0;
	li->nr_books = 0;
	li->writable = false;
	li->nr_open = 0;
	li->act_write = false;
	li->leased = false;
	li->lease_epoch = 0;
	li->dead = false;
	li->fenced = false;
	RCU_INIT_POINTER(li->map, NULL);
	INIT_LIST_HEAD(&li->active);
	INIT_LIST_HEAD(&li->fencing);
	li->name[0] = '\0';
	li->server_size = 0;
	return &li->vfs;
}

void lfs_free_inode(struct inode *inode)
{
	kmem_cache_free(lfs_inode_cache, LFS_I(inode));
}

void lfs_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
}

static void lfs_inode_once(void *p)
{
	struct lfs_inode *li = p;

	inode_init_once(&li->vfs);
	mutex_init(&li->act_lock);
	mutex_init(&li->size_lock);
	init_rwsem(&li->map_sem);
}

int lfs_inode_cache_init(void)
{
	lfs_inode_cache = kmem_cache_create("lfs_inode_cache",
					    sizeof(struct lfs_inode), 0,
					    SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					    lfs_inode_once);
	return lfs_inode_cache ? 0 : -ENOMEM;
}

void lfs_inode_cache_exit(void)
{
	/* inodes are freed after an RCU grace period */
	rcu_barrier();
	kmem_cache_destroy(lfs_inode_cache);
}

unsigned long lfs_upcall_timeout(struct super_block *sb)
{
	return READ_ONCE(lfs_fs(sb)->upcall_timeout);
}

/* The dentry's name, NUL-terminated (at most LFS_NAME_MAX characters). */
void lfs_dentry_name(struct dentry *dentry, char *buf)
{
	spin_lock(&dentry->d_lock);
	strscpy(buf, dentry->d_name.name, LFS_NAME_MAX + 1);
	spin_unlock(&dentry->d_lock);
}

bool lfs_attrs_fresh(struct inode *inode)
{
	return time_before(jiffies, READ_ONCE(LFS_I(inode)->attr_time) +
					    READ_ONCE(lfs_fs(inode->i_sb)->attr_timeout));
}

void lfs_inode_set_books(struct inode *inode, u32 nr_books, u64 book_size)
{
	struct lfs_inode *li = LFS_I(inode);

	li->nr_books = nr_books;
	li->book_size = book_size;
	inode->i_blocks = ((u64)nr_books * book_size) >> SECTOR_SHIFT;
}

/*
 * Owner and mode come from the mount (uid=, gid=, mode=; man/lfs.5): the
 * directory has the mode, a file the mode without its execute bits, and
 * without its write bits where this node may only read the shelf. Under
 * the mount's lock, so that a remount's walk over the inodes and an update
 * of one leave the new options. The type is the inode's own: lfs_iget()
 * and lfs_root_inode() set it first.
 */
void lfs_inode_set_perm(struct inode *inode, const struct lfs_fs_info *fsi)
{
	umode_t perm = fsi->mode;
	umode_t type = S_ISDIR(inode->i_mode) ? S_IFDIR : S_IFREG;

	if (type == S_IFREG) {
		perm &= 0666;
		if (!READ_ONCE(LFS_I(inode)->writable))
			perm &= 0444;
	}
	inode->i_uid = fsi->uid;
	inode->i_gid = fsi->gid;
	WRITE_ONCE(inode->i_mode, type | perm);
}

/* lfs_inode_set_perm() under the mount's lock. */
void lfs_inode_perm(struct inode *inode)
{
	struct lfs_fs_info *fsi = lfs_fs(inode->i_sb);

	spin_lock(&fsi->lock);
	lfs_inode_set_perm(inode, fsi);
	spin_unlock(&fsi->lock);
}

/*
 * The server's attributes. The size is taken only while the file is not
 * open here: then this node's map and writes decide it. Under act_lock (or
 * on a new inode).
 */
void lfs_inode_update(struct inode *inode, const struct lfs_up_attrs *at)
{
	struct lfs_inode *li = LFS_I(inode);

	WRITE_ONCE(li->writable, at->writable);
	lfs_inode_perm(inode);
	lfs_inode_set_times(inode, ns_to_timespec64(at->mtime),
			    ns_to_timespec64(at->ctime));
	if (!li->nr_open) {
		i_size_write(inode, at->size);
		lfs_inode_set_books(inode, at->nr_books, at->book_size);
	}
	WRITE_ONCE(li->attr_time, jiffies);
}

/*
 * Ask the server again about the file of @dentry: ESTALE if the name is now
 * another shelf's (the caller's lookup is retried), ENOENT if it is gone.
 */
int lfs_inode_refresh(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_up_args a = { .op = LFS_UP_LOOKUP };
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	int ret;

	lfs_dentry_name(dentry, name);
	a.name = name;
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb));
	if (ret)
		goto out;
	if (uuid_equal(&r.attrs.uuid, &li->uuid)) {
		mutex_lock(&li->act_lock);
		lfs_inode_update(inode, &r.attrs);
		mutex_unlock(&li->act_lock);
	} else {
		ret = -ESTALE;
	}
	lfs_up_result_free(&r);
out:
	if (ret == -ESTALE || ret == -ENOENT)
		dentry->d_time = jiffies - lfs_fs(inode->i_sb)->attr_timeout - 1;
	return ret;
}
