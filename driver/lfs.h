/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LFS_H
#define _LFS_H

#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/uuid.h>
#include <linux/xarray.h>
#include <net/genetlink.h>

#include "compat.h"
#include "uapi/lfs.h"

/* A bad range of a fabric, in pages from its first book (bad.c). */
struct lfs_bad {
	u64 start;
	u64 end; /* exclusive */
};

/* A fabric memory device attached with its interleave group. */
struct lfs_fabric {
	struct list_head node; /* in lfs_fabrics, sorted by ig */
	u32 ig;
	char path[LFS_PATH_MAX];
	struct block_device *bdev; /* NULL for a device-DAX (devdax.c) */
	struct file *bdev_file; /* its open file, NULL before 6.10 (compat.h) */
	struct file *dax_file; /* a device-DAX's open character device */
	struct dev_pagemap *pgmap; /* a device-DAX mapped here (devdax_map.c) */
	struct resource *map_res; /* its range, claimed */
	phys_addr_t map_start;
	void *map_vaddr;
	struct dax_device *dax_dev; /* NULL if the device has no DAX */
	dev_t devt; /* the block or (device-DAX) character device */
	u64 dev_size; /* bytes */
	int numa_node;
	bool volatile_mem; /* its content is lost at a power cycle */
	u64 book_size;
	unsigned int book_shift;
	u64 offset;
	u32 nr_books;
	u32 nr_used;
	sector_t start_sect; /* first book, in the bdev's sectors */
	pgoff_t dax_pgoff; /* first book, in dax_dev pages */
	void *kaddr; /* first book, mapped; NULL: ask dax_direct_access() */
	bool dead; /* its disk was deleted (lfs_fabric_dead()) */
	struct xarray owners; /* book number -> struct lfs_shelf */
	bool labelled; /* carries a label (label.c), of this fabric: */
	u8 fabric_uuid[LFS_UUID_LEN];
	/*
	 * Bad ranges (bad.c): appended under bad_lock, read without it; an
	 * entry below nr_bad only ever grows. Kept until the fabric goes.
	 */
	spinlock_t bad_lock;
	unsigned int nr_bad;
	struct lfs_bad bad[LFS_BAD_MAX];
	struct rcu_head rcu;
};

/* One book of a shelf. */
struct lfs_extent {
	struct lfs_fabric *fabric;
	u32 book;
};

/*
 * The book map of a shelf, replaced as a whole (RCU) on extend and shrink so
 * that bios and DAX faults see either the old or the new map.
 */
struct lfs_map {
	struct rcu_head rcu;
	u32 nr_books;
	struct lfs_extent books[];
};

struct lfs_shelf {
	struct list_head node; /* in lfs_shelves */
	int id; /* N of lfsN, -1 until the disk exists */
	char name[LFS_NAME_MAX + 1];
	uuid_t uuid;
	u64 book_size;
	unsigned int book_shift;
	struct lfs_map __rcu *map;
	struct gendisk *disk;
	struct dax_device *dax_dev;

	/*
	 * Every fabric the shelf has books on, for flushes. Entries are only
	 * appended while the disk may be open; nr_flush is read locklessly.
	 */
	struct lfs_fabric *flush[LFS_FABRICS_MAX];
	unsigned int nr_flush;

	struct mutex open_lock; /* protects open_count and dying */
	unsigned int open_count;
	bool dying;
	/*
	 * Known to read as zeroes: created from scrubbed books (LFS_A_ZEROED)
	 * and never opened for writing nor extended since. Only ever cleared.
	 */
	bool zeroed;
	struct work_struct reap; /* del_gendisk after a remove */

	/* Fencing (lease.c): covered by the node's lease; fenced for good. */
	bool leased;
	bool fenced;
	u64 lease_epoch; /* the lease's epoch at its creation, if leased */
	atomic_t remaps; /* bios remapped to a fabric, not ended (disk.c) */
	bool moving; /* a book is being moved: bios wait (move.c, disk.c) */
	u64 created; /* CLOCK_BOOTTIME ns when the disk appeared */

	/* A create or extend arriving in several messages. */
	struct lfs_extent *staged;
	u32 nr_staged;
	u32 staged_cap;
	u32 staged_portid;
	u8 staged_cmd; /* 0 when nothing is staged */
};

