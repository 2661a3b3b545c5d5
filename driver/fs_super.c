// SPDX-License-Identifier: GPL-2.0
/*
 * The filesystem type "lfs" (man/lfs.5; the source of a mount is any name):
 * one instance per node (every mount shows the same catalogue), its mount
 * options, the superblock and statfs. Mounting asks nothing of the server,
 * so a mount at boot does not wait for the node agent. By default only the
 * mounter (root) may look at the shelves: every local user would otherwise
 * read what the librarian grants this node, and by holding a file open
 * keep other nodes from writing, resizing or destroying it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/backing-dev.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>

#include "fs.h"

#define LFS_ATTR_TIMEOUT_DEFAULT 1 /* seconds */
#define LFS_UPCALL_TIMEOUT_DEFAULT 30
#define LFS_TIMEOUT_MAX 3600
#define LFS_MODE_DEFAULT 0700
#define LFS_MODE_MAX 07777

enum { Opt_attr_timeout, Opt_upcall_timeout, Opt_policy, Opt_uid, Opt_gid, Opt_mode };

/* uid, gid and mode are parsed here, so that an error names the value */
static const struct fs_parameter_spec lfs_fs_parameters[] = {
	fsparam_u32("attr_timeout", Opt_attr_timeout),
	fsparam_u32("upcall_timeout", Opt_upcall_timeout),
	fsparam_string("policy", Opt_policy),
	fsparam_string("uid", Opt_uid),
	fsparam_string("gid", Opt_gid),
	fsparam_string("mode", Opt_mode),
	{}
};

/* The options a mount or remount asks for; seconds. */
struct lfs_fs_opts {
	unsigned int attr_timeout;
	unsigned int upcall_timeout;
	bool policy_set;
	char policy[LFS_POLICY_NAME_MAX + 1];
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
};

/* A user or group id, mapped through the mounter's user namespace. */
static int lfs_parse_id(struct fs_context *fc, struct fs_parameter *param,
			kuid_t *uid, kgid_t *gid)
{
	unsigned int id;

	if (kstrtouint(param->string, 10, &id))
		return invalfc(fc, "%s '%s' is not a decimal number", param->key,
			       param->string);
	if (uid)
		*uid = make_kuid(fc->user_ns, id);
	else
		*gid = make_kgid(fc->user_ns, id);
	if (uid ? !uid_valid(*uid) : !gid_valid(*gid))
		return invalfc(fc, "%s '%s' has no mapping in the mounter's user namespace",
			       param->key, param->string);
	return 0;
}

static int lfs_parse_mode(struct fs_context *fc, struct fs_parameter *param,
			  umode_t *mode)
{
	unsigned int m;

	if (kstrtouint(param->string, 8, &m))
		return invalfc(fc, "mode '%s' is not an octal number", param->string);
	if (m > LFS_MODE_MAX)
		return invalfc(fc, "mode '%s' is over 0%o", param->string, LFS_MODE_MAX);
	*mode = m;
	return 0;
}

static int lfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct lfs_fs_opts *o = fc->fs_private;
	struct fs_parse_result result;
	int opt = fs_parse(fc, lfs_fs_parameters, param, &result);

	if (opt < 0)
		return opt;
	switch (opt) {
	case Opt_attr_timeout:
		if (result.uint_32 > LFS_TIMEOUT_MAX)
			return invalfc(fc, "attr_timeout %u is over %u seconds",
				       result.uint_32, LFS_TIMEOUT_MAX);
		o->attr_timeout = result.uint_32;
		break;
	case Opt_upcall_timeout:
		if (!result.uint_32 || result.uint_32 > LFS_TIMEOUT_MAX)
			return invalfc(fc, "upcall_timeout %u is not 1 to %u seconds",
				       result.uint_32, LFS_TIMEOUT_MAX);
		o->upcall_timeout = result.uint_32;
		break;
	case Opt_policy:
		if (!lfs_policy_valid(param->string, strlen(param->string)))
			return invalfc(fc, "policy '%s' is not 1 to %d letters, digits, _ or -",
				       param->string, LFS_POLICY_NAME_MAX);
		strscpy(o->policy, param->string, sizeof(o->policy));
		o->policy_set = true;
		break;
	case Opt_uid:
		return lfs_parse_id(fc, param, &o->uid, NULL);
	case Opt_gid:
		return lfs_parse_id(fc, param, NULL, &o->gid);
	case Opt_mode:
		return lfs_parse_mode(fc, param, &o->mode);
	}
	return 0;
}

