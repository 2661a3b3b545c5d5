/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between kernel versions, as feature macros and small helpers.
 * Nothing else in the module tests LINUX_VERSION_CODE.
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
#include <linux/file.h>
#include <linux/netlink.h>
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

/* 6.5: block_device_operations open/release take the gendisk and blk_mode_t. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define LFS_HAVE_BLK_MODE 1
#endif

/* 6.6: a dump's attributes are in genl_dumpit_info's genl_info. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define LFS_HAVE_GENL_INFO_DUMP 1
#endif

/* 6.10: block devices are opened as files, and bdev_fput() yields the claim. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define LFS_HAVE_BDEV_FILE 1
#endif

/* 6.11: queue limits carry the features; blk_alloc_disk() takes them. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define LFS_HAVE_QUEUE_FEATURES 1
#endif

/* 6.15: bin_attribute's read() gets a const bin_attribute. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define LFS_HAVE_CONST_BIN_ATTR_READ 1
#endif

/* 6.17: dax_direct_access() returns a plain pfn (pfn_t is gone). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define LFS_HAVE_DAX_PLAIN_PFN 1
#endif

/* 6.18: attribute_group's bin_attrs is an array of const bin_attributes. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define LFS_HAVE_CONST_BIN_ATTRS 1
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
 * Exclusive open of a fabric device by path. *file is the open file on
 * kernels that open block devices as files, NULL before.
 */
static inline struct block_device *lfs_bdev_open(const char *path, void *holder,
						 struct file **file)
{
#ifdef LFS_HAVE_BDEV_FILE
	*file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				       holder, NULL);
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
 * block_device_operations.open and .release, around lfs_disk_open() and
 * lfs_disk_release() (disk.c), which take what every kernel can give.
 */
int lfs_disk_open(struct gendisk *disk, bool write);
void lfs_disk_release(struct gendisk *disk);

#ifdef LFS_HAVE_BLK_MODE
static inline int lfs_bdops_open(struct gendisk *disk, blk_mode_t mode)
{
	return lfs_disk_open(disk, mode & BLK_OPEN_WRITE);
}

static inline void lfs_bdops_release(struct gendisk *disk)
{
	lfs_disk_release(disk);
}
#else
static inline int lfs_bdops_open(struct block_device *bdev, fmode_t mode)
{
	return lfs_disk_open(bdev->bd_disk, mode & FMODE_WRITE);
}

static inline void lfs_bdops_release(struct gendisk *disk, fmode_t mode)
{
	lfs_disk_release(disk);
}
#endif

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

/* dax_operations.direct_access's pfn argument. */
#ifdef LFS_HAVE_DAX_PLAIN_PFN
#define lfs_dax_pfn_t unsigned long
#else
#define lfs_dax_pfn_t pfn_t
#endif

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

#endif /* _LFS_COMPAT_H */
