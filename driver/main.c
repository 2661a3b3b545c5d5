// SPDX-License-Identifier: GPL-2.0
/*
 * LFS: shelves of fabric-attached memory books as DAX-capable block devices.
 *
 * Module unload: every shelf (also one still being created) holds a module
 * reference, and so does a mounted lfs filesystem, so "rmmod lfs" is refused
 * while any exists; attached fabric devices are released on unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <net/net_namespace.h>

#include "lfs.h"

/* Serialises every change to fabrics, shelves and book ownership. */
DEFINE_MUTEX(lfs_lock);

#ifdef LFS_NEED_EXTACK_RING
static char lfs_extack_ring[LFS_EXTACK_RING][LFS_EXTACK_LEN];
static atomic_t lfs_extack_next = ATOMIC_INIT(0);

const char *lfs_extack_fmt(const char *fmt, ...)
{
	unsigned int slot = (unsigned int)atomic_inc_return(&lfs_extack_next) %
			    LFS_EXTACK_RING;
	char *buf = lfs_extack_ring[slot];
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, LFS_EXTACK_LEN, fmt, args);
	va_end(args);
	return buf;
}
#endif

/*
 * A multi-message create or extend dies with the socket that started it,
 * and the upcall server with its socket.
 */
static int lfs_netlink_notify(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC &&
	    net_eq(n->net, &init_net)) {
		lfs_shelf_release_staging(n->portid);
		lfs_upcall_release(n->portid);
	}
	return NOTIFY_DONE;
}

static struct notifier_block lfs_netlink_notifier = {
	.notifier_call = lfs_netlink_notify,
};

static int __init lfs_init(void)
{
	int ret;

	lfs_lease_init();
	lfs_fence_init();
	ret = lfs_disk_init();
	if (ret)
		goto out_lease;
	ret = lfs_shelf_init();
	if (ret)
		goto out_disk;
	ret = netlink_register_notifier(&lfs_netlink_notifier);
	if (ret)
		goto out_shelf;
	ret = lfs_genl_init();
	if (ret)
		goto out_notifier;
	ret = lfs_fs_init();
	if (ret)
		goto out_genl;
	pr_info("loaded, generic netlink family %s version %d, filesystem lfs\n",
		LFS_GENL_NAME, LFS_GENL_VERSION);
	return 0;

out_genl:
	lfs_genl_exit();
	lfs_upcall_exit();
out_notifier:
	netlink_unregister_notifier(&lfs_netlink_notifier);
out_shelf:
	lfs_shelf_exit();
out_disk:
	lfs_disk_exit();
out_lease:
	lfs_fence_exit();
	/* A renewal may have armed the timer once the family was registered. */
	lfs_lease_exit();
	return ret;
}

/*
 * Removed shelves whose disks the reaper has not deleted yet still have
 * their sysfs attributes: the reaper is drained (lfs_shelf_exit()) before
 * the fabric devices go.
 */
static void __exit lfs_exit(void)
{
	lfs_fs_exit();
	lfs_genl_exit();
	lfs_upcall_exit();
	netlink_unregister_notifier(&lfs_netlink_notifier);
	lfs_shelf_exit();
	mutex_lock(&lfs_lock);
	lfs_fabric_detach_all();
	mutex_unlock(&lfs_lock);
	lfs_disk_exit();
	lfs_fence_exit();
	lfs_lease_exit();
	pr_info("unloaded\n");
}

module_init(lfs_init);
module_exit(lfs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("LFS fabric-attached memory shelves");
MODULE_AUTHOR("LFS developers");
MODULE_ALIAS_GENL_FAMILY(LFS_GENL_NAME);
