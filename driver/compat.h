/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between kernel versions, as feature macros and small helpers
 * over kernel APIs. Nothing else in the module tests LINUX_VERSION_CODE, and
 * nothing here calls the module: where a method's signature changed, the
 * file that owns the method wraps it under the feature macro (disk.c's
 * open and release, fabric.c's mark_dead, fs_dir.c's create and
 * d_revalidate).
 *
 * Built and tested on Debian's 6.1 (bookworm), 6.12 (bookworm-backports) and
 * 7.x (trixie-backports); docs/DRIVER.md. The version of each macro below is
 * the release that brought the change; kernels between those tested are
 * untested.
 */
#ifndef _LFS_COMPAT_H
#define _LFS_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/netlink.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/splice.h>
#include <linux/wait_bit.h>
#include <linux/xattr.h>
#include <net/genetlink.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
#error "lfs supports Linux 6.1 and 6.10 or later (tested: 6.1, 6.12, 7.x)"
#endif

/* 6.2: genl split ops; pre_doit gets a struct genl_split_ops. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define lfs_genl_doit_ops genl_split_ops
#else
#define lfs_genl_doit_ops genl_ops
#endif

/* 6.3: filesystem methods take a struct mnt_idmap; vm_flags_set(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define LFS_HAVE_MNT_IDMAP 1
#endif

/* 6.5: block_device_operations open/release take the gendisk and blk_mode_t. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define LFS_HAVE_BLK_MODE 1
#endif

/* 6.5: O_DIRECT needs FMODE_CAN_ODIRECT; splice reads by copy_splice_read(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define LFS_HAVE_FMODE_CAN_ODIRECT 1
#define LFS_HAVE_COPY_SPLICE_READ 1
#endif

/*
 * 6.6: a dump's attributes are in genl_dumpit_info's genl_info; huge faults
 * and DAX faults take a page order; generic_fillattr() takes the request mask.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define LFS_HAVE_GENL_INFO_DUMP 1
#define LFS_HAVE_FAULT_ORDER 1
#define LFS_HAVE_FILLATTR_MASK 1
#endif

/* 6.7: inode times are read and set through accessors. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define LFS_HAVE_INODE_TIME_ACCESSORS 1
#endif

/* 6.10: block devices are opened as files, and bdev_fput() yields the claim. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define LFS_HAVE_BDEV_FILE 1
#endif

/*
 * 6.8: freeze_bdev() is bdev_freeze(), and the frozen super_block is no
 * longer kept in the block_device (bd_fsfreeze_sb). Book moves (move.c)
 * are built only before it for now.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define LFS_HAVE_BDEV_FREEZE 1
#endif

/*
 * By 6.10 (the first kernel after 6.1 that lfs builds for): memory failure
 * tells a DAX holder of its device's unbind with MF_MEM_PRE_REMOVE.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define LFS_HAVE_MF_PRE_REMOVE 1
#endif

/* 6.11: queue limits carry the features; blk_alloc_disk() takes them. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define LFS_HAVE_QUEUE_FEATURES 1
#endif

/* 6.11: MAP_SYNC support is a file_operations flag (FOP_MMAP_SYNC). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define LFS_HAVE_FOP_FLAGS 1
#endif

/* 6.13: hrtimer_setup() sets the callback with the clock and mode. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define LFS_HAVE_HRTIMER_SETUP 1
#endif

/* 6.14: d_revalidate() gets the parent and the name. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define LFS_HAVE_D_REVALIDATE_NAME 1
#endif

/*
 * 6.15: bin_attribute's read() gets a const bin_attribute; fs-dax pages are
 * refcounted folios, and dax_break_layout_final() waits for them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define LFS_HAVE_CONST_BIN_ATTR_READ 1
#define LFS_HAVE_DAX_BREAK_LAYOUT 1
#endif

/*
 * 6.17: dax_direct_access() returns a plain pfn (pfn_t is gone); a
 * superblock's default dentry operations are set by set_default_d_op().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define LFS_HAVE_DAX_PLAIN_PFN 1
#define LFS_HAVE_SET_DEFAULT_D_OP 1
#endif

/* 6.18: attribute_group's bin_attrs is an array of const bin_attributes. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define LFS_HAVE_CONST_BIN_ATTRS 1
#endif

/* 6.19: the inode's state is read through accessors. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define LFS_HAVE_INODE_STATE_READ 1
#endif

/*
 * 7.0: inode_operations.create() is no longer told O_EXCL (the filesystem
 * notes it from the lookup intent). The release is the first without it
 * that is known here; only 7.3 of the 7.x series is built.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define LFS_HAVE_CREATE_NO_EXCL 1
#endif

/*
 * Formatted extack messages arrived in 6.2 (NL_SET_ERR_MSG_FMT). Before that
 * the message must outlive the handler: the ack is built after the family
 * lock is dropped. A small ring of buffers keeps each message alive until
 * LFS_EXTACK_RING later errors, far more than can occur between a handler's
 * return and its ack.
 */
