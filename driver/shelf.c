// SPDX-License-Identifier: GPL-2.0
/*
 * Shelves: ordered lists of books presented as DAX-capable block devices.
 * This file holds their lifetime (create, shrink, remove and the reaper that
 * deletes a removed shelf's disk) and the staging of a create or extend that
 * arrives in several messages. The block device is disk.c's, the DAX device
 * dax.c's, the attributes sysfs.c's, book ownership reserve.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "lfs.h"

LIST_HEAD(lfs_shelves);
DEFINE_IDR(lfs_shelf_ids);

static struct workqueue_struct *lfs_reaper;

/* Has a block device, and is not being removed. Under lfs_lock. */
bool lfs_shelf_live(const struct lfs_shelf *shelf)
{
	return shelf->disk && !shelf->dying;
}

struct lfs_shelf *lfs_shelf_find(const char *name)
{
	struct lfs_shelf *shelf;

	list_for_each_entry(shelf, &lfs_shelves, node)
		if (!strcmp(shelf->name, name))
			return shelf;
	return NULL;
}

static unsigned int lfs_shelf_count(void)
{
	struct lfs_shelf *shelf;
	unsigned int n = 0;

	list_for_each_entry(shelf, &lfs_shelves, node)
		n++;
	return n;
}

unsigned int lfs_shelf_openers(struct lfs_shelf *shelf)
{
	unsigned int n;

	mutex_lock(&shelf->open_lock);
	n = shelf->open_count;
	mutex_unlock(&shelf->open_lock);
	return n;
}

static struct lfs_map *lfs_shelf_map(struct lfs_shelf *shelf)
{
	return rcu_dereference_protected(shelf->map,
					 lockdep_is_held(&lfs_lock));
}

struct lfs_map *lfs_map_alloc(u32 nr_books)
{
	struct lfs_map *map =
		kvzalloc(struct_size(map, books, nr_books), GFP_KERNEL);

	if (map)
		map->nr_books = nr_books;
	return map;
}

/* Shelf lifetime */

/* The shelf name rule of uapi/lfs.h, as userspace's common/names.c applies it. */
bool lfs_name_valid(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len > LFS_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '.' && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

static struct lfs_shelf *lfs_shelf_new(const char *name, const uuid_t *uuid,
				       struct netlink_ext_ack *extack)
{
	struct lfs_shelf *shelf;

	if (!lfs_name_valid(name)) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"shelf name '%*pE' is not 1-%d characters of A-Z a-z 0-9 . _ - not starting with . or -",
			(int)min_t(size_t, strlen(name), LFS_NAME_MAX), name,
			LFS_NAME_MAX);
		return ERR_PTR(-EINVAL);
	}
	if (uuid && uuid_is_null(uuid)) {
		NL_SET_ERR_MSG(extack, "the null UUID is not a shelf UUID");
		return ERR_PTR(-EINVAL);
	}
	if (lfs_shelf_count() >= LFS_SHELVES_MAX) {
		NL_SET_ERR_MSG_FMT(extack,
				   "%u shelves exist already, the maximum",
				   LFS_SHELVES_MAX);
		return ERR_PTR(-ENFILE);
	}
	if (!try_module_get(THIS_MODULE)) {
		NL_SET_ERR_MSG(extack, "the lfs module is being unloaded");
		return ERR_PTR(-ENODEV);
	}
	shelf = kzalloc(sizeof(*shelf), GFP_KERNEL);
	if (!shelf) {
		module_put(THIS_MODULE);
		return ERR_PTR(-ENOMEM);
	}
	shelf->id = -1;
	strscpy(shelf->name, name, sizeof(shelf->name));
	if (uuid)
		uuid_copy(&shelf->uuid, uuid);
	else
		uuid_gen(&shelf->uuid);
	mutex_init(&shelf->open_lock);
	list_add_tail(&shelf->node, &lfs_shelves);
	return shelf;
}

static void lfs_shelf_release(struct lfs_shelf *shelf)
{
	kvfree(rcu_dereference_protected(shelf->map, true));
	kvfree(shelf->staged);
	mutex_destroy(&shelf->open_lock);
	kfree(shelf);
}

static void lfs_shelf_free(struct lfs_shelf *shelf)
{
	list_del(&shelf->node);
	if (shelf->id >= 0)
		idr_remove(&lfs_shelf_ids, shelf->id);
	lfs_shelf_release(shelf);
	module_put(THIS_MODULE);
}

