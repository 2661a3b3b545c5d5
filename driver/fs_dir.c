// SPDX-License-Identifier: GPL-2.0
/*
 * The directory of the filesystem (docs/NAMESPACE.md "Namespace"): one flat
 * directory of every shelf this node may see. Lookups, listings, create,
 * unlink and rename are upcalls; dentries (also negative ones) are trusted
 * for the mount's attr_timeout, then asked for again. mkdir, symlink, link
 * and mknod are left out, so the VFS answers them with EPERM.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/slab.h>

#include "fs.h"

/* A name the shelf name rule accepts; longer ones are ENAMETOOLONG. */
int lfs_name_check(const struct qstr *q, char *name)
{
	if (q->len > LFS_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, q->name, q->len);
	name[q->len] = '\0';
	return lfs_name_valid(name) ? 0 : -EINVAL;
}

/*
 * Whether the create that may follow a lookup is O_EXCL, from the lookup's
 * intent: creates are serialised on the directory's lock, under which the
 * lookup or revalidation of an open with O_CREAT runs (lfs_iops_create()).
 */
#define LFS_DENTRY_EXCL ((void *)1)

static void lfs_note_excl(struct dentry *dentry, unsigned int flags)
{
	if ((flags & LOOKUP_CREATE) && !(flags & LOOKUP_RCU))
		dentry->d_fsdata = flags & LOOKUP_EXCL ? LFS_DENTRY_EXCL : NULL;
}

#ifdef LFS_HAVE_CREATE_NO_EXCL
static bool lfs_dentry_excl(struct dentry *dentry)
{
	return dentry->d_fsdata == LFS_DENTRY_EXCL;
}
#endif

static bool lfs_dentry_fresh(struct dentry *dentry)
{
	return time_before(jiffies,
			   READ_ONCE(dentry->d_time) +
				   READ_ONCE(lfs_fs(dentry->d_sb)->attr_timeout));
}

/*
 * A name that breaks the rule names no shelf: it stays a negative dentry
 * (a create then fails with EINVAL). Server errors other than ENOENT fail
 * the lookup.
 */
struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags)
{
	struct lfs_up_args a = { .op = LFS_UP_LOOKUP };
	char name[LFS_NAME_MAX + 1];
	struct inode *inode = NULL;
	struct lfs_up_result r;
	int ret;

	ret = lfs_name_check(&dentry->d_name, name);
	if (ret == -ENAMETOOLONG)
		return ERR_PTR(ret);
	lfs_note_excl(dentry, flags);
	dentry->d_time = jiffies;
	if (!ret) {
		a.name = name;
		ret = lfs_upcall(&a, &r, lfs_upcall_timeout(dir->i_sb));
		if (ret && ret != -ENOENT)
			return ERR_PTR(ret);
		if (!ret) {
			inode = lfs_iget(dir->i_sb, &r.attrs);
			lfs_up_result_free(&r);
		}
	}
	return d_splice_alias(inode, dentry);
}

/*
 * Revalidation after attr_timeout, with a stable copy of the dentry's name
 * (unused in RCU walk): lfs_dops_revalidate().
 */
static int lfs_d_revalidate(struct dentry *dentry, const struct qstr *q,
		     unsigned int flags)
{
	struct lfs_up_args a = { .op = LFS_UP_LOOKUP };
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	struct inode *inode;
	int ret;

	lfs_note_excl(dentry, flags);
	if (IS_ROOT(dentry) ||
	    (!(flags & LOOKUP_REVAL) && lfs_dentry_fresh(dentry)))
		return 1;
	if (flags & LOOKUP_RCU)
		return -ECHILD;
	inode = d_inode(dentry);
	/*
	 * A negative name opened with O_CREAT is not asked about first: the
	 * create asks the server, and a name made elsewhere since gives
	 * EEXIST, then ESTALE, and the VFS walks again with LOOKUP_REVAL
	 * (fs_open.c). As NFS does; touch of a reused name saves a request.
	 */
	if (!inode && !(flags & LOOKUP_REVAL) &&
	    (flags & (LOOKUP_OPEN | LOOKUP_CREATE)) ==
		    (LOOKUP_OPEN | LOOKUP_CREATE))
		return 1;
	if (lfs_name_check(q, name))
		return !inode;
	a.name = name;
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(dentry->d_sb));
	if (ret == -ENOENT && !inode) {
		dentry->d_time = jiffies;
		return 1;
	}
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = 0;
	if (inode && uuid_equal(&r.attrs.uuid, &LFS_I(inode)->uuid)) {
		mutex_lock(&LFS_I(inode)->act_lock);
		lfs_inode_update(inode, &r.attrs);
		mutex_unlock(&LFS_I(inode)->act_lock);
		dentry->d_time = jiffies;
		ret = 1;
	}
	lfs_up_result_free(&r);
	return ret;
}

