// SPDX-License-Identifier: GPL-2.0
/*
 * The activation of a file of the filesystem on this node (docs/NAMESPACE.md
 * "Many nodes"): an OPEN upcall at the first open (read-only, or shared
 * read-write; a later writable open upgrades it), a CLOSE after the last
 * release, when no descriptor and no mapping is left. Active files are on
 * lfs_fs_active, so that a shelf of the same name cannot be created and a
 * fence or the node's lease can find them; a fence revokes a file: faults
 * get SIGBUS, read and write EIO, until its last release.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/srcu.h>
#include <linux/timekeeping.h>

#include "fs.h"

/*
 * Active files (struct lfs_inode.active): changed under lfs_lock and
 * lfs_fs_active_lock, read under either. A fence walks it under the
 * spinlock alone, so that no long holder of lfs_lock delays it.
 */
static LIST_HEAD(lfs_fs_active);
static DEFINE_SPINLOCK(lfs_fs_active_lock);

/*
 * A chunk of read() or write() between its fence check and its end. The
 * chunk copies with page faults disabled (fs_file.c): a revocation waits
 * for no user page fault.
 */
DEFINE_STATIC_SRCU(lfs_fs_srcu);

int lfs_fs_srcu_lock(void)
{
	return srcu_read_lock(&lfs_fs_srcu);
}

void lfs_fs_srcu_unlock(int idx)
{
	srcu_read_unlock(&lfs_fs_srcu, idx);
}

/* Under lfs_lock. */
bool lfs_fs_name_open(const char *name)
{
	struct lfs_inode *li;

	list_for_each_entry(li, &lfs_fs_active, active)
		if (!strcmp(li->name, name))
			return true;
	return false;
}

/* Under lfs_lock. */
bool lfs_fs_uuid_open(const uuid_t *uuid)
{
	struct lfs_inode *li;

	list_for_each_entry(li, &lfs_fs_active, active)
		if (uuid_equal(&li->uuid, uuid))
			return true;
	return false;
}

/* Under lfs_lock. */
static unsigned int lfs_fs_nr_leased(void)
{
	struct lfs_inode *li;
	unsigned int n = 0;

	list_for_each_entry(li, &lfs_fs_active, active)
		n += READ_ONCE(li->leased);
	return n;
}

unsigned int lfs_fs_nr_active(void)
{
	struct lfs_inode *li;
	unsigned int n = 0;

	mutex_lock(&lfs_lock);
	list_for_each_entry(li, &lfs_fs_active, active)
		n++;
	mutex_unlock(&lfs_lock);
	return n;
}

void lfs_fs_rename_active(struct lfs_inode *li, const char *name)
{
	mutex_lock(&lfs_lock);
	spin_lock(&lfs_fs_active_lock);
	if (!list_empty(&li->active))
		strscpy(li->name, name, sizeof(li->name));
	spin_unlock(&lfs_fs_active_lock);
	mutex_unlock(&lfs_lock);
}

/* Is @name a shelf active on this node (a block device)? Under lfs_lock. */
static int lfs_activate_not_shelf(const char *name)
{
	lockdep_assert_held(&lfs_lock);
	if (lfs_shelf_find(name)) {
		pr_info_ratelimited("'%s' is a shelf active on this node (a block device): not opened through the filesystem\n",
				    name);
		return -EBUSY;
	}
	return 0;
}

/*
 * A first activation: not a shelf here, and a lease if it is leased (its
 * epoch in *@epoch).
 */
static int lfs_activate_check(const char *name, const struct lfs_up_attrs *at,
			      u64 *epoch)
{
	int ret = lfs_activate_not_shelf(name);

	if (ret)
		return ret;
	*epoch = 0;
	return at->leased ? lfs_lease_check(NULL, epoch) : 0;
}

/* Take an OPEN's answer in: the map, the attributes, the active list. */
static int lfs_activate_install(struct inode *inode, const char *name,
				const struct lfs_up_result *r)
{
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_fmap *old = lfs_fmap_get(li), *map;
	bool first = !li->nr_open;
	u64 epoch = 0;
	int ret = 0;

	if (!uuid_equal(&r->attrs.uuid, &li->uuid))
		return -ESTALE;
	if (old && r->attrs.nr_books < old->nr_books)
		return -EIO;
	mutex_lock(&lfs_lock);
	if (first)
		ret = lfs_activate_check(name, &r->attrs, &epoch);
	map = ret ? ERR_PTR(ret) : lfs_fmap_build(r, old);
	if (!ret && IS_ERR(map)) {
		/* it passed upreply.c's check: something changed since */
		pr_warn_ratelimited("file '%s' of the lfs filesystem: its book map cannot be used now (error %ld)\n",
				    name, PTR_ERR(map));
		map = ERR_PTR(-EIO);
	}
	if (!IS_ERR(map) && first) {
		WRITE_ONCE(li->lease_epoch, epoch);
		WRITE_ONCE(li->leased, r->attrs.leased);
		spin_lock(&lfs_fs_active_lock);
		strscpy(li->name, name, sizeof(li->name));
		list_add_tail(&li->active, &lfs_fs_active);
		spin_unlock(&lfs_fs_active_lock);
	}
	mutex_unlock(&lfs_lock);
	if (IS_ERR(map))
		return PTR_ERR(map);
	down_write(&li->map_sem);
	rcu_assign_pointer(li->map, map);
	up_write(&li->map_sem);
	lfs_fmap_release(old, old ? old->nr_books : 0);
	lfs_inode_update(inode, &r->attrs);
	lfs_inode_set_books(inode, map->nr_books, map->book_size);
	if (first) {
		mutex_lock(&li->size_lock);
		li->server_size = r->attrs.size;
		mutex_unlock(&li->size_lock);
	}
	return 0;
}

