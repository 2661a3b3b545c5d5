// SPDX-License-Identifier: GPL-2.0
/*
 * open(2) of a name the dcache holds no file for (docs/NAMESPACE.md
 * "Upcalls"), as NFS and ceph do it: with O_CREAT, one CREATE_OPEN makes
 * the shelf and activates it on this node where LOOKUP, CREATE and OPEN
 * took three, so touch costs the librarian two requests, not five. A name
 * that exists is looked up and opened as any open is.
 */
#include <linux/fs.h>
#include <linux/namei.h>

#include "fs.h"

/* Put the new file's inode in @dentry; a dentry in lookup is hashed now. */
static struct dentry *lfs_open_instantiate(struct dentry *dentry,
					   struct inode *inode)
{
	struct dentry *res;

	dentry->d_time = jiffies;
	if (!d_in_lookup(dentry)) {
		d_instantiate(dentry, inode);
		return NULL;
	}
	res = d_splice_alias(inode, dentry);
	if (!IS_ERR_OR_NULL(res))
		res->d_time = jiffies;
	return res;
}

/* Give back an activation that no file took (under no lock). */
static void lfs_open_undo(struct inode *inode, struct dentry *dentry)
{
	struct lfs_inode *li = LFS_I(inode);

	mutex_lock(&li->act_lock);
	lfs_release_activation(inode, dentry);
	mutex_unlock(&li->act_lock);
}

/* The CREATE_OPEN's answer: an inode holding the activation, or an error. */
static struct inode *lfs_open_take(struct super_block *sb, const char *name,
				   const struct lfs_up_result *r, bool write)
{
	struct lfs_up_args a = { .op = LFS_UP_CLOSE, .name = name,
				 .uuid = &r->attrs.uuid };
	struct lfs_up_result rc;
	struct inode *inode;
	int ret;

	inode = lfs_iget(sb, &r->attrs);
	if (IS_ERR(inode)) {
		/* the server activated it: end that */
		if (!lfs_upcall(&a, &rc, lfs_upcall_timeout(sb)))
			lfs_up_result_free(&rc);
		return inode;
	}
	ret = lfs_activate_given(inode, name, r, write);
	if (ret) {
		iput(inode);
		return ERR_PTR(ret);
	}
	return inode;
}

/* Create and open: 0 (opened), EEXIST, ... */
static int lfs_create_open(struct inode *dir, struct dentry *dentry,
			   struct file *file, unsigned int flags)
{
	bool write = (flags & O_ACCMODE) != O_RDONLY;
	struct lfs_up_args a = { .op = LFS_UP_CREATE_OPEN,
				 .flags = write ? LFS_UP_F_WRITE : 0 };
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	struct dentry *res;
	struct inode *inode;
	int ret;

	ret = lfs_up_create(dir, dentry, &a, name, &r);
	if (ret)
		return ret;
	inode = lfs_open_take(dir->i_sb, name, &r, write);
	lfs_up_result_free(&r);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	ihold(inode);
	res = lfs_open_instantiate(dentry, inode);
	if (IS_ERR(res)) {
		lfs_open_undo(inode, dentry);
		iput(inode);
		return PTR_ERR(res);
	}
	file->f_mode |= FMODE_CREATED;
	ret = finish_open(file, res ?: dentry, lfs_file_open_given);
	/* not opened: no release will come */
	if (ret && !(file->f_mode & FMODE_OPENED))
		lfs_open_undo(inode, res ?: dentry);
	iput(inode);
	dput(res);
	return ret;
}

/*
 * inode_operations.atomic_open: @dentry is negative (in lookup, or a
 * negative dentry: fresh, or not revalidated for O_CREAT) and O_CREAT may
 * be set. Without O_CREAT, or for a name that exists, the lookup the VFS
 * would have made; the VFS then opens the file (lfs_file_open). EEXIST on a negative dentry (made
 * on another node since; lfs_d_revalidate() does not ask about negative
 * names opened with O_CREAT): ESTALE, and the VFS walks again, asking.
 */
int lfs_atomic_open(struct inode *dir, struct dentry *dentry,
		    struct file *file, unsigned int flags, umode_t mode)
{
	struct dentry *res = NULL;
	int ret;

	if (flags & O_CREAT) {
		ret = lfs_create_open(dir, dentry, file, flags);
		if (ret != -EEXIST || (flags & O_EXCL))
			return ret;
		if (!d_in_lookup(dentry))
			return -ESTALE;
	}
	if (d_in_lookup(dentry)) {
		res = lfs_lookup(dir, dentry, 0);
		if (IS_ERR(res))
			return PTR_ERR(res);
		/* EEXIST, then gone (destroyed elsewhere): walk again */
		if ((flags & O_CREAT) && d_really_is_negative(res ?: dentry)) {
			dput(res);
			return -ESTALE;
		}
	}
	return finish_no_open(file, res);
}
