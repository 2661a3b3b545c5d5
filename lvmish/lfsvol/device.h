/* SPDX-License-Identifier: GPL-2.0 */
/* Block devices: what libblkid finds on them (probe.c), and udev's /dev/lfs names (devlink.c). */
#ifndef LFSVOL_DEVICE_H
#define LFSVOL_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

/* A filesystem or other signature found by libblkid (empty strings if none). */
struct lfsvol_fsinfo {
	char type[32];
	char label[128];
	char uuid[64];
};

/* Probe size bytes of dev at offset (0, 0: all of it). */
int lfsvol_probe_fs(const char *dev, uint64_t offset, uint64_t size, struct lfsvol_fsinfo *fs);
/* Is the block device mounted (listed in /proc/self/mountinfo by major:minor)? */
bool lfsvol_dev_mounted(uint32_t devt);

bool lfsvol_udev_running(void);
/*
 * Make /dev/lfs/NAME usable: with udevd running wait (bounded) for its
 * symlink to disk, otherwise create it. Returns 0 or -ETIMEDOUT.
 */
int lfsvol_dev_link_wait(const char *name, const char *disk, int timeout_ms);
/* Wait (bounded) for udev to remove /dev/lfs/NAME; drop it if it stays. */
void lfsvol_dev_link_drop(const char *name, const char *disk);

#endif /* LFSVOL_DEVICE_H */
