// SPDX-License-Identifier: GPL-2.0
/*
 * A device-DAX that no driver has, mapped by the module itself: the way to
 * device-DAX memory on kernels without fsdev_dax (6.1, 6.12), and on any
 * kernel for a device left unbound. The dax bus's own structures are private
 * to drivers/dax, so the device's range is read where userspace (daxctl)
 * reads it, its sysfs directory (/sys/dev/char/MAJ:MIN: subsystem dax, no
 * driver, one range: resource and size). The module then claims the range
 * in the iomem tree, which keeps device_dax and kmem from binding it while
 * it is attached, maps it as fs-dax pages (memremap_pages(),
 * MEMORY_DEVICE_FS_DAX, as pmem does for fsdax) and serves it through a
 * dax_device of its own, whose memory failures reach bad.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dax.h>
#include <linux/fs.h>
#include <linux/ioport.h>
#include <linux/kdev_t.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/pfn.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "lfs.h"

/* Does /sys/dev/char/MAJ:MIN/@name exist? */
static bool lfs_devmap_has(dev_t devt, const char *name, struct path *out)
{
	char buf[64];
	struct path p;

	snprintf(buf, sizeof(buf), "/sys/dev/char/%u:%u/%s", MAJOR(devt),
		 MINOR(devt), name);
	if (kern_path(buf, LOOKUP_FOLLOW, &p))
		return false;
	if (out)
		*out = p;
	else
		path_put(&p);
	return true;
}

/* A number in /sys/dev/char/MAJ:MIN/@name (decimal or 0x hex). */
static int lfs_devmap_read(dev_t devt, const char *name, u64 *val)
{
	char path[64], buf[32];
	struct file *file;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/%s", MAJOR(devt),
		 MINOR(devt), name);
	file = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	n = kernel_read(file, buf, sizeof(buf) - 1, &pos);
	fput(file);
	if (n < 0)
		return n;
	buf[n] = 0;
	return kstrtou64(strim(buf), 0, val);
}

/* Is the character device a dax bus device? */
bool lfs_devmap_on_dax_bus(dev_t devt)
{
	struct path sub, bus;
	bool same;

	if (!lfs_devmap_has(devt, "subsystem", &sub))
		return false;
	if (kern_path("/sys/bus/dax", LOOKUP_FOLLOW, &bus)) {
		path_put(&sub);
		return false;
	}
	same = path_equal(&sub, &bus);
	path_put(&sub);
	path_put(&bus);
	return same;
}

/* A dax bus device that no driver has: the module may map it. */
bool lfs_devmap_unbound(dev_t devt)
{
	return lfs_devmap_on_dax_bus(devt) &&
	       !lfs_devmap_has(devt, "driver", NULL);
}

static long lfs_devmap_direct_access(struct dax_device *dax_dev,
				     pgoff_t pgoff, long nr_pages,
				     enum dax_access_mode mode, void **kaddr,
				     lfs_dax_pfn_t *pfn)
{
	struct lfs_fabric *fabric = dax_get_private(dax_dev);
	u64 off = (u64)pgoff << PAGE_SHIFT;

	if (off >= fabric->dev_size)
		return -ERANGE;
	if (kaddr)
		*kaddr = fabric->map_vaddr + off;
	if (pfn)
		*pfn = lfs_phys_pfn(fabric->map_start + off);
	return min_t(long, nr_pages, (fabric->dev_size - off) >> PAGE_SHIFT);
}

static int lfs_devmap_zero_page_range(struct dax_device *dax_dev,
				      pgoff_t pgoff, size_t nr_pages)
{
	struct lfs_fabric *fabric = dax_get_private(dax_dev);

	return lfs_devdax_zero(fabric, (u64)pgoff << PAGE_SHIFT,
			       (u64)nr_pages << PAGE_SHIFT);
}

static size_t lfs_devmap_recovery_write(struct dax_device *dax_dev,
					pgoff_t pgoff, void *addr, size_t bytes,
					struct iov_iter *iter)
{
	return _copy_from_iter_flushcache(addr, bytes, iter);
}