/* The second half of lfs_shelf_remove(), on lfs_reaper. */
static void lfs_shelf_reap(struct work_struct *work)
{
	struct lfs_shelf *shelf = container_of(work, struct lfs_shelf, reap);

	lfs_disk_delete(shelf);
	mutex_lock(&lfs_lock);
	idr_remove(&lfs_shelf_ids, shelf->id);
	mutex_unlock(&lfs_lock);
	lfs_shelf_release(shelf);
}

/* Shelves with a multi-message operation under way; read without lfs_lock. */
static atomic_t lfs_nr_staging = ATOMIC_INIT(0);

static void lfs_staging_start(struct lfs_shelf *shelf, u8 cmd, u32 portid)
{
	if (!shelf->staged_cmd)
		atomic_inc(&lfs_nr_staging);
	shelf->staged_cmd = cmd;
	shelf->staged_portid = portid;
}

static void lfs_staging_clear(struct lfs_shelf *shelf)
{
	kvfree(shelf->staged);
	shelf->staged = NULL;
	shelf->nr_staged = 0;
	shelf->staged_cap = 0;
	if (shelf->staged_cmd)
		atomic_dec(&lfs_nr_staging);
	shelf->staged_cmd = 0;
}

static void lfs_staging_abort(struct lfs_shelf *shelf)
{
	u8 cmd = shelf->staged_cmd;

	lfs_books_unreserve(shelf->staged, shelf->nr_staged);
	lfs_staging_clear(shelf);
	if (cmd == LFS_CMD_SHELF_CREATE)
		lfs_shelf_free(shelf);
	lfs_generation++;
}

void lfs_shelf_release_staging(u32 portid)
{
	struct lfs_shelf *shelf, *next;

	if (!atomic_read(&lfs_nr_staging))
		return;
	mutex_lock(&lfs_lock);
	list_for_each_entry_safe(shelf, next, &lfs_shelves, node)
		if (shelf->staged_cmd && shelf->staged_portid == portid)
			lfs_staging_abort(shelf);
	mutex_unlock(&lfs_lock);
}

static int lfs_staging_grow(struct lfs_shelf *shelf, u32 n,
			    struct netlink_ext_ack *extack)
{
	u32 have = lfs_shelf_live(shelf) ? lfs_shelf_map(shelf)->nr_books : 0;
	u32 want = shelf->nr_staged + n;
	struct lfs_extent *staged;

	if (have + want > LFS_SHELF_BOOKS_MAX) {
		NL_SET_ERR_MSG_FMT(extack,
				   "shelf '%s' would have more than %u books",
				   shelf->name, LFS_SHELF_BOOKS_MAX);
		return -E2BIG;
	}
	if (want <= shelf->staged_cap)
		return 0;
	want = max(want, 2 * shelf->staged_cap);
	/* not kvrealloc(): its arguments differ between kernels */
	staged = kvmalloc_array(want, sizeof(*staged), GFP_KERNEL);
	if (!staged)
		return -ENOMEM;
	if (shelf->nr_staged)
		memcpy(staged, shelf->staged,
		       shelf->nr_staged * sizeof(*staged));
	kvfree(shelf->staged);
	shelf->staged = staged;
	shelf->staged_cap = want;
	return 0;
}

static int lfs_shelf_commit_create(struct lfs_shelf *shelf,
				   struct netlink_ext_ack *extack)
{
	struct lfs_map *map;
	int id, ret;

	map = lfs_map_alloc(shelf->nr_staged);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, shelf->staged,
	       shelf->nr_staged * sizeof(*map->books));

	id = idr_alloc(&lfs_shelf_ids, shelf, 0, LFS_SHELVES_MAX, GFP_KERNEL);
	if (id < 0) {
		NL_SET_ERR_MSG(extack, "no free lfs device number");
		kvfree(map);
		return id == -ENOSPC ? -ENFILE : id;
	}
	shelf->id = id;
	lfs_flush_rebuild(shelf, map);
	rcu_assign_pointer(shelf->map, map);

	ret = lfs_disk_create(shelf, map->nr_books, extack);
	if (ret) {
		idr_remove(&lfs_shelf_ids, id);
		shelf->id = -1;
		RCU_INIT_POINTER(shelf->map, NULL);
		kvfree(map);
		return ret;
	}
	lfs_staging_clear(shelf);
	shelf->created = ktime_get_boottime_ns();
	pr_info("%s: shelf '%s' with %u books of %llu bytes%s%s\n",
		shelf->disk->disk_name, shelf->name, map->nr_books,
		shelf->book_size, shelf->dax_dev ? ", dax" : "",
		shelf->leased ? ", leased" : "");
	return 0;
}

/*
 * Extending while the disk is open: the new map is a superset of the old
 * one, so a bio or DAX fault that looked up the old map still lands on the
 * same book. New fabric devices join the flush set before any book of theirs
 * becomes reachable.
 */
