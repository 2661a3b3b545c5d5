// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: WARN on load so the harness self-test can check that a kernel
 * warning in the guest fails the run (the guest boots with panic_on_warn=1).
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init lfs_warn_test_init(void)
{
	WARN(1, "lfs_warn_test: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit lfs_warn_test_exit(void)
{
}

module_init(lfs_warn_test_init);
module_exit(lfs_warn_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("LFS VM harness self-test: deliberate WARN");