/* dentry_operations.d_revalidate: from 6.14 it gets the parent and the name. */
#ifdef LFS_HAVE_D_REVALIDATE_NAME
static int lfs_dops_revalidate(struct inode *dir, const struct qstr *name,
			       struct dentry *dentry, unsigned int flags)
{
	return lfs_d_revalidate(dentry, name, flags);
}
#else
static int lfs_dops_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct name_snapshot snap;
	int ret;

	if (flags & LOOKUP_RCU)
		return lfs_d_revalidate(dentry, NULL, flags);
	take_dentry_name_snapshot(&snap, dentry);
	ret = lfs_d_revalidate(dentry, &snap.name, flags);
	release_dentry_name_snapshot(&snap);
	return ret;
}
#endif

/*
 * Ask the server to create @dentry's name, @name (CREATE or CREATE_OPEN in
 * @a), by the mount's policy.
 */
int lfs_up_create(struct inode *dir, struct dentry *dentry,
		  struct lfs_up_args *a, char *name, struct lfs_up_result *r)
{
	char policy[LFS_POLICY_NAME_MAX + 1];
	int ret;

	ret = lfs_name_check(&dentry->d_name, name);
	if (ret)
		return ret;
	a->name = name;
	lfs_fs_policy(dir->i_sb, policy);
	if (policy[0])
		a->policy = policy;
	return lfs_upcall(a, r, lfs_upcall_timeout(dir->i_sb));
}

/* creat, open(O_CREAT), touch: a shelf of no books, by the mount's policy. */
static int lfs_create(struct inode *dir, struct dentry *dentry, bool excl)
{
	struct lfs_up_args a = { .op = LFS_UP_CREATE,
				 .flags = excl ? LFS_UP_F_EXCL : 0 };
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	struct inode *inode;
	int ret;

	ret = lfs_up_create(dir, dentry, &a, name, &r);
	if (ret)
		return ret;
	inode = lfs_iget(dir->i_sb, &r.attrs);
	lfs_up_result_free(&r);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	d_instantiate(dentry, inode);
	dentry->d_time = jiffies;
	return 0;
}

/*
 * inode_operations.create: from 7.0 it is no longer told O_EXCL, which the
 * lookup intent says (lfs_note_excl()).
 */
#ifdef LFS_HAVE_CREATE_NO_EXCL
static int lfs_iops_create(lfs_idmap_t *idmap, struct inode *dir,
			   struct dentry *dentry, umode_t mode)
{
	return lfs_create(dir, dentry, lfs_dentry_excl(dentry));
}
#else
static int lfs_iops_create(lfs_idmap_t *idmap, struct inode *dir,
			   struct dentry *dentry, umode_t mode, bool excl)
{
	return lfs_create(dir, dentry, excl);
}
#endif

/* rm: EBUSY while the file is open here (the server: active anywhere). */
static int lfs_unlink(struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_up_args a = { .op = LFS_UP_DESTROY, .uuid = &li->uuid };
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	int ret;

	ret = mutex_lock_killable(&li->act_lock);
	if (ret)
		return ret;
	if (li->nr_open) {
		ret = -EBUSY;
		goto out_unlock;
	}
	lfs_dentry_name(dentry, name);
	a.name = name;
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(dir->i_sb));
	if (!ret) {
		lfs_up_result_free(&r);
		li->dead = true;
		clear_nlink(inode);
	} else if (ret == -ESTALE || ret == -ENOENT) {
		dentry->d_time = jiffies - lfs_fs(dir->i_sb)->attr_timeout - 1;
	}