static int lfs_shelf_commit_extend(struct lfs_shelf *shelf)
{
	struct lfs_map *old = lfs_shelf_map(shelf), *map;
	u32 i;

	/* the new books' content is unknown; cleared before the change uevent */
	WRITE_ONCE(shelf->zeroed, false);
	map = lfs_map_alloc(old->nr_books + shelf->nr_staged);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, old->books, old->nr_books * sizeof(*map->books));
	memcpy(map->books + old->nr_books, shelf->staged,
	       shelf->nr_staged * sizeof(*map->books));

	for (i = 0; i < shelf->nr_staged; i++) {
		struct lfs_fabric *fabric = shelf->staged[i].fabric;

		if (!lfs_flush_has(shelf, fabric)) {
			lfs_disk_stack_fabric(shelf, fabric);
			lfs_flush_add(shelf, fabric);
		}
	}
	rcu_assign_pointer(shelf->map, map);
	set_capacity_and_notify(shelf->disk,
				lfs_map_sectors(shelf, map->nr_books));

	lfs_staging_clear(shelf);
	synchronize_rcu();
	kvfree(old);
	return 0;
}

static struct lfs_shelf *lfs_shelf_stage_target(u8 cmd, const char *name,
						const uuid_t *uuid, u32 portid,
						struct netlink_ext_ack *extack)
{
	struct lfs_shelf *shelf = lfs_shelf_find(name);

	if (shelf && shelf->staged_cmd && shelf->staged_portid != portid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "shelf '%s' is being %s by another request",
				   name,
				   shelf->staged_cmd == LFS_CMD_SHELF_CREATE ?
					   "created" :
					   "extended");
		return ERR_PTR(-EBUSY);
	}
	if (cmd == LFS_CMD_SHELF_CREATE) {
		if (!shelf)
			return lfs_shelf_new(name, uuid, extack);
		if (shelf->staged_cmd != LFS_CMD_SHELF_CREATE) {
			NL_SET_ERR_MSG_FMT(extack, "shelf '%s' exists", name);
			return ERR_PTR(-EEXIST);
		}
		if (uuid) {
			NL_SET_ERR_MSG(
				extack,
				"the UUID belongs in the first message only");
			return ERR_PTR(-EINVAL);
		}
		return shelf;
	}
	if (!shelf || shelf->staged_cmd == LFS_CMD_SHELF_CREATE) {
		NL_SET_ERR_MSG_FMT(extack, "no shelf '%s'", name);
		return ERR_PTR(-ENOENT);
	}
	if (lfs_shelf_fenced(shelf))
		return ERR_PTR(lfs_shelf_fenced_error(shelf, extack));
	return shelf;
}

/* What a fenced shelf answers to everything but its removal. */
int lfs_shelf_fenced_error(struct lfs_shelf *shelf,
			   struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG_FMT(extack, "shelf '%s' is fenced; it can only be removed",
			   shelf->name);
	return -EIO;
}

/* The first message of a create: a leased shelf needs a valid lease. */
static int lfs_shelf_stage_first(struct lfs_shelf *shelf, unsigned int flags,
				 struct netlink_ext_ack *extack)
{
	int ret;

	if (flags & LFS_STAGE_LEASED) {
		ret = lfs_lease_check(extack, &shelf->lease_epoch);
		if (ret)
			return ret;
		shelf->leased = true;
	}
	shelf->zeroed = flags & LFS_STAGE_ZEROED;
	return 0;
}

/*
 * One message of a create or extend: reserve its books, and on the last
 * message make them visible. An error abandons the whole operation,
 * including books staged by earlier messages.
 */
int lfs_shelf_stage(u8 cmd, const char *name, const uuid_t *uuid,
		    const struct lfs_book *books, u32 n, bool more,
		    unsigned int flags, u32 portid,
		    struct netlink_ext_ack *extack, struct lfs_shelf **out)
{
	struct lfs_shelf *shelf;
	int ret;

	shelf = lfs_shelf_stage_target(cmd, name, uuid, portid, extack);
	if (IS_ERR(shelf))
		return PTR_ERR(shelf);
	if (cmd == LFS_CMD_SHELF_CREATE && !shelf->staged_cmd) {
		ret = lfs_shelf_stage_first(shelf, flags, extack);
		if (ret) {
			lfs_shelf_free(shelf);
			return ret;
		}
	} else if (cmd == LFS_CMD_SHELF_CREATE && !(flags & LFS_STAGE_ZEROED)) {
		/* zeroed holds only if every message of the create says so */
		shelf->zeroed = false;
	}
	lfs_staging_start(shelf, cmd, portid);

