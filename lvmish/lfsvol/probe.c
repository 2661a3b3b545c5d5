// SPDX-License-Identifier: GPL-2.0
/* What is on a block device: libblkid's signatures, and whether it is mounted. */
#include <blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"

static void probe_values(blkid_probe pr, struct lfsvol_fsinfo *fs)
{
	const char *v;

	if (!blkid_probe_lookup_value(pr, "TYPE", &v, NULL))
		snprintf(fs->type, sizeof(fs->type), "%s", v);
	else if (!blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL))
		snprintf(fs->type, sizeof(fs->type), "%s partition table", v);
	if (!blkid_probe_lookup_value(pr, "LABEL", &v, NULL))
		snprintf(fs->label, sizeof(fs->label), "%s", v);
	if (!blkid_probe_lookup_value(pr, "UUID", &v, NULL))
		snprintf(fs->uuid, sizeof(fs->uuid), "%s", v);
}

int lfsvol_probe_fs(const char *dev, uint64_t offset, uint64_t size, struct lfsvol_fsinfo *fs)
{
	blkid_probe pr;
	int fd, r;

	memset(fs, 0, sizeof(*fs));
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	pr = blkid_new_probe();
	if (!pr) {
		close(fd);
		return -ENOMEM;
	}
	r = blkid_probe_set_device(pr, fd, (blkid_loff_t)offset, (blkid_loff_t)size);
	if (r == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
							      BLKID_SUBLKS_UUID);
		blkid_probe_enable_partitions(pr, 1);
		r = blkid_do_safeprobe(pr);
		if (r == 0)
			probe_values(pr, fs);
		else if (r == -2)
			snprintf(fs->type, sizeof(fs->type), "ambivalent signatures");
		r = r < 0 && r != -2 ? -EIO : 0;
	} else {
		r = -EIO;
	}
	blkid_free_probe(pr);
	close(fd);
	return r;
}

bool lfsvol_dev_mounted(uint32_t devt)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], want[32];
	bool found = false;

	if (!f)
		return false;
	snprintf(want, sizeof(want), " %u:%u ", major(devt), minor(devt));
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	fclose(f);
	return found;
}