extern struct mutex lfs_lock;
extern struct list_head lfs_fabrics;
extern struct list_head lfs_shelves;
extern struct idr lfs_shelf_ids;

/* fabric.c */
struct lfs_fabric *lfs_fabric_find(u32 ig);
struct lfs_fabric *lfs_fabric_find_path(const char *path,
					struct netlink_ext_ack *extack);
int lfs_fabric_attach(const char *path, u32 ig, u64 book_size, u64 offset,
		      const u8 *fabric_uuid, struct netlink_ext_ack *extack);
int lfs_fabric_detach(struct lfs_fabric *fabric,
		      struct netlink_ext_ack *extack);
void lfs_fabric_detach_all(void);
int lfs_fabric_label(const char *path, u32 ig, u64 book_size, u64 offset,
		     const u8 *fabric_uuid, struct netlink_ext_ack *extack);
int lfs_book_resolve(const struct lfs_book *b, struct lfs_extent *ext,
		     struct netlink_ext_ack *extack);

/* A device-DAX fabric: no block device, every access through its memory. */
static inline bool lfs_fabric_devdax(const struct lfs_fabric *fabric)
{
	return !fabric->bdev;
}

/* devdax.c */
bool lfs_devdax_path(const char *path, dev_t *devt);
int lfs_devdax_open(struct lfs_fabric *fabric, const char *path,
		    struct netlink_ext_ack *extack);
void lfs_devdax_close(struct lfs_fabric *fabric);
int lfs_devdax_rw(struct lfs_fabric *fabric, u64 off, void *buf, size_t len,
		  bool write);
int lfs_devdax_zero(struct lfs_fabric *fabric, u64 off, u64 len);
void lfs_devdax_dead(struct lfs_fabric *fabric);

/* devdax_map.c */
bool lfs_devmap_on_dax_bus(dev_t devt);
bool lfs_devmap_unbound(dev_t devt);
int lfs_devmap_open(struct lfs_fabric *fabric, const char *path, dev_t devt,
		    struct netlink_ext_ack *extack);
void lfs_devmap_close(struct lfs_fabric *fabric);

/* A device-DAX has no block size of its own: the shelf's are 512 bytes. */
static inline unsigned int lfs_fabric_lbs(struct lfs_fabric *fabric)
{
	if (lfs_fabric_devdax(fabric))
		return SECTOR_SIZE;
	return bdev_logical_block_size(fabric->bdev);
}

/* May a shelf on this fabric promise MAP_SYNC? Not on volatile memory. */
static inline bool lfs_fabric_sync(struct lfs_fabric *fabric)
{
	if (lfs_fabric_devdax(fabric))
		return !fabric->volatile_mem;
	return dax_synchronous(fabric->dax_dev);
}

/* bad.c */
extern const struct dax_holder_operations lfs_fabric_dax_hops;
void lfs_bad_init(struct lfs_fabric *fabric);
void lfs_bad_notify(struct lfs_fabric *fabric, u64 off, u64 len);
u64 lfs_bad_first(const struct lfs_fabric *fabric, u64 page, u64 nr);
unsigned int lfs_bad_get(const struct lfs_fabric *fabric,
			 struct lfs_bad_range *out, unsigned int max);

/* Has the fabric any bad range? Inline: every bio of a DAX copy asks. */
static inline bool lfs_fabric_has_bad(const struct lfs_fabric *fabric)
{
	/* Pairs with lfs_bad_add_locked(): an entry counted is written. */
	return smp_load_acquire(&fabric->nr_bad) != 0;
}

/* books.c */
int lfs_books_zero(const struct lfs_book *books, u32 n, unsigned long *done,
		   struct netlink_ext_ack *extack);
int lfs_books_check_zero(const struct lfs_book *books, u32 n,
			 unsigned long *zero, struct netlink_ext_ack *extack);

/* label.c */
int lfs_label_check(struct lfs_fabric *fabric, const u8 *fabric_uuid,
		    struct netlink_ext_ack *extack);
