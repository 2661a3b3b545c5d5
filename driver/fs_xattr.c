// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes (docs/NAMESPACE.md): every user.* name of a file (HPE's
 * user.LFS.* names and the shelf's own attributes) or of the directory is
 * the server's; the kernel checks sizes and passes the operation on. One
 * exception: the directory's user.LFS.AllocationPolicyDefault is the
 * mount's policy (policy=), which the server checks when it is set.
 */
#include <linux/ctype.h>
#include <linux/xattr.h>

#include "fs.h"

#define LFS_XATTR_POLICY_DEFAULT "user.LFS.AllocationPolicyDefault"

/* A policy name as the mount keeps it: letters, digits, _ and -. */
bool lfs_policy_valid(const char *s, size_t len)
{
	size_t i;

	if (!len || len > LFS_POLICY_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* What the request is about: a file (its UUID and name) or the directory. */
static void lfs_xattr_subject(struct dentry *dentry, struct inode *inode,
			      struct lfs_up_args *a, char *name)
{
	if (S_ISDIR(inode->i_mode))
		return;
	a->uuid = &LFS_I(inode)->uuid;
	if (dentry) {
		lfs_dentry_name(dentry, name);
		a->name = name;
	}
}

/* getxattr's and listxattr's answer: the size, or the value in @buf. */
static int lfs_xattr_copy(const void *value, u32 len, void *buf, size_t size)
{
	if (!size)
		return len;
	if (len > size)
		return -ERANGE;
	memcpy(buf, value, len);
	return len;
}

/* Ask the server (GETXATTR or LISTXATTR in @a) and answer getxattr's way. */
static int lfs_xattr_ask(struct dentry *dentry, struct inode *inode,
			 struct lfs_up_args *a, void *buf, size_t size)
{
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_result r;
	int ret;

	lfs_xattr_subject(dentry, inode, a, name);
	ret = lfs_upcall(a, &r, lfs_upcall_timeout(inode->i_sb));
	if (ret)
		return ret;
	ret = lfs_xattr_copy(r.value, r.len, buf, size);
	lfs_up_result_free(&r);
	return ret;
}

static int lfs_xattr_get(const struct xattr_handler *h, struct dentry *dentry,
			 struct inode *inode, const char *suffix, void *buf,
			 size_t size)
{
	char xname[XATTR_NAME_MAX + 1], policy[LFS_POLICY_NAME_MAX + 1];
	struct lfs_up_args a = { .op = LFS_UP_GETXATTR, .xname = xname };

	snprintf(xname, sizeof(xname), "%s%s", XATTR_USER_PREFIX, suffix);
	if (S_ISDIR(inode->i_mode) &&
	    !strcmp(xname, LFS_XATTR_POLICY_DEFAULT)) {
		lfs_fs_policy(inode->i_sb, policy);
		if (policy[0])
			return lfs_xattr_copy(policy, strlen(policy), buf, size);
	}
	return lfs_xattr_ask(dentry, inode, &a, buf, size);
}

/* A set (@value, which may be empty) or, with no @value, a removal. */
static int lfs_xattr_set(const struct xattr_handler *h, lfs_idmap_t *idmap,
			 struct dentry *dentry, struct inode *inode,
			 const char *suffix, const void *value, size_t size,
			 int flags)
{
	char xname[XATTR_NAME_MAX + 1], name[LFS_NAME_MAX + 1];
	char policy[LFS_POLICY_NAME_MAX + 1] = "";
	struct lfs_up_args a = { .xname = xname };
	struct lfs_up_result r;
	bool policy_default;
	int ret;

	snprintf(xname, sizeof(xname), "%s%s", XATTR_USER_PREFIX, suffix);
	policy_default = S_ISDIR(inode->i_mode) &&
			 !strcmp(xname, LFS_XATTR_POLICY_DEFAULT);
	if (value && size > LFS_XATTR_VALUE_MAX)
		return -E2BIG;
	if (policy_default && value) {
		if (!lfs_policy_valid(value, size))
			return -EINVAL;
		memcpy(policy, value, size);
		policy[size] = '\0';
	}
	a.op = value ? LFS_UP_SETXATTR : LFS_UP_REMOVEXATTR;
	if (value) {
		a.xvalue = value;
		a.xlen = size;
		a.flags = (flags & XATTR_CREATE ? LFS_UP_F_XATTR_CREATE : 0) |
			  (flags & XATTR_REPLACE ? LFS_UP_F_XATTR_REPLACE : 0);
	}
	lfs_xattr_subject(dentry, inode, &a, name);
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb));
	if (ret)
		return ret;
	lfs_up_result_free(&r);
	if (policy_default)
		lfs_fs_set_policy(inode->i_sb, policy);
	return 0;
}

ssize_t lfs_listxattr(struct dentry *dentry, char *buf, size_t size)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_up_args a = { .op = LFS_UP_LISTXATTR };

	return lfs_xattr_ask(dentry, inode, &a, buf, size);
}

static const struct xattr_handler lfs_xattr_user_handler = {
	.prefix = XATTR_USER_PREFIX,
	.get = lfs_xattr_get,
	.set = lfs_xattr_set,
};

const struct xattr_handler *lfs_xattr_handlers[] = {
	&lfs_xattr_user_handler,
	NULL,
};