out_unlock:
	mutex_unlock(&li->act_lock);
	return ret;
}

/*
 * mv: an existing target is destroyed in the same transaction (EBUSY while
 * it is open here); RENAME_NOREPLACE is honoured, other flags are EINVAL.
 */
static int lfs_rename(lfs_idmap_t *idmap, struct inode *old_dir,
		      struct dentry *old_dentry, struct inode *new_dir,
		      struct dentry *new_dentry, unsigned int flags)
{
	struct lfs_inode *li = LFS_I(d_inode(old_dentry));
	struct inode *target = d_inode(new_dentry);
	char name[LFS_NAME_MAX + 1], new_name[LFS_NAME_MAX + 1];
	struct lfs_up_args a = { .op = LFS_UP_RENAME, .name = name,
				 .uuid = &li->uuid, .new_name = new_name };
	struct lfs_up_result r;
	int ret;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	if (flags & RENAME_NOREPLACE)
		a.flags = LFS_UP_F_NOREPLACE;
	ret = lfs_name_check(&new_dentry->d_name, new_name);
	if (ret)
		return ret;
	lfs_dentry_name(old_dentry, name);
	if (target) {
		ret = mutex_lock_killable(&LFS_I(target)->act_lock);
		if (ret)
			return ret;
		if (LFS_I(target)->nr_open) {
			ret = -EBUSY;
			goto out_unlock;
		}
	}
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(old_dir->i_sb));
	if (ret)
		goto out_unlock;
	lfs_up_result_free(&r);
	lfs_fs_rename_active(li, new_name);
	if (target) {
		LFS_I(target)->dead = true;
		clear_nlink(target);
	}
	new_dentry->d_time = jiffies;
out_unlock:
	if (target)
		mutex_unlock(&LFS_I(target)->act_lock);
	return ret;
}

/* An open directory's listing, fetched at position 2 (rewinddir: again). */
struct lfs_dir_list {
	u32 nr;
	struct lfs_up_entry *entries;
};

static int lfs_dir_fetch(struct file *file)
{
	struct lfs_up_args a = { .op = LFS_UP_LIST };
	struct lfs_dir_list *list = file->private_data;
	struct lfs_up_result r;
	int ret;

	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(file_inode(file)->i_sb));
	if (ret)
		return ret;
	kvfree(list->entries);
	list->entries = r.entries;
	list->nr = r.nr_entries;
	r.entries = NULL;
	lfs_up_result_free(&r);
	return 0;
}

static int lfs_readdir(struct file *file, struct dir_context *ctx)
{
	struct lfs_dir_list *list = file->private_data;
	struct lfs_up_entry *e;
	int ret;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		ret = lfs_dir_fetch(file);
		if (ret)
			return ret;
	}
	for (; ctx->pos - 2 < list->nr; ctx->pos++) {
		e = &list->entries[ctx->pos - 2];
		if (!dir_emit(ctx, e->name, strlen(e->name), e->ino, DT_REG))
			break;
	}
	return 0;
}

static int lfs_dir_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct lfs_dir_list), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

static int lfs_dir_release(struct inode *inode, struct file *file)
{
	struct lfs_dir_list *list = file->private_data;

	kvfree(list->entries);
	kfree(list);
	return 0;
}

const struct inode_operations lfs_dir_iops = {
	.lookup = lfs_lookup,
	.create = lfs_iops_create,
	.atomic_open = lfs_atomic_open,
	.unlink = lfs_unlink,
	.rename = lfs_rename,
	.setattr = lfs_setattr,
	.listxattr = lfs_listxattr,
};

const struct file_operations lfs_dir_fops = {
	.open = lfs_dir_open,
	.release = lfs_dir_release,
	.llseek = generic_file_llseek,
	.read = generic_read_dir,
	.iterate_shared = lfs_readdir,
	.fsync = noop_fsync,
};

const struct dentry_operations lfs_dentry_ops = {
	.d_revalidate = lfs_dops_revalidate,
};