/*
 * Tell the server the activation is over, with the size if it changed here.
 * Errors change nothing: the books are given back already. A dying process
 * (its waits end at once) only sends it.
 */
static void lfs_up_close(struct inode *inode, const char *name, bool size)
{
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_up_args a = { .op = LFS_UP_CLOSE, .name = name,
				 .uuid = &li->uuid };
	struct lfs_up_result r;

	mutex_lock(&li->size_lock);
	if (size && i_size_read(inode) != li->server_size) {
		a.has_size = true;
		a.size = i_size_read(inode);
	}
	if (fatal_signal_pending(current))
		lfs_upcall_notify(&a);
	else if (!lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb)))
		lfs_up_result_free(&r);
	mutex_unlock(&li->size_lock);
}

/* An OPEN's answer taken in: one more opener. Under act_lock. */
static int lfs_activate_take(struct inode *inode, const char *name,
			     const struct lfs_up_result *r, bool write)
{
	struct lfs_inode *li = LFS_I(inode);
	int ret = lfs_activate_install(inode, name, r);

	if (ret) {
		/* the server activated it: undo that */
		if (!li->nr_open)
			lfs_up_close(inode, name, false);
		return ret;
	}
	li->act_write |= write;
	li->nr_open++;
	return 0;
}

/*
 * One more opener (@write: for writing). The first activates the file on
 * this node, a first writer of a read-only activation upgrades it. Under
 * act_lock.
 */
int lfs_activate(struct inode *inode, struct dentry *dentry, bool write)
{
	struct lfs_inode *li = LFS_I(inode);
	char name[LFS_NAME_MAX + 1];
	struct lfs_up_args a = { .op = LFS_UP_OPEN, .name = name,
				 .uuid = &li->uuid,
				 .flags = write ? LFS_UP_F_WRITE : 0 };
	struct lfs_up_result r;
	int ret;

	lockdep_assert_held(&li->act_lock);
	if (li->dead)
		return -ENOENT;
	if (li->nr_open) {
		if (lfs_file_fenced(li))
			return -EIO;
		if (!write || li->act_write) {
			li->nr_open++;
			return 0;
		}
		a.base = lfs_fmap_get(li);
	}
	lfs_dentry_name(dentry, name);
	/*
	 * A block device here: EBUSY before anything is asked of the server
	 * (its activation is this node's too); checked again on the answer.
	 */
	if (!li->nr_open) {
		mutex_lock(&lfs_lock);
		ret = lfs_activate_not_shelf(name);
		mutex_unlock(&lfs_lock);
		if (ret)
			return ret;
	}
	ret = lfs_upcall(&a, &r, lfs_upcall_timeout(inode->i_sb));
	if (ret)
		return ret;
	ret = lfs_activate_take(inode, name, &r, write);
	lfs_up_result_free(&r);
	return ret;
}

/*
 * The activation a CREATE_OPEN made for a new file (fs_dir.c), taken in as
 * an OPEN's: one opener.
 */
int lfs_activate_given(struct inode *inode, const char *name,
		       const struct lfs_up_result *r, bool write)
{
	struct lfs_inode *li = LFS_I(inode);
	int ret;

	mutex_lock(&li->act_lock);
	ret = lfs_activate_take(inode, name, r, write);
	mutex_unlock(&li->act_lock);
	return ret;
}

/*
 * The end of the activation: no descriptor and no mapping is left, so no
 * read, write or fault can reach the books. Caches are written back, the
 * DAX entries go (after any pinned page is let go), then the books.
 */
static void lfs_deactivate(struct inode *inode, struct dentry *dentry)
{
	struct lfs_inode *li = LFS_I(inode);
	struct address_space *mapping = inode->i_mapping;
	bool fenced = lfs_file_fenced(li);
	char name[LFS_NAME_MAX + 1];
	struct lfs_fmap *map;

	if (!fenced)
		filemap_write_and_wait(mapping);
	filemap_invalidate_lock(mapping);
	lfs_dax_break_layouts(inode);
	truncate_inode_pages(mapping, 0);
	filemap_invalidate_unlock(mapping);

	down_write(&li->map_sem);
	map = lfs_fmap_get(li);
	RCU_INIT_POINTER(li->map, NULL);
	up_write(&li->map_sem);
	mutex_lock(&lfs_lock);
	spin_lock(&lfs_fs_active_lock);
	list_del_init(&li->active);
	spin_unlock(&lfs_fs_active_lock);
	mutex_unlock(&lfs_lock);
	lfs_fmap_release(map, 0);

	lfs_dentry_name(dentry, name);
	lfs_up_close(inode, name, !fenced);
	li->act_write = false;
	WRITE_ONCE(li->leased, false);
	WRITE_ONCE(li->fenced, false);
}