/* The options, and the owner and mode of every inode in the cache. */
static void lfs_fs_apply(struct super_block *sb, const struct lfs_fs_opts *o)
{
	struct lfs_fs_info *fsi = lfs_fs(sb);
	struct inode *inode;

	spin_lock(&sb->s_inode_list_lock);
	spin_lock(&fsi->lock);
	WRITE_ONCE(fsi->attr_timeout, (unsigned long)o->attr_timeout * HZ);
	WRITE_ONCE(fsi->upcall_timeout, (unsigned long)o->upcall_timeout * HZ);
	if (o->policy_set)
		strscpy(fsi->policy, o->policy, sizeof(fsi->policy));
	fsi->uid = o->uid;
	fsi->gid = o->gid;
	fsi->mode = o->mode;
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list)
		lfs_inode_set_perm(inode, fsi);
	spin_unlock(&fsi->lock);
	spin_unlock(&sb->s_inode_list_lock);
}

static int lfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct lfs_up_args a = { .op = LFS_UP_STATFS };
	struct lfs_up_result r;
	int ret;

	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(dentry->d_sb));
	if (ret)
		return ret;
	buf->f_type = LFS_FS_MAGIC;
	buf->f_bsize = PAGE_SIZE;
	buf->f_frsize = PAGE_SIZE;
	buf->f_blocks = r.total >> PAGE_SHIFT;
	buf->f_bfree = r.free >> PAGE_SHIFT;
	buf->f_bavail = buf->f_bfree;
	buf->f_files = r.files;
	buf->f_ffree = 0;
	buf->f_namelen = LFS_NAME_MAX;
	lfs_up_result_free(&r);
	return 0;
}

static int lfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct lfs_fs_info *fsi = lfs_fs(root->d_sb);
	char policy[LFS_POLICY_NAME_MAX + 1];
	umode_t mode;
	kuid_t uid;
	kgid_t gid;

	spin_lock(&fsi->lock);
	mode = fsi->mode;
	uid = fsi->uid;
	gid = fsi->gid;
	spin_unlock(&fsi->lock);
	seq_printf(m, ",mode=%04o,uid=%u,gid=%u", mode,
		   from_kuid_munged(seq_user_ns(m), uid),
		   from_kgid_munged(seq_user_ns(m), gid));
	seq_printf(m, ",attr_timeout=%lu,upcall_timeout=%lu",
		   READ_ONCE(fsi->attr_timeout) / HZ,
		   READ_ONCE(fsi->upcall_timeout) / HZ);
	lfs_fs_policy(root->d_sb, policy);
	if (policy[0])
		seq_printf(m, ",policy=%s", policy);
	return 0;
}

static const struct super_operations lfs_super_ops = {
	.alloc_inode = lfs_alloc_inode,
	.free_inode = lfs_free_inode,
	.evict_inode = lfs_evict_inode,
	.statfs = lfs_statfs,
	.show_options = lfs_show_options,
};