int lfs_label_write(struct lfs_fabric *fabric, const char *path, u32 ig,
		    u64 book_size, u64 offset, const u8 *fabric_uuid,
		    struct netlink_ext_ack *extack);

static inline sector_t lfs_map_sectors(const struct lfs_shelf *shelf,
				       u32 nr_books)
{
	return (sector_t)nr_books << (shelf->book_shift - SECTOR_SHIFT);
}

/* shelf.c */
bool lfs_name_valid(const char *name);
int lfs_shelf_init(void);
void lfs_shelf_exit(void);
struct lfs_shelf *lfs_shelf_find(const char *name);
#define LFS_STAGE_ZEROED BIT(0) /* LFS_A_ZEROED */
#define LFS_STAGE_LEASED BIT(1) /* LFS_A_LEASED */
int lfs_shelf_stage(u8 cmd, const char *name, const uuid_t *uuid,
		    const struct lfs_book *books, u32 n, bool more,
		    unsigned int flags, u32 portid,
		    struct netlink_ext_ack *extack, struct lfs_shelf **out);
int lfs_shelf_fenced_error(struct lfs_shelf *shelf,
			   struct netlink_ext_ack *extack);
int lfs_shelf_shrink(struct lfs_shelf *shelf, u32 nr_books,
		     struct netlink_ext_ack *extack);
int lfs_shelf_remove(struct lfs_shelf *shelf, struct netlink_ext_ack *extack);
void lfs_shelf_release_staging(u32 portid);
bool lfs_shelf_live(const struct lfs_shelf *shelf);
struct lfs_map *lfs_map_alloc(u32 nr_books);

/* move.c */
int lfs_book_move(struct lfs_shelf *shelf, u32 index, const struct lfs_book *to,
		  struct netlink_ext_ack *extack);
unsigned int lfs_shelf_openers(struct lfs_shelf *shelf);

/* reserve.c */
extern struct lfs_shelf lfs_zeroing;
int lfs_books_reserve(struct lfs_shelf *shelf, const struct lfs_book *books,
		      u32 n, struct lfs_extent *exts,
		      struct netlink_ext_ack *extack);
void lfs_books_unreserve(struct lfs_extent *exts, u32 n);

/* disk.c */
void lfs_remaps_wait(struct lfs_shelf *shelf);
int lfs_disk_init(void);
void lfs_disk_exit(void);
int lfs_disk_create(struct lfs_shelf *shelf, u32 nr_books,
		    struct netlink_ext_ack *extack);
void lfs_disk_delete(struct lfs_shelf *shelf);

/* queue.c */
bool lfs_flush_has(struct lfs_shelf *shelf, struct lfs_fabric *fabric);
void lfs_flush_add(struct lfs_shelf *shelf, struct lfs_fabric *fabric);
void lfs_flush_rebuild(struct lfs_shelf *shelf, struct lfs_map *map);
struct gendisk *lfs_queue_alloc(struct lfs_shelf *shelf);
void lfs_disk_stack_fabric(struct lfs_shelf *shelf, struct lfs_fabric *fabric);

/* dax.c */
bool lfs_dax_capable(struct lfs_shelf *shelf);
int lfs_dax_add(struct lfs_shelf *shelf, struct gendisk *disk);
void lfs_dax_remove(struct lfs_shelf *shelf);

/* sysfs.c */
extern const struct attribute_group *lfs_disk_groups[];

/* lease.c */
extern atomic_t lfs_leased_open;
int lfs_io_lock(void);
void lfs_io_unlock(int idx);
void lfs_io_wait(void);

/*
 * The gate of a book move (move.c): while a book of the shelf moves, a bio
 * leaves its lfs_io_lock() section (@io_idx), waits, and starts again; a
 * copy inside lfs_copy_lock() is not done (lfs_bio_dax() sees the flag too).
 */
static inline bool lfs_move_gated(struct lfs_shelf *shelf, int io_idx)
{
	if (likely(!READ_ONCE(shelf->moving)))
		return false;
	lfs_io_unlock(io_idx);
	wait_var_event(&shelf->moving, !READ_ONCE(shelf->moving));
	return true;
}
bool lfs_lease_over(u64 epoch);
bool lfs_lease_resets(void);