static const struct dax_operations lfs_devmap_ops = {
	.direct_access = lfs_devmap_direct_access,
	.zero_page_range = lfs_devmap_zero_page_range,
	.recovery_write = lfs_devmap_recovery_write,
};

/* The page map's memory failure: bad.c records it for the fabric. */
static int lfs_devmap_memory_failure(struct dev_pagemap *pgmap,
				     unsigned long pfn, unsigned long nr_pages,
				     int mf_flags)
{
	struct lfs_fabric *fabric = pgmap->owner;

	lfs_bad_notify(fabric, PFN_PHYS(pfn) - fabric->map_start,
		       (u64)nr_pages << PAGE_SHIFT);
	return -EOPNOTSUPP; /* the kernel's generic handling goes on */
}

static const struct dev_pagemap_ops lfs_devmap_pgmap_ops = {
	.memory_failure = lfs_devmap_memory_failure,
};

/* The range's pages and the dax_device over them; 0 or an error. */
static int lfs_devmap_map(struct lfs_fabric *fabric)
{
	struct dev_pagemap *pgmap;
	void *vaddr;

	pgmap = kzalloc(sizeof(*pgmap), GFP_KERNEL);
	if (!pgmap)
		return -ENOMEM;
	pgmap->type = MEMORY_DEVICE_FS_DAX;
	pgmap->range.start = fabric->map_start;
	pgmap->range.end = fabric->map_start + fabric->dev_size - 1;
	pgmap->nr_range = 1;
	pgmap->ops = &lfs_devmap_pgmap_ops;
	pgmap->owner = fabric;
	vaddr = memremap_pages(pgmap, NUMA_NO_NODE);
	if (IS_ERR(vaddr)) {
		kfree(pgmap);
		return PTR_ERR(vaddr);
	}
	fabric->map_vaddr = vaddr;
	fabric->pgmap = pgmap;
	fabric->dax_dev = alloc_dax(fabric, &lfs_devmap_ops);
	if (IS_ERR(fabric->dax_dev)) {
		int ret = PTR_ERR(fabric->dax_dev);

		fabric->dax_dev = NULL;
		memunmap_pages(pgmap);
		kfree(pgmap);
		fabric->pgmap = NULL;
		return ret;
	}
	set_dax_nocache(fabric->dax_dev);
	set_dax_nomc(fabric->dax_dev);
	return 0;
}

/*
 * Open the unbound device-DAX @devt (at @path) as @fabric's device: its
 * range claimed, mapped, and a dax_device over it.
 */
int lfs_devmap_open(struct lfs_fabric *fabric, const char *path, dev_t devt,
		    struct netlink_ext_ack *extack)
{
	u64 start, size;
	int ret;

	if (lfs_devmap_has(devt, "mapping1", NULL)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' has several ranges: give it one (daxctl)",
				   path);
		return -EINVAL;
	}
	ret = lfs_devmap_read(devt, "resource", &start);
	if (!ret)
		ret = lfs_devmap_read(devt, "size", &size);
	if (ret || !size || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(size)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "cannot read the range of '%s' from sysfs (error %d)",
				   path, ret);
		return ret ? ret : -EINVAL;
	}
	fabric->map_res = request_mem_region(start, size, "lfs");
	if (!fabric->map_res) {
		NL_SET_ERR_MSG_FMT(extack,
				   "the memory of '%s' is in use (a driver bound it meanwhile?)",
				   path);
		return -EBUSY;
	}
	fabric->map_start = start;
	fabric->dev_size = size;
	fabric->devt = devt;
	ret = lfs_devmap_map(fabric);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack, "mapping '%s' failed (error %d)",
				   path, ret);
		release_mem_region(start, size);
		fabric->map_res = NULL;
		return ret;
	}
	return 0;
}

void lfs_devmap_close(struct lfs_fabric *fabric)
{
	kill_dax(fabric->dax_dev);
	put_dax(fabric->dax_dev);
	memunmap_pages(fabric->pgmap);
	kfree(fabric->pgmap);
	release_mem_region(fabric->map_start, fabric->dev_size);
}
