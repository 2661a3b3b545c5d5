// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes made (iget by the server's inode number and UUID, the root
 * directory) with their operations: the files' (fs_file.c, getattr and
 * setattr here) and the directory's (fs_dir.c). Their state and attributes
 * are fs_inode.c's.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/pagemap.h>

#include "fs.h"

static int lfs_inode_test(struct inode *inode, void *data)
{
	const struct lfs_up_attrs *at = data;

	return uuid_equal(&LFS_I(inode)->uuid, &at->uuid);
}

static int lfs_inode_set(struct inode *inode, void *data)
{
	const struct lfs_up_attrs *at = data;

	uuid_copy(&LFS_I(inode)->uuid, &at->uuid);
	inode->i_ino = at->ino;
	return 0;
}

/* The inode of the shelf @at describes, with @at's attributes. */
struct inode *lfs_iget(struct super_block *sb, const struct lfs_up_attrs *at)
{
	struct inode *inode;
	struct lfs_inode *li;

	inode = iget5_locked(sb, at->ino, lfs_inode_test, lfs_inode_set,
			     (void *)at);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	li = LFS_I(inode);
	if (!lfs_inode_is_new(inode)) {
		mutex_lock(&li->act_lock);
		lfs_inode_update(inode, at);
		mutex_unlock(&li->act_lock);
		return inode;
	}
	/* the slab keeps a freed inode's mode: say what this one is */
	inode->i_mode = S_IFREG;
	inode->i_op = &lfs_file_iops;
	inode->i_fop = &lfs_file_fops;
	inode->i_mapping->a_ops = &lfs_aops;
	inode->i_flags |= S_DAX;
	set_nlink(inode, 1);
	lfs_inode_update(inode, at);
	unlock_new_inode(inode);
	return inode;
}

/*
 * Attributes older than attr_timeout are asked for again. A file open here
 * keeps its attributes if the server no longer finds it by its name.
 */
static int lfs_getattr(lfs_idmap_t *idmap, const struct path *path,
		       struct kstat *stat, u32 request_mask,
		       unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	bool sync = query_flags & AT_STATX_FORCE_SYNC;
	int ret;

	if (!(query_flags & AT_STATX_DONT_SYNC) && !lfs_attrs_fresh(inode))
		sync = true;
	if (sync && inode->i_nlink) {
		ret = lfs_inode_refresh(path->dentry);
		if (ret && !((ret == -ENOENT || ret == -ESTALE) &&
			     READ_ONCE(LFS_I(inode)->nr_open)))
			return ret;
	}
	lfs_fillattr(inode, request_mask, stat);
	stat->blksize = PMD_SIZE;
	return 0;
}

/*
 * Mode and owner are the mount's and the librarian's (EPERM); times may be
 * set, and hold until the attributes are asked for again; the size is a
 * resize.
 */
int lfs_setattr(lfs_idmap_t *idmap, struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	int ret;

	if (attr->ia_valid & (ATTR_MODE | ATTR_UID | ATTR_GID))
		return -EPERM;
	ret = setattr_prepare(lfs_nop_idmap, dentry, attr);
	if (ret)
		return ret;
	if ((attr->ia_valid & ATTR_SIZE) && S_ISREG(inode->i_mode)) {
		ret = lfs_setsize(dentry, attr->ia_size);
		if (ret)
			return ret;
	}
	setattr_copy(lfs_nop_idmap, inode, attr);
	return 0;
}

const struct inode_operations lfs_file_iops = {
	.getattr = lfs_getattr,
	.setattr = lfs_setattr,
	.listxattr = lfs_listxattr,
};

/* The directory: the only one, inode LFS_ROOT_INO. */
struct inode *lfs_root_inode(struct super_block *sb)
{
	struct inode *inode = new_inode(sb);
	struct timespec64 now;

	if (!inode)
		return NULL;
	inode->i_ino = LFS_ROOT_INO;
	inode->i_mode = S_IFDIR;
	lfs_inode_perm(inode);
	inode->i_op = &lfs_dir_iops;
	inode->i_fop = &lfs_dir_fops;
	set_nlink(inode, 2);
	ktime_get_real_ts64(&now);
	lfs_inode_set_times(inode, now, now);
	return inode;
}