	ret = lfs_staging_grow(shelf, n, extack);
	if (ret)
		goto out_abort;
	ret = lfs_books_reserve(shelf, books, n,
				shelf->staged + shelf->nr_staged, extack);
	if (ret)
		goto out_abort;
	shelf->nr_staged += n;
	lfs_generation++;
	if (more)
		return 0;

	if (cmd == LFS_CMD_SHELF_CREATE)
		ret = lfs_shelf_commit_create(shelf, extack);
	else
		ret = lfs_shelf_commit_extend(shelf);
	if (ret)
		goto out_abort;
	*out = shelf;
	return 0;

out_abort:
	lfs_staging_abort(shelf);
	return ret;
}

static int lfs_shelf_check_idle(struct lfs_shelf *shelf,
				struct netlink_ext_ack *extack)
{
	if (shelf->staged_cmd) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"shelf '%s' is being extended by another request",
			shelf->name);
		return -EBUSY;
	}
	if (shelf->open_count) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"/dev/%s (shelf '%s') is open or mounted; unmount and close it first",
			shelf->disk->disk_name, shelf->name);
		return -EBUSY;
	}
	return 0;
}

int lfs_shelf_shrink(struct lfs_shelf *shelf, u32 nr_books,
		     struct netlink_ext_ack *extack)
{
	struct lfs_map *old = lfs_shelf_map(shelf), *map;
	int ret;

	if (lfs_shelf_fenced(shelf))
		return lfs_shelf_fenced_error(shelf, extack);
	if (!nr_books || nr_books >= old->nr_books) {
		NL_SET_ERR_MSG_FMT(
			extack,
			"new book count %u for shelf '%s' is not between 1 and %u",
			nr_books, shelf->name, old->nr_books - 1);
		return -EINVAL;
	}
	map = lfs_map_alloc(nr_books);
	if (!map)
		return -ENOMEM;
	memcpy(map->books, old->books, nr_books * sizeof(*map->books));

	/* Holding open_lock keeps the disk closed until the new map is in. */
	mutex_lock(&shelf->open_lock);
	ret = lfs_shelf_check_idle(shelf, extack);
	if (ret) {
		mutex_unlock(&shelf->open_lock);
		kvfree(map);
		return ret;
	}
	set_capacity_and_notify(shelf->disk, lfs_map_sectors(shelf, nr_books));
	rcu_assign_pointer(shelf->map, map);
	synchronize_rcu();
	lfs_flush_rebuild(shelf, map);
	mutex_unlock(&shelf->open_lock);

	lfs_books_unreserve(old->books + nr_books, old->nr_books - nr_books);
	kvfree(old);
	lfs_generation++;
	return 0;
}

int lfs_shelf_remove(struct lfs_shelf *shelf, struct netlink_ext_ack *extack)
{
	struct lfs_map *map = lfs_shelf_map(shelf);
	int ret;

	mutex_lock(&shelf->open_lock);
	ret = lfs_shelf_check_idle(shelf, extack);
	if (!ret)
		shelf->dying = true;
	mutex_unlock(&shelf->open_lock);
	if (ret)
		return ret;

	pr_info("%s: removing shelf '%s'\n", shelf->disk->disk_name,
		shelf->name);
	/*
	 * Nothing can reach the books any more: the disk is not open and
	 * cannot be opened (dying), and with the DAX device killed no mapping
	 * remains. The books and the name are free now. del_gendisk() waits
	 * for an RCU grace period after the device is gone (quiescing the
	 * queue), tens of milliseconds on a slow machine, so it runs in
	 * lfs_shelf_reap(); the disk's number is reused only after that.
	 * A bio ends before its opener can close the disk, so no remapped one
	 * is left; the wait makes that plain before the books are given back.
	 */
	lfs_dax_remove(shelf);
	lfs_remaps_wait(shelf);
	lfs_books_unreserve(map->books, map->nr_books);
	list_del(&shelf->node);
	INIT_WORK(&shelf->reap, lfs_shelf_reap);
	queue_work(lfs_reaper, &shelf->reap);
	/* lfs_shelf_exit() waits for the reaper */
	module_put(THIS_MODULE);
	lfs_generation++;
	return 0;
}

int lfs_shelf_init(void)
{
	lfs_reaper = alloc_workqueue("lfs_reaper", WQ_UNBOUND, 0);
	return lfs_reaper ? 0 : -ENOMEM;
}

void lfs_shelf_exit(void)
{
	/* removed shelves whose disks are still being deleted */
	destroy_workqueue(lfs_reaper);
}
