// SPDX-License-Identifier: GPL-2.0
/*
 * lfsvol beside a loaded lfs.ko of another netlink version (tests/lvmish/
 * skew.t): lfsvol's commands linked in (lvmish/lfsvol/lfsvol.a) with
 * -Wl,--wrap=lfs_client_open,--wrap=lfs_client_open_error, so that every
 * driver session they open fails as liblfsnl's does when the kernel's `lfs'
 * family is another version than the tool's: -EPROTONOSUPPORT, with that
 * message. As after an upgrade of lfsvol while the old module still holds
 * shelves.
 */
#include <errno.h>
#include <stdio.h>

#include "liblfsnl.h"

int lfsvol_main(int argc, char **argv);
int __wrap_lfs_client_open(struct lfs_client **out);
const char *__wrap_lfs_client_open_error(void);

int __wrap_lfs_client_open(struct lfs_client **out)
{
	*out = NULL;
	return -EPROTONOSUPPORT;
}

const char *__wrap_lfs_client_open_error(void)
{
	static char msg[160];

	snprintf(
		msg, sizeof(msg),
		"the kernel's generic netlink family 'lfs' is version %u; this tool speaks version %u",
		LFS_GENL_VERSION + 1, LFS_GENL_VERSION);
	return msg;
}

int main(int argc, char **argv)
{
	return lfsvol_main(argc, argv);
}
