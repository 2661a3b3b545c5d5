// SPDX-License-Identifier: GPL-2.0
/* lfs.ko as lfsvol uses it (kernel.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kernel.h"
#include "msg.h"

/* A session that did not open, reported (exit code 5): r from lfs_client_open(). */
static int drv_open_fail(int r)
{
	if (r == -ENOENT)
		return lfsvol_fail(
			LFSVOL_EDRIVER, r,
			"the lfs kernel module is not loaded (no generic netlink family `lfs'); run `modprobe lfs'");
	if (r == -EPROTONOSUPPORT)
		return lfsvol_fail(
			LFSVOL_EDRIVER, r,
			"%s: the loaded lfs.ko is another version than this lfsvol (reload it when no shelf is active: `rmmod lfs; modprobe lfs')",
			lfs_client_open_error());
	return lfsvol_fail(LFSVOL_EDRIVER, r, "cannot talk to the lfs kernel module: %s",
			   strerror(-r));
}

int lfsvol_drv_open(struct lfs_client **out)
{
	int r = lfs_client_open(out);

	lfsvol_trace("netlink session: %d", r);
	return r ? drv_open_fail(r) : 0;
}

int lfsvol_drv_fail(struct lfs_client *c, int err, const char *what)
{
	const char *m = c ? lfs_client_error(c) : NULL;
	enum lfsvol_exit code = LFSVOL_EDRIVER;

	if (err == -EPERM)
		code = LFSVOL_EPERM;
	else if (err == -EBUSY)
		code = LFSVOL_EREFUSED;
	return lfsvol_fail(code, err, "%s: kernel reports: %s", what, m && *m ? m : strerror(-err));
}

int lfsvol_need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	return lfsvol_fail(LFSVOL_EPERM, -EPERM,
			   "%s needs root (CAP_SYS_ADMIN to configure lfs.ko); run it with sudo",
			   what);
}

int lfsvol_kernel_shelves(struct lfs_client **drv, const char *name, struct lfs_shelf_info **v,
			  size_t *n, bool must_know)
{
	int r = lfs_client_open(drv);

	*v = NULL;
	*n = 0;
	if (r) {
		*drv = NULL;
		/* not loaded: nothing is active here; loaded but mute: unknown */
		return r == -ENOENT || !must_know ? 0 : drv_open_fail(r);
	}
	r = lfsnl_shelf_list(*drv, name, v, n);
	if (r == -ENOENT && name)
		return 0; /* none of that name active here */
	if (r && must_know)
		return lfsvol_drv_fail(*drv, r, "listing the shelves active on this node");
	return 0;
}

struct lfs_shelf_info *lfsvol_find_active(struct lfs_shelf_info *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* The config's process_priority; returns the previous nice value, INT_MIN if unchanged. */
static int priority_raise(const struct lfsvol_conf *conf)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, 0);
	if (errno || !conf || conf->process_priority >= old)
		return INT_MIN;
	/* not root, or no CAP_SYS_NICE: the kernel says no, nothing else changes */
	if (setpriority(PRIO_PROCESS, 0, conf->process_priority))
		return INT_MIN;
	lfsvol_trace("nice %d (was %d)", conf->process_priority, old);
	return old;
}

static void priority_restore(int old)
{
	if (old != INT_MIN)
		setpriority(PRIO_PROCESS, 0, old);
}

int lfsvol_kernel_create(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name,
			 const uint8_t *uuid, unsigned int flags, const struct lfs_book *books,
			 size_t n, char *disk, size_t disklen)
{
	struct lfs_shelf_info info = { 0 };
	int prio = priority_raise(conf), r;

	r = lfsnl_shelf_create_flags(drv, name, uuid, flags, books, n, &info);
	priority_restore(prio);
	lfsvol_trace("kernel shelf create: %d", r);
	if (!r)
		snprintf(disk, disklen, "%s", info.disk);
	return r;
}

int lfsvol_kernel_remove(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name)
{
	int prio = priority_raise(conf), r;

	r = lfsnl_shelf_remove(drv, name);
	priority_restore(prio);
	lfsvol_trace("kernel shelf remove: %d", r);
	return r;
}

uint32_t lfsvol_lease_ms(long long lease_time)
{
	long long ms = lease_time * 1000;

	if (ms < LFS_LEASE_MS_MIN)
		return LFS_LEASE_MS_MIN;
	return ms > LFS_LEASE_MS_MAX ? LFS_LEASE_MS_MAX : (uint32_t)ms;
}

int lfsvol_lease_renew(const struct lfsvol_conf *conf, struct lfs_client *drv, uint64_t sent_ns,
		       uint32_t lease_ms)
{
	int r = lfsnl_lease_renew(drv, sent_ns, lease_ms, conf->fence_action);

	lfsvol_trace("kernel lease renewed (sent %.3f s ago, %u ms): %d",
		     (double)(lfs_boottime_ns() - sent_ns) / 1e9, lease_ms, r);
	return r;
}

int lfsvol_lease_usable(struct lfs_client *drv, const char *what)
{
	struct lfs_lease_info l;
	int r = lfsnl_lease_get(drv, &l);

	if (r)
		return lfsvol_drv_fail(drv, r, "reading the node's lease");
	if (!l.lease_ms || l.left_ms > 0)
		return 0;
	return lfsvol_fail(
		LFSVOL_EREFUSED, -ENOLCK,
		"%s: this node's lease expired %lld.%03lld s ago and its leased shelves are fenced; no activation until the node agent renews the lease (is `%s agent' running and reaching the librarian? see `%s status')",
		what, (long long)-l.left_ms / 1000, (long long)-l.left_ms % 1000, lfsvol_prog,
		lfsvol_prog);
}