/* One opener less (a release, or the end of a truncate). Under act_lock. */
void lfs_release_activation(struct inode *inode, struct dentry *dentry)
{
	struct lfs_inode *li = LFS_I(inode);

	lockdep_assert_held(&li->act_lock);
	if (!WARN_ON_ONCE(!li->nr_open) && !--li->nr_open)
		lfs_deactivate(inode, dentry);
}

/*
 * The revocation of a file whose fenced flag is set, in two passes: its
 * mappings are unmapped at once, without waiting for anything (a racing
 * fault may map a page again); then, once the chunks of read and write
 * that passed their check have ended (bounded: they take no user page
 * fault), again under the invalidate lock, inside which each fault checks
 * the flag. Without lfs_lock or an invalidate lock held.
 */
static void lfs_file_revoke_wait(struct lfs_inode *li, const char *why)
{
	struct address_space *mapping = li->vfs.i_mapping;

	filemap_invalidate_lock(mapping);
	unmap_mapping_range(mapping, 0, 0, 1);
	filemap_invalidate_unlock(mapping);
	pr_warn("file '%s' of the lfs filesystem revoked (%s): faults get SIGBUS, read and write EIO until it is closed\n",
		li->name, why);
}

/* Revoke one file whose fenced flag is set (fs_file.c). */
void lfs_file_revoke(struct lfs_inode *li, const char *why)
{
	unmap_mapping_range(li->vfs.i_mapping, 0, 0, 1);
	synchronize_srcu(&lfs_fs_srcu);
	lfs_file_revoke_wait(li, why);
}

/*
 * Revoke the files of @victims, each flagged and held by lfs_fs_fence():
 * every mapping is gone before anything is waited for.
 */
static void lfs_files_revoke(struct list_head *victims, const char *why,
			     u64 *unmapped)
{
	struct lfs_inode *li, *next;

	list_for_each_entry(li, victims, fencing)
		unmap_mapping_range(li->vfs.i_mapping, 0, 0, 1);
	if (unmapped)
		*unmapped = ktime_get_boottime_ns();
	if (list_empty(victims))
		return;
	synchronize_srcu(&lfs_fs_srcu);
	list_for_each_entry_safe(li, next, victims, fencing) {
		lfs_file_revoke_wait(li, why);
		list_del_init(&li->fencing);
		iput(&li->vfs);
	}
}

/* Is @li the file to fence: of @uuid, else named @name, else leased? */
static bool lfs_fs_victim(struct lfs_inode *li, const char *name, const uuid_t *uuid)
{
	if (READ_ONCE(li->fenced))
		return false;
	if (uuid)
		return uuid_equal(&li->uuid, uuid);
	if (name)
		return !strcmp(li->name, name);
	return READ_ONCE(li->leased) &&
	       lfs_lease_over(READ_ONCE(li->lease_epoch));
}

/*
 * Fence the active file of @uuid, or the files named @name
 * (LFS_CMD_SHELF_FENCE), or every leased one whose lease ran out if both
 * are NULL. Every flag is set in one pass under lfs_fs_active_lock, then
 * the files are revoked; *@unmapped (if not NULL) is when every mapping
 * was gone, before any wait. Returns how many were fenced now.
 */
unsigned int lfs_fs_fence(const char *name, const uuid_t *uuid, const char *why,
			  u64 *unmapped)
{
	LIST_HEAD(victims);
	struct lfs_inode *li;
	unsigned int n = 0;

	spin_lock(&lfs_fs_active_lock);
	list_for_each_entry(li, &lfs_fs_active, active) {
		if (!lfs_fs_victim(li, name, uuid) || !igrab(&li->vfs))
			continue;
		WRITE_ONCE(li->fenced, true);
		list_add_tail(&li->fencing, &victims);
		n++;
	}
	spin_unlock(&lfs_fs_active_lock);
	lfs_files_revoke(&victims, why, unmapped);
	return n;
}

/* The lease lapsed: revoke the leased files of an epoch that ran out. */
static void lfs_fs_fence_lapsed(const char *why, u64 *refused)
{
	lfs_fs_fence(NULL, NULL, why, refused);
}

static const struct lfs_lease_cover lfs_fs_cover = {
	.nr_leased = lfs_fs_nr_leased,
	.fence = lfs_fs_fence_lapsed,
};

/* The filesystem's files are covered by the lease while it is registered. */
void lfs_fs_lease_cover(bool on)
{
	lfs_lease_cover_set(LFS_COVER_FILES, on ? &lfs_fs_cover : NULL);
}
