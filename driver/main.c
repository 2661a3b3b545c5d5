// SPDX-License-Identifier: GPL-2.0
/*
 * LFS: shelves of fabric-attached memory books as DAX-capable block devices.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

static int __init lfs_init(void)
{
	pr_info("loaded\n");
	return 0;
}

static void __exit lfs_exit(void)
{
	pr_info("unloaded\n");
}

module_init(lfs_init);
module_exit(lfs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("LFS fabric-attached memory shelves");
MODULE_AUTHOR("LFS developers");
