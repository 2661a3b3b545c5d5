// SPDX-License-Identifier: GPL-2.0
/*
 * Device-DAX fabrics (/dev/daxX.Y): memory with no block device, a volatile
 * CXL RAM region or a pmem namespace in devdax mode (docs/CXL.md). One no
 * driver has is mapped by the module itself (devdax_map.c). From 7.x
 * the kernel's fsdev_dax driver (drivers/dax/fsdev.c, made for famfs) gives
 * such a device dax_operations over ZONE_DEVICE pages fit for fs-dax. The
 * module opens the character device, checks that fsdev_dax serves it, and
 * becomes the holder of its dax_device (fs_dax_get()), as it is of a pmem
 * disk's: memory failures reach bad.c, and nothing else (famfs) can take it.
 * Labels, zeroing and every bio of a shelf then go through the memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dax.h>
#include <linux/fs.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pfn.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/uio.h>

#include "lfs.h"

#define LFS_DEVDAX_DRIVER "fsdev_dax"

/*
 * Does @path name a device-DAX (a character device of the dax bus)? Its
 * number in *devt. Any other character device is no fabric: attach says it
 * is not a block device, as before device-DAX fabrics.
 */
bool lfs_devdax_path(const char *path, dev_t *devt)
{
	struct path p;
	bool chr;

	if (kern_path(path, LOOKUP_FOLLOW, &p))
		return false;
	chr = S_ISCHR(d_inode(p.dentry)->i_mode);
	*devt = d_inode(p.dentry)->i_rdev;
	path_put(&p);
	return chr && lfs_devmap_on_dax_bus(*devt);
}

/*
 * The pages from the device's first one that one dax_direct_access() maps:
 * its first range (a device of several ranges is used up to the end of the
 * first). fsdev_dax refuses a request past a range's end, so the largest
 * count it grants is found by doubling, then by halving the gap.
 */
static long lfs_devdax_pages(struct dax_device *dax_dev, void **kaddr,
			     unsigned long *pfn)
{
	long lo = 0, hi = 1, mid;
	lfs_dax_pfn_t p;
	int id;

	id = dax_read_lock();
	while (hi <= LFS_DEVDAX_PAGES_MAX &&
	       dax_direct_access(dax_dev, 0, hi, DAX_ACCESS, kaddr, &p) >= hi) {
		lo = hi;
		hi <<= 1;
	}
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (dax_direct_access(dax_dev, 0, mid, DAX_ACCESS, kaddr, &p) >=
		    mid)
			lo = mid;
		else
			hi = mid;
	}
	if (lo && dax_direct_access(dax_dev, 0, lo, DAX_ACCESS, kaddr, &p) < lo)
		lo = 0;
	if (lo)
		*pfn = lfs_pfn_val(p);
	dax_read_unlock(id);
	return lo;
}

#ifdef LFS_HAVE_FS_DAX_GET
/* Is the open character device served by fsdev_dax right now? */
static bool lfs_devdax_fsdev(struct file *file)
{
	struct module *owner = file->f_op->owner;

	return S_ISCHR(file_inode(file)->i_mode) && owner &&
	       !strcmp(owner->name, LFS_DEVDAX_DRIVER);
}

/* The open device's dax_device, held by the fabric; 0 or an error. */
static int lfs_devdax_hold(struct lfs_fabric *fabric, struct file *file,
			   const char *path, struct netlink_ext_ack *extack)
{
	int ret;

	if (!lfs_devdax_fsdev(file)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is not a device-DAX of fsdev_dax nor unbound",
				   path);
		return -ENODEV;
	}
	/*
	 * The device number is a live dax device's (fsdev_dax serves the open
	 * file): dax_dev_get() finds it, it does not make one up.
	 */
	fabric->dax_dev = dax_dev_get(file_inode(file)->i_rdev);
	if (!fabric->dax_dev)
		return -ENODEV;
	ret = fs_dax_get(fabric->dax_dev, fabric, &lfs_fabric_dax_hops);
	put_dax(fabric->dax_dev); /* fs_dax_get() holds its own reference */
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is in use: its DAX device has another holder (error %d)",
				   path, ret);
		fabric->dax_dev = NULL;
	}
	return ret;
}
#else
static int lfs_devdax_hold(struct lfs_fabric *fabric, struct file *file,
			   const char *path, struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG_FMT(extack,
			   "'%s' is not a device-DAX that no driver has (unbind it)",
			   path);
	return -ENODEV;
}
#endif

/* Through fsdev_dax, which serves the open @file (7.x); 0 or an error. */
static int lfs_devdax_open_fsdev(struct lfs_fabric *fabric, const char *path,
				 struct netlink_ext_ack *extack)
{
	unsigned long pfn = 0;
	struct file *file;
	void *kaddr;
	long pages;
	int ret;

