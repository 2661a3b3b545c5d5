/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Library File System (mount -t lfs, docs/NAMESPACE.md) and its upcalls
 * to the node's upcall server (uapi/lfs.h): what fs_*.c and upcall.c share.
 */
#ifndef _LFS_FS_H
#define _LFS_FS_H

#include <linux/fs.h>
#include <linux/iomap.h>
#include <linux/rwsem.h>

#include "lfs.h"

/*
 * The mount options (one instance per node); under lock, which also orders
 * the inodes' owner and mode (lfs_inode_set_perm()).
 */
struct lfs_fs_info {
	spinlock_t lock;
	kuid_t uid; /* owner of the directory and every file */
	kgid_t gid;
	umode_t mode; /* the directory's; files' without x, w if writable */
	unsigned long attr_timeout; /* jiffies */
	unsigned long upcall_timeout; /* jiffies, at least one second */
	char policy[LFS_POLICY_NAME_MAX + 1]; /* "": the librarian's default */
};

/*
 * The books of a file open on this node, resolved to fabric devices and
 * held in their owner entries (as lfs_fs_owner). Replaced as a whole (RCU);
 * a replacement only appends books or drops them from the tail.
 */
struct lfs_fmap {
	struct rcu_head rcu;
	u64 book_size;
	unsigned int book_shift;
	u32 nr_books;
	bool sync; /* every fabric device is synchronous DAX (MAP_SYNC) */
	struct dax_device *wb_dax; /* for writeback's cache flushes */
	struct lfs_extent books[];
};

struct lfs_inode {
	struct inode vfs;
	uuid_t uuid;
	/* the server's attributes, as of attr_time (jiffies); under act_lock */
	unsigned long attr_time;
	u64 book_size;
	u32 nr_books;
	bool writable;

	/*
	 * The activation: from the first open to the last release on this
	 * node. act_lock orders after the inode lock and before the
	 * invalidate lock and lfs_lock.
	 */
	struct mutex act_lock;
	unsigned int nr_open;
	bool act_write; /* shared read-write, not read-only */
	bool leased; /* covered by the node's lease (READ_ONCE) */
	u64 lease_epoch; /* the lease's epoch at the activation */
	bool dead; /* destroyed */
	bool fenced; /* revoked until the last release (READ_ONCE) */
	struct list_head fencing; /* in a fence's list (lfs_fs_fence()) */
	struct lfs_fmap __rcu *map;
	/* held for reading while writeback uses the map's fabric devices */
	struct rw_semaphore map_sem;
	/* in lfs_fs_active, changed under lfs_lock and lfs_fs_active_lock */
	struct list_head active;
	char name[LFS_NAME_MAX + 1]; /* for fences by name; as active */

	/*
	 * The size the server knows (lfs.size). size_lock orders the upcalls
	 * that set it (RESIZE, SETSIZE, CLOSE); it is taken last but for
	 * lfs_lock, also from a fault (a MAP_SYNC fault past it syncs it).
	 */
	struct mutex size_lock;
	u64 server_size;
};

static inline struct lfs_inode *LFS_I(struct inode *inode)
{
	return container_of(inode, struct lfs_inode, vfs);
}

/*
 * Lockless: read, write, faults and the iomap ask. A leased file is fenced
 * from the deadline of the lease it was activated under on, whatever comes
 * after (lfs_lease_over()).
 */
static inline bool lfs_file_fenced(struct lfs_inode *li)
{
	return READ_ONCE(li->fenced) ||
	       (READ_ONCE(li->leased) &&
		lfs_lease_over(READ_ONCE(li->lease_epoch)));
}

static inline struct lfs_fs_info *lfs_fs(struct super_block *sb)
{
	return sb->s_fs_info;
}

/* The mount's policy (policy=), also user.LFS.AllocationPolicyDefault. */
static inline void lfs_fs_policy(struct super_block *sb, char *buf)
{
	struct lfs_fs_info *fsi = lfs_fs(sb);

	spin_lock(&fsi->lock);
	strscpy(buf, fsi->policy, LFS_POLICY_NAME_MAX + 1);
	spin_unlock(&fsi->lock);
}

static inline void lfs_fs_set_policy(struct super_block *sb, const char *policy)
{
	struct lfs_fs_info *fsi = lfs_fs(sb);

	spin_lock(&fsi->lock);
	strscpy(fsi->policy, policy, sizeof(fsi->policy));
	spin_unlock(&fsi->lock);
}

#define LFS_ROOT_INO 1

/* upcall.c: one question to the server and its answer. */
struct lfs_up_args {
	u32 op; /* enum lfs_upcall_op */
	u32 flags; /* LFS_UP_F_* */
	const char *name;
	const uuid_t *uuid;
	const char *new_name;
	const char *policy;
	const char *xname;
	const void *xvalue;
	u32 xlen;
	bool has_size;
	u64 size;
	/* OPEN or RESIZE of a file open here: the map the answer must extend */
	const struct lfs_fmap *base;
};

struct lfs_up_attrs {
	uuid_t uuid;
	u64 ino;
	u64 size;
	u64 book_size;
	u64 mtime; /* ns since the epoch */
	u64 ctime;
	u32 nr_books;
	bool writable;
	bool leased;
};