static int lfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct lfs_fs_info *fsi;
	struct inode *root;
	int ret;

	fsi = kzalloc(sizeof(*fsi), GFP_KERNEL);
	if (!fsi)
		return -ENOMEM;
	spin_lock_init(&fsi->lock);
	sb->s_fs_info = fsi;
	lfs_fs_apply(sb, fc->fs_private);
	sb->s_magic = LFS_FS_MAGIC;
	sb->s_op = &lfs_super_ops;
	sb->s_xattr = lfs_xattr_handlers;
	lfs_sb_set_d_op(sb, &lfs_dentry_ops);
	/* DAX writeback needs blocks of a page */
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_time_gran = 1;
	/* without a bdi, msync and fsync would write nothing back */
	ret = super_setup_bdi(sb);
	if (ret)
		return ret;
	root = lfs_root_inode(sb);
	if (!root)
		return -ENOMEM;
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

static int lfs_get_tree(struct fs_context *fc)
{
	struct lfs_fs_opts *o = fc->fs_private;
	struct lfs_fs_info *fsi;
	bool same;
	int ret;

	ret = get_tree_single(fc, lfs_fill_super);
	if (ret)
		return ret;
	/* a second mount shows the instance, whatever it asked for */
	fsi = lfs_fs(fc->root->d_sb);
	spin_lock(&fsi->lock);
	same = uid_eq(fsi->uid, o->uid) && gid_eq(fsi->gid, o->gid) &&
	       fsi->mode == o->mode;
	spin_unlock(&fsi->lock);
	if (!same)
		warnfc(fc, "already mounted: uid=, gid= and mode= are the instance's; change them with a remount");
	return 0;
}

/* remount: new options for the one instance, and its inodes. */
static int lfs_reconfigure(struct fs_context *fc)
{
	lfs_fs_apply(fc->root->d_sb, fc->fs_private);
	return 0;
}

static void lfs_free_fc(struct fs_context *fc)
{
	kfree(fc->fs_private);
}

static const struct fs_context_operations lfs_context_ops = {
	.parse_param = lfs_parse_param,
	.get_tree = lfs_get_tree,
	.reconfigure = lfs_reconfigure,
	.free = lfs_free_fc,
};

static int lfs_init_fs_context(struct fs_context *fc)
{
	struct lfs_fs_opts *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return -ENOMEM;
	o->attr_timeout = LFS_ATTR_TIMEOUT_DEFAULT;
	o->upcall_timeout = LFS_UPCALL_TIMEOUT_DEFAULT;
	/* the mounter's, as tmpfs */
	o->uid = current_fsuid();
	o->gid = current_fsgid();
	o->mode = LFS_MODE_DEFAULT;
	if (fc->root) {
		/* a remount starts from what the mount has */
		struct lfs_fs_info *fsi = lfs_fs(fc->root->d_sb);

		o->attr_timeout = READ_ONCE(fsi->attr_timeout) / HZ;
		o->upcall_timeout = READ_ONCE(fsi->upcall_timeout) / HZ;
		spin_lock(&fsi->lock);
		o->uid = fsi->uid;
		o->gid = fsi->gid;
		o->mode = fsi->mode;
		spin_unlock(&fsi->lock);
	}
	fc->fs_private = o;
	fc->ops = &lfs_context_ops;
	return 0;
}

static void lfs_kill_sb(struct super_block *sb)
{
	kill_anon_super(sb);
	kfree(sb->s_fs_info);
}

static struct file_system_type lfs_fs_type = {
	.owner = THIS_MODULE,
	.name = "lfs",
	.init_fs_context = lfs_init_fs_context,
	.parameters = lfs_fs_parameters,
	.kill_sb = lfs_kill_sb,
};
MODULE_ALIAS_FS("lfs");

int __init lfs_fs_init(void)
{
	int ret = lfs_inode_cache_init();

	if (ret)
		return ret;
	ret = register_filesystem(&lfs_fs_type);
	if (ret) {
		lfs_inode_cache_exit();
		return ret;
	}
	lfs_fs_lease_cover(true);
	return 0;
}

void lfs_fs_exit(void)
{
	lfs_fs_lease_cover(false);
	unregister_filesystem(&lfs_fs_type);
	lfs_inode_cache_exit();
}
