// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/lfs/NAME: udev makes it from 60-lfs.rules; lfsvol waits for it (as
 * LVM's udev_sync does), or makes it itself when no udevd runs.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "msg.h"

#define LINK_DROP_TIMEOUT_MS 5000 /* udev removing /dev/lfs/NAME */

bool lfsvol_udev_running(void)
{
	return access("/run/udev/control", F_OK) == 0;
}

static bool link_points_to(const char *link, const char *disk)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	const char *base;

	if (n < 0)
		return false;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	return !strcmp(base ? base + 1 : buf, disk);
}

/* inotify on /dev/lfs (udev makes and removes its links by rename and unlink), or -1. */
static int watch_dev_lfs(void)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (fd >= 0 && inotify_add_watch(fd, "/dev/lfs",
					 IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Wait until the link points to disk (want) or not, or until end (ms,
 * monotonic). inotify wakes us at once; the timed wake-up (50 ms) covers a
 * directory that does not exist yet, and without inotify the link is
 * checked every 2 ms.
 */
static bool link_wait(const char *link, const char *disk, bool want, int64_t end)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int fd = watch_dev_lfs();
	bool ok;

	for (;;) {
		int64_t left = end - lfsvol_now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };

		ok = link_points_to(link, disk) == want;
		if (ok || left <= 0)
			break;
		if (fd < 0) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(&p, 1, left < 50 ? (int)left : 50) > 0)
			while (read(fd, buf, sizeof(buf)) > 0)
				;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int lfsvol_dev_link_wait(const char *name, const char *disk, int timeout_ms)
{
	char link[PATH_MAX], target[64];

	snprintf(link, sizeof(link), "/dev/lfs/%s", name);
	if (!lfsvol_udev_running()) {
		/* no udev: make the name ourselves, as lvm does with udev_sync off */
		snprintf(target, sizeof(target), "../%s", disk);
		mkdir("/dev/lfs", 0755);
		unlink(link);
		if (symlink(target, link))
			return -errno;
		return 0;
	}
	return link_wait(link, disk, true, lfsvol_now_ms() + timeout_ms) ? 0 : -ETIMEDOUT;
}

void lfsvol_dev_link_drop(const char *name, const char *disk)
{
	char link[PATH_MAX];

	snprintf(link, sizeof(link), "/dev/lfs/%s", name);
	/*
	 * With udev, the name goes when udev has handled the disk's remove
	 * event: wait for that (as lvm's udev_sync does), so that the name is
	 * gone when deactivate returns. Should udev not get to it in time, the
	 * stale name is dropped here.
	 */
	if (lfsvol_udev_running())
		link_wait(link, disk, false, lfsvol_now_ms() + LINK_DROP_TIMEOUT_MS);
	if (link_points_to(link, disk))
		unlink(link);
}