struct lfs_up_entry {
	u64 ino;
	char name[LFS_NAME_MAX + 1];
};

struct lfs_up_result {
	struct lfs_up_attrs attrs;
	struct lfs_book *books; /* attrs.nr_books of them (OPEN, RESIZE) */
	u32 nr_books;
	struct lfs_up_entry *entries; /* LIST */
	u32 nr_entries;
	u32 entries_cap;
	void *value; /* GETXATTR's value, LISTXATTR's names */
	u32 len;
	u64 total, free, files; /* STATFS */
	bool sent; /* the request reached the server's socket */
};

int lfs_upcall(const struct lfs_up_args *a, struct lfs_up_result *r,
	       unsigned long timeout);
int lfs_upcall_notify(const struct lfs_up_args *a);
void lfs_up_result_free(struct lfs_up_result *r);
int lfs_up_reply_take(struct lfs_up_result *r, u32 op,
		      const struct lfs_fmap *base, struct nlattr **a,
		      bool first, bool more, struct netlink_ext_ack *extack);

/* fs_mapcheck.c: the owner of files' books; book maps checked */
extern struct lfs_shelf lfs_fs_owner;
int lfs_fmap_check_book(const struct lfs_book *b, u32 i, u64 book_size,
			const struct lfs_fmap *base, struct lfs_extent *ext,
			struct netlink_ext_ack *extack);
int lfs_fmap_check(const struct lfs_book *books, u32 n, u64 book_size,
		   const struct lfs_fmap *base, struct netlink_ext_ack *extack);

/* fs_map.c: book maps, resolved and held; the iomap */
extern const struct iomap_ops lfs_iomap_ops;
struct lfs_fmap *lfs_fmap_build(const struct lfs_up_result *r,
				const struct lfs_fmap *base);
int lfs_fmap_resize(struct inode *inode, const struct lfs_up_result *r);
void lfs_fmap_release(struct lfs_fmap *map, u32 keep);
struct lfs_fmap *lfs_fmap_get(struct lfs_inode *li);
u64 lfs_fmap_capacity(struct lfs_inode *li);
int lfs_fmap_flush(struct lfs_inode *li);

/* fs_active.c: activations and revocation */
int lfs_activate(struct inode *inode, struct dentry *dentry, bool write);
int lfs_activate_given(struct inode *inode, const char *name,
		       const struct lfs_up_result *r, bool write);
void lfs_release_activation(struct inode *inode, struct dentry *dentry);
void lfs_file_revoke(struct lfs_inode *li, const char *why);
void lfs_fs_lease_cover(bool on);
void lfs_fs_rename_active(struct lfs_inode *li, const char *name);
int lfs_fs_srcu_lock(void);
void lfs_fs_srcu_unlock(int idx);

/* fs_inode.c: inodes and their attributes */
void lfs_inode_update(struct inode *inode, const struct lfs_up_attrs *at);
void lfs_inode_set_books(struct inode *inode, u32 nr_books, u64 book_size);
void lfs_inode_set_perm(struct inode *inode, const struct lfs_fs_info *fsi);
void lfs_inode_perm(struct inode *inode);
bool lfs_attrs_fresh(struct inode *inode);
int lfs_inode_refresh(struct dentry *dentry);
void lfs_dentry_name(struct dentry *dentry, char *buf);
unsigned long lfs_upcall_timeout(struct super_block *sb);
struct inode *lfs_alloc_inode(struct super_block *sb);
void lfs_free_inode(struct inode *inode);
void lfs_evict_inode(struct inode *inode);
int lfs_inode_cache_init(void);
void lfs_inode_cache_exit(void);

/* fs_iget.c: inodes made, with their operations */
struct inode *lfs_iget(struct super_block *sb, const struct lfs_up_attrs *at);
struct inode *lfs_root_inode(struct super_block *sb);
int lfs_setattr(lfs_idmap_t *idmap, struct dentry *dentry, struct iattr *attr);
extern const struct inode_operations lfs_file_iops;

/* fs_xattr.c: extended attributes, all asked of the server */
bool lfs_policy_valid(const char *s, size_t len);
extern const struct xattr_handler *lfs_xattr_handlers[];
ssize_t lfs_listxattr(struct dentry *dentry, char *buf, size_t size);

/* fs_file.c: data and the file's size */
extern const struct file_operations lfs_file_fops;
extern const struct address_space_operations lfs_aops;
int lfs_setsize(struct dentry *dentry, loff_t size);
int lfs_sync_size(struct inode *inode, struct dentry *dentry);
int lfs_file_open_given(struct inode *inode, struct file *file);

/* fs_dir.c: the directory */
int lfs_name_check(const struct qstr *q, char *name);
int lfs_up_create(struct inode *dir, struct dentry *dentry,
		  struct lfs_up_args *a, char *name, struct lfs_up_result *r);
struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags);

/* fs_open.c: open of a name not in the dcache, create and open in one */
int lfs_atomic_open(struct inode *dir, struct dentry *dentry,
		    struct file *file, unsigned int flags, umode_t mode);
extern const struct inode_operations lfs_dir_iops;
extern const struct file_operations lfs_dir_fops;
extern const struct dentry_operations lfs_dentry_ops;

#endif /* _LFS_FS_H */