#ifndef NL_SET_ERR_MSG_FMT
#define LFS_EXTACK_RING 64
#define LFS_EXTACK_LEN 160
const char *lfs_extack_fmt(const char *fmt, ...) __printf(1, 2);
#define NL_SET_ERR_MSG_FMT(extack, fmt, args...)                      \
	do {                                                          \
		struct netlink_ext_ack *__extack = (extack);          \
								\
		if (__extack)                                         \
			__extack->_msg = lfs_extack_fmt(fmt, ##args); \
	} while (0)
#define LFS_NEED_EXTACK_RING 1
#endif

/* The attributes of a dump request. */
static inline struct nlattr **lfs_dump_attrs(struct netlink_callback *cb)
{
#ifdef LFS_HAVE_GENL_INFO_DUMP
	return genl_info_dump(cb)->attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * The copies of a shelf's bios through a fabric's mapping. From 6.10 (holder
 * operations since 6.5, releasing bd_holder_lock since 6.8) the block layer
 * tells the holder of a device when its disk is deleted: pmem does that after
 * its kill_dax() and before it unmaps its memory, so the fabric's mark_dead
 * (fabric.c) can stop the copies through the fabric's mapping and wait for
 * those under way. A copy then needs only RCU, which the bio path holds
 * anyway: lfs_copy_lock() is rcu_read_lock() and lfs_copy_wait()
 * synchronize_rcu(). (On every kernel lfs_copy_lock() holds RCU, for the
 * book map.) Before 6.10 a deleted disk is seen only through dax_alive(), so
 * a copy runs inside dax_read_lock(), which pmem's kill_dax() waits for; and
 * a fence's kill_dax() of the shelf's own DAX device waits for it too
 * (lfs_shelf_fence()).
 */
#ifdef LFS_HAVE_BDEV_FILE
static inline int lfs_copy_lock(void)
{
	rcu_read_lock();
	return 0;
}

static inline void lfs_copy_unlock(int id)
{
	rcu_read_unlock();
}

static inline void lfs_copy_wait(void)
{
	synchronize_rcu();
}

/*
 * May a copy use the fabric's mapping kept at attach? Not once its disk was
 * deleted. (dax_alive() wants dax_read_lock() held, which the copy does not
 * take here; it would not be needed anyway: pmem's memory stays mapped
 * between its kill_dax() and its mark_dead.)
 */
static inline bool lfs_fabric_mapped(bool dead, struct dax_device *dax_dev)
{
	return !dead;
}
#else
struct blk_holder_ops;

static inline int lfs_copy_lock(void)
{
	int id = dax_read_lock();

	rcu_read_lock();
	return id;
}

static inline void lfs_copy_unlock(int id)
{
	rcu_read_unlock();
	dax_read_unlock(id);
}

/* A fence's kill_dax() of the shelf's DAX device waits for the copies. */
static inline void lfs_copy_wait(void)
{
}

/* Not once pmem has killed its DAX device. Inside dax_read_lock(). */
static inline bool lfs_fabric_mapped(bool dead, struct dax_device *dax_dev)
{
	return dax_alive(dax_dev);
}
#endif

/*
 * Exclusive open of a fabric device by path, telling hops (NULL before 6.10)
 * of its disk's deletion. *file is the open file on kernels that
 * open block devices as files, NULL before.
 */
static inline struct block_device *
lfs_bdev_open(const char *path, void *holder,
	      const struct blk_holder_ops *hops, struct file **file)
{
#ifdef LFS_HAVE_BDEV_FILE
	*file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				       holder, hops);
	if (IS_ERR(*file))
		return ERR_CAST(*file);
	return file_bdev(*file);
#else
	*file = NULL;
	return blkdev_get_by_path(path, FMODE_READ | FMODE_WRITE | FMODE_EXCL,
				  holder);
#endif
}

static inline void lfs_bdev_close(struct block_device *bdev, struct file *file)
{
#ifdef LFS_HAVE_BDEV_FILE
	bdev_fput(file);
#else
	blkdev_put(bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
#endif
}

/*
 * A bio-based disk with stacked limits @lim (blk_set_stacking_limits() and
 * blk_stack_limits() of every fabric device), write cache and FUA if any
 * fabric device has them, non-rotational, DAX-capable if @dax. Before 6.11
 * the features are queue flags set after allocation.
 */
static inline struct gendisk *lfs_alloc_disk(struct queue_limits *lim,
					     bool wc, bool fua, bool dax)
{
#ifdef LFS_HAVE_QUEUE_FEATURES
	/* as the 6.1 module: no REQ_NOWAIT, no polling, never rotational */
	lim->features &= ~(BLK_FEAT_NOWAIT | BLK_FEAT_POLL |
			   BLK_FEAT_ROTATIONAL | BLK_FEAT_WRITE_CACHE |
			   BLK_FEAT_FUA);
	if (wc)
		lim->features |= BLK_FEAT_WRITE_CACHE;
	if (wc && fua)
		lim->features |= BLK_FEAT_FUA;
	if (dax)
		lim->features |= BLK_FEAT_DAX;
	return blk_alloc_disk(lim, NUMA_NO_NODE);
#else
	struct gendisk *disk = blk_alloc_disk(NUMA_NO_NODE);

	if (!disk)
		return ERR_PTR(-ENOMEM);
	disk->queue->limits = *lim;
	blk_queue_write_cache(disk->queue, wc, fua);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
	if (dax)
		blk_queue_flag_set(QUEUE_FLAG_DAX, disk->queue);
	return disk;
#endif
}

/*
 * Stack the limits of @bdev, whose data starts @offset sectors in, onto a
 * live queue, keeping @chunk_sectors; write cache and FUA are turned on if
 * @bdev has them (from 6.11 blk_stack_limits() does that). Returns true if
 * @bdev is misaligned with the queue.
 */
static inline bool lfs_queue_stack_bdev(struct request_queue *q,
					struct block_device *bdev,
					sector_t offset,
					unsigned int chunk_sectors)
{
	struct queue_limits lim;
	bool misaligned;

#ifdef LFS_HAVE_QUEUE_FEATURES
	lim = queue_limits_start_update(q);
	misaligned = blk_stack_limits(&lim, &bdev_get_queue(bdev)->limits,
				      offset) < 0;
	lim.chunk_sectors = chunk_sectors;
	lim.features &= ~(BLK_FEAT_NOWAIT | BLK_FEAT_POLL | BLK_FEAT_ROTATIONAL);
	if (queue_limits_commit_update(q, &lim))
		misaligned = true;
#else
	lim = q->limits;
	misaligned = blk_stack_limits(&lim, &bdev_get_queue(bdev)->limits,
				      offset) < 0;
	lim.chunk_sectors = chunk_sectors;
	q->limits = lim;
	if (bdev_write_cache(bdev) && !test_bit(QUEUE_FLAG_WC, &q->queue_flags))
		blk_queue_write_cache(q, true,
				      test_bit(QUEUE_FLAG_FUA, &q->queue_flags) ||
					      bdev_fua(bdev));
#endif
	return misaligned;
}

/* 6.17: write zeroes that unmap have limits of their own, at most the others. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define LFS_HAVE_WZEROES_UNMAP 1
#endif

/* 6.13: the zone append limit the driver sets is max_hw_zone_append_sectors. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define LFS_HAVE_HW_ZONE_APPEND 1
#endif

/*
 * A device-DAX under a shelf: as pmem's queue, no write zeroes nor discard
 * (its bios are only copied, disk.c), no zone append (6.11's checks warn
 * about one on a queue that is not zoned), 4 KiB physical blocks. Stacking
 * limits leave these at their largest until a real device's are stacked.
 */
static inline void lfs_limits_devdax(struct queue_limits *lim)
{
#ifdef LFS_HAVE_HW_ZONE_APPEND
	lim->max_hw_zone_append_sectors = 0;
#endif
	lim->max_zone_append_sectors = 0;
	lim->max_write_zeroes_sectors = 0;
#ifdef LFS_HAVE_WZEROES_UNMAP
	lim->max_hw_wzeroes_unmap_sectors = 0;
#endif
	lim->physical_block_size =
		max_t(unsigned int, lim->physical_block_size, PAGE_SIZE);
}

/* dax_operations.direct_access's pfn argument. */
#ifdef LFS_HAVE_DAX_PLAIN_PFN
#define lfs_dax_pfn_t unsigned long
#else
#define lfs_dax_pfn_t pfn_t
#endif

/* A pfn from dax_direct_access() as a plain number. */
/* And a pfn for it of a physical address, of pages with a struct page. */
#ifdef LFS_HAVE_DAX_PLAIN_PFN
#define lfs_pfn_val(pfn) (pfn)
#define lfs_phys_pfn(phys) PHYS_PFN(phys)
#else
#include <linux/pfn_t.h>
#define lfs_pfn_val(pfn) pfn_t_to_pfn(pfn)
#define lfs_phys_pfn(phys) phys_to_pfn_t(phys, PFN_DEV | PFN_MAP)
#endif

/*
 * 7.x: a device-DAX bound to fsdev_dax has dax_operations, and fs_dax_get()
 * makes the module its holder without a block device (devdax.c). 7.3 is the
 * first release known here that has both; before, a device-DAX is refused.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define LFS_HAVE_FS_DAX_GET 1
#endif

/* The most pages a device-DAX fabric may map: 4 PiB. */
#define LFS_DEVDAX_PAGES_MAX (1L << 40)

/* bin_attribute.read's attribute argument, and attribute_group.bin_attrs. */
#ifdef LFS_HAVE_CONST_BIN_ATTR_READ
#define lfs_bin_attr_read_const const
#else
#define lfs_bin_attr_read_const
#endif
#ifdef LFS_HAVE_CONST_BIN_ATTRS
#define lfs_bin_attrs_const const
#else
#define lfs_bin_attrs_const
#endif

static inline void lfs_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef LFS_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * The filesystem (fs_*.c). Methods take an idmap (6.3) or a user namespace;
 * the filesystem ignores it (no idmapped mounts: FS_ALLOW_IDMAP is not set).
 */
#ifdef LFS_HAVE_MNT_IDMAP
#define lfs_idmap_t struct mnt_idmap
#define lfs_nop_idmap (&nop_mnt_idmap)
#else
#define lfs_idmap_t struct user_namespace
#define lfs_nop_idmap (&init_user_ns)
#endif

static inline void lfs_fillattr(struct inode *inode, u32 request_mask,
				struct kstat *stat)
{
#ifdef LFS_HAVE_FILLATTR_MASK
	generic_fillattr(lfs_nop_idmap, request_mask, inode, stat);
#else
	generic_fillattr(lfs_nop_idmap, inode, stat);
#endif
}

static inline void lfs_inode_set_times(struct inode *inode,
				       struct timespec64 mtime,
				       struct timespec64 ctime)
{
#ifdef LFS_HAVE_INODE_TIME_ACCESSORS
	inode_set_mtime_to_ts(inode, mtime);
	inode_set_atime_to_ts(inode, mtime);
	inode_set_ctime_to_ts(inode, ctime);
#else
	inode->i_mtime = mtime;
	inode->i_atime = mtime;
	inode->i_ctime = ctime;
#endif
}

static inline void lfs_vma_set_hugepage(struct vm_area_struct *vma)
{
#ifdef LFS_HAVE_MNT_IDMAP
	vm_flags_set(vma, VM_HUGEPAGE);
#else
	vma->vm_flags |= VM_HUGEPAGE;
#endif
}

/* A new inode of iget5_locked(), not set up yet. */
static inline bool lfs_inode_is_new(struct inode *inode)
{
#ifdef LFS_HAVE_INODE_STATE_READ
	return inode_state_read_once(inode) & I_NEW;
#else
	return inode->i_state & I_NEW;
#endif
}

static inline void lfs_sb_set_d_op(struct super_block *sb,
				   const struct dentry_operations *ops)
{
#ifdef LFS_HAVE_SET_DEFAULT_D_OP
	set_default_d_op(sb, ops);
#else
	sb->s_d_op = ops;
#endif
}

/* O_DIRECT is served like any read or write (dax_iomap_rw()). */
static inline void lfs_file_allow_odirect(struct file *file)
{
#ifdef LFS_HAVE_FMODE_CAN_ODIRECT
	file->f_mode |= FMODE_CAN_ODIRECT;
#endif
}

#ifdef LFS_HAVE_COPY_SPLICE_READ
#define lfs_splice_read copy_splice_read
#else
#define lfs_splice_read generic_file_splice_read
#endif

/* file_operations: MAP_SYNC is supported. */
#ifdef LFS_HAVE_FOP_FLAGS
#define LFS_FOPS_MAP_SYNC .fop_flags = FOP_MMAP_SYNC
#else
#define LFS_FOPS_MAP_SYNC .mmap_supported_flags = MAP_SYNC
#endif

/* vm_operations_struct.huge_fault and the DAX fault helpers' size argument. */
#ifdef LFS_HAVE_FAULT_ORDER
#define lfs_fault_size_t unsigned int
#define LFS_FAULT_PTE 0
#else
#define lfs_fault_size_t enum page_entry_size
#define LFS_FAULT_PTE PE_SIZE_PTE
#endif

/*
 * Before the DAX entries of @inode are deleted: wait until no page is pinned
 * (get_user_pages() for DMA and the like) once nothing maps them. Called
 * with the invalidate lock held and no mapping of the file left.
 */
static inline void lfs_dax_break_layouts(struct inode *inode)
{
#ifdef LFS_HAVE_DAX_BREAK_LAYOUT
	dax_break_layout_final(inode);
#else
	struct page *page;

	while ((page = dax_layout_busy_page(inode->i_mapping)))
		___wait_var_event(&page->_refcount,
				  atomic_read(&page->_refcount) == 1,
				  TASK_UNINTERRUPTIBLE, 0, 0, schedule());
#endif
}

/*
 * Delete the DAX entries of @inode from @start (a page boundary) on, or
 * -EBUSY if a page there is pinned. Called with the invalidate lock held and
 * no mapping of the file left: then nothing can pin one meanwhile. From 6.15
 * the entries must be gone before truncate_inode_pages() (it warns).
 */
static inline int lfs_dax_break_from(struct inode *inode, loff_t start)
{
#ifdef LFS_HAVE_DAX_BREAK_LAYOUT
	return dax_break_layout(inode, start, LLONG_MAX, NULL) ? -EBUSY : 0;
#else
	if (dax_layout_busy_page_range(inode->i_mapping, start, LLONG_MAX))
		return -EBUSY;
	truncate_inode_pages(inode->i_mapping, start);
	return 0;
#endif
}

#endif /* _LFS_COMPAT_H */