/*
 * What the lease covers, registered by its owner. When the lease lapses, the
 * fence work fences each cover, in the order of the slots, without lfs_lock:
 * the files first, whose mappings go before anything is waited for (*refused
 * is then when they went), then the shelves, which wait for their I/O.
 */
struct lfs_lease_cover {
	unsigned int (*nr_leased)(void); /* that exist; under lfs_lock */
	void (*fence)(const char *why, u64 *refused);
};

#define LFS_COVER_FILES 0 /* the filesystem's (fs_active.c) */
#define LFS_COVER_SHELVES 1 /* fence.c */
#define LFS_COVERS 2
void lfs_lease_cover_set(unsigned int slot, const struct lfs_lease_cover *cover);

/* May nothing reach this shelf's books any more? Inline: every bio asks. */
static inline bool lfs_shelf_fenced(const struct lfs_shelf *shelf)
{
	return READ_ONCE(shelf->fenced) ||
	       (shelf->leased && lfs_lease_over(shelf->lease_epoch));
}

int lfs_lease_renew(u64 start, u32 ms, int action, s64 watch_ms,
		    struct netlink_ext_ack *extack);
int lfs_lease_check(struct netlink_ext_ack *extack, u64 *epoch);
void lfs_lease_get(u32 *ms, s64 *left_ms, u32 *action);

/*
 * Fence latency of the lease's lapses: from the deadline to every covered
 * object refusing writes and stores (files flagged and unmapped; shelves
 * refuse from the deadline), and to the end of the fence (every wait).
 */
#define LFS_FENCE_HIST LFS_FENCE_HIST_BUCKETS
struct lfs_fence_stats {
	u32 count;
	u64 last_ns, max_ns;
	u64 done_last_ns, done_max_ns;
	u32 hist[LFS_FENCE_HIST];
};

void lfs_fence_stats_get(struct lfs_fence_stats *out);
void lfs_lease_init(void);
void lfs_lease_exit(void);

/* fence_watch.c: the fence watchdog */
int lfs_fence_watch_check(u32 ms, struct netlink_ext_ack *extack);
void lfs_fence_watch_set(u32 ms);
u32 lfs_fence_watch_ms(void);
void lfs_fence_watch_lapse(u64 deadline);
u64 lfs_fence_watch_begin(void);
void lfs_fence_watch_end(u64 lapses);
void lfs_fence_watch_init(void);
void lfs_fence_watch_exit(void);

/* fence.c */
void lfs_shelf_fence(struct lfs_shelf *shelf, const char *why);
unsigned int lfs_fenced_shelves(void);
void lfs_fence_init(void);
void lfs_fence_exit(void);

/* netlink.c, nl_ops.c: the generic netlink family */
extern u32 lfs_generation; /* bumped on every change, for dumps; never 0 */
int lfs_genl_init(void);
void lfs_genl_exit(void);
void *lfs_genl_put(struct sk_buff *skb, u8 cmd);
int lfs_genl_unicast(struct sk_buff *skb, u32 portid);
void lfs_genl_event(struct sk_buff *skb);

/* upcall.c: the channel to the node's upcall server (the filesystem's) */
int lfs_upcall_register(u32 portid, struct netlink_ext_ack *extack);
int lfs_upcall_unregister(u32 portid, struct netlink_ext_ack *extack);
void lfs_upcall_release(u32 portid);
int lfs_upcall_reply(u32 portid, struct nlattr **a,
		     struct netlink_ext_ack *extack);
void lfs_upcall_stats(u32 *portid, u32 *pending, u64 *sent, u64 *refused);
void lfs_upcall_exit(void);

/*
 * The filesystem (fs_*.c, docs/NAMESPACE.md). The fs_ calls that take no
 * lock expect lfs_lock not to be held; the others say so.
 */
int lfs_fs_init(void);
void lfs_fs_exit(void);
bool lfs_fs_name_open(const char *name); /* under lfs_lock */
bool lfs_fs_uuid_open(const uuid_t *uuid); /* under lfs_lock */
unsigned int lfs_fs_nr_active(void);
unsigned int lfs_fs_fence(const char *name, const uuid_t *uuid, const char *why,
			  u64 *unmapped);

#endif /* _LFS_H */