	file = filp_open(path, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		NL_SET_ERR_MSG_FMT(extack, "cannot open '%s' (error %ld)", path,
				   PTR_ERR(file));
		return PTR_ERR(file);
	}
	ret = lfs_devdax_hold(fabric, file, path, extack);
	if (ret)
		goto out_close;
	pages = lfs_devdax_pages(fabric->dax_dev, &kaddr, &pfn);
	if (pages <= 0) {
		NL_SET_ERR_MSG_FMT(extack, "'%s' maps no memory", path);
		ret = -ENXIO;
		goto out_put;
	}
	fabric->dax_file = file;
	fabric->devt = file_inode(file)->i_rdev;
	fabric->dev_size = (u64)pages << PAGE_SHIFT;
	fabric->map_start = PFN_PHYS(pfn);
	return 0;

out_put:
	fs_put_dax(fabric->dax_dev, fabric);
	fabric->dax_dev = NULL;
out_close:
	fput(file);
	return ret;
}

/*
 * Open the device-DAX at @path as @fabric's device: mapped by the module if
 * no driver has it (devdax_map.c), else through fsdev_dax. Then whether the
 * memory is persistent, which only a range the platform describes as
 * persistent memory is (an NVDIMM namespace in devdax mode); a CXL RAM
 * region, or anything unknown, is not.
 */
int lfs_devdax_open(struct lfs_fabric *fabric, const char *path,
		    struct netlink_ext_ack *extack)
{
	unsigned long pfn;
	dev_t devt;
	int ret;

	if (lfs_devdax_path(path, &devt) && lfs_devmap_unbound(devt))
		ret = lfs_devmap_open(fabric, path, devt, extack);
	else
		ret = lfs_devdax_open_fsdev(fabric, path, extack);
	if (ret)
		return ret;
	pfn = PHYS_PFN(fabric->map_start);
	fabric->volatile_mem =
		region_intersects(fabric->map_start, fabric->dev_size,
				  IORESOURCE_MEM,
				  IORES_DESC_PERSISTENT_MEMORY) !=
		REGION_INTERSECTS;
	fabric->numa_node =
		pfn_valid(pfn) ? page_to_nid(pfn_to_page(pfn)) : NUMA_NO_NODE;
	return 0;
}

void lfs_devdax_close(struct lfs_fabric *fabric)
{
	if (fabric->pgmap) {
		lfs_devmap_close(fabric);
		return;
	}
	fs_put_dax(fabric->dax_dev, fabric);
	fput(fabric->dax_file);
}

/*
 * fsdev_dax is being unbound (MF_MEM_PRE_REMOVE, before its kill_dax() and
 * before its memory is unmapped): as lfs_fabric_dead() for a pmem disk, no
 * copy uses the fabric's mapping from now on; bad.c then waits for those
 * under way (lfs_copy_wait()). Inside rcu_read_lock().
 */
void lfs_devdax_dead(struct lfs_fabric *fabric)
{
	WRITE_ONCE(fabric->dead, true);
	pr_warn("%s: device-DAX unbound under interleave group %u: I/O to its books fails\n",
		fabric->path, fabric->ig);
}

/* Bytes [off, off + len) of the device, within one mapping of its pages. */
int lfs_devdax_rw(struct lfs_fabric *fabric, u64 off, void *buf, size_t len,
		  bool write)
{
	long nr = DIV_ROUND_UP(offset_in_page(off) + len, PAGE_SIZE);
	void *kaddr;
	int id, ret = 0;

	id = dax_read_lock();
	if (dax_direct_access(fabric->dax_dev, off >> PAGE_SHIFT, nr,
			      DAX_ACCESS, &kaddr, NULL) < nr)
		ret = -EIO;
	else if (write)
		memcpy_flushcache(kaddr + offset_in_page(off), buf, len);
	else if (copy_mc_to_kernel(buf, kaddr + offset_in_page(off), len))
		ret = -EIO;
	dax_read_unlock(id);
	if (write)
		wmb(); /* the non-temporal stores are done before we say so */
	return ret;
}

/* Zero bytes [off, off + len) of the device, both page aligned. */
int lfs_devdax_zero(struct lfs_fabric *fabric, u64 off, u64 len)
{
	const void *zero = page_address(ZERO_PAGE(0));
	long nr, i, chunk = SZ_2M >> PAGE_SHIFT;
	pgoff_t pgoff = off >> PAGE_SHIFT;
	long left = len >> PAGE_SHIFT;
	void *kaddr;
	int id, ret = 0;

	while (left && !ret) {
		nr = min(left, chunk);
		id = dax_read_lock();
		if (dax_direct_access(fabric->dax_dev, pgoff, nr, DAX_ACCESS,
				      &kaddr, NULL) < nr)
			ret = -EIO;
		for (i = 0; !ret && i < nr; i++)
			memcpy_flushcache(kaddr + (i << PAGE_SHIFT), zero,
					  PAGE_SIZE);
		dax_read_unlock(id);
		pgoff += nr;
		left -= nr;
		cond_resched();
	}
	wmb(); /* the non-temporal stores are done before we say so */
	return ret;
}
