/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between kernel versions, as feature macros. Nothing else in
 * the module tests LINUX_VERSION_CODE.
 */
#ifndef _LFS_COMPAT_H
#define _LFS_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>
#include <linux/netlink.h>

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

/* Exclusive open of a block device by path; the API changed in 6.5. */
#define LFS_BDEV_MODE (FMODE_READ | FMODE_WRITE | FMODE_EXCL)

static inline struct block_device *lfs_bdev_open(const char *path, void *holder)
{
	return blkdev_get_by_path(path, LFS_BDEV_MODE, holder);
}

static inline void lfs_bdev_close(struct block_device *bdev, void *holder)
{
	blkdev_put(bdev, LFS_BDEV_MODE);
}

#endif /* _LFS_COMPAT_H */
