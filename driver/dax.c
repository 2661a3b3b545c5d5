// SPDX-License-Identifier: GPL-2.0
/*
 * A shelf's dax_device: the dax_operations, which translate a shelf page
 * offset to its book's fabric dax_device exactly like drivers/md/dm-linear.c
 * does for a target, and the device's setup and teardown.
 */
#include <linux/dax.h>
#include <linux/sizes.h>
#include <linux/uio.h>

#include "lfs.h"

static struct dax_device *lfs_dax_pgoff(struct lfs_shelf *shelf, pgoff_t *pgoff,
					long *nr_pages)
{
	unsigned int shift = shelf->book_shift - PAGE_SHIFT;
	pgoff_t within = *pgoff & ((1UL << shift) - 1);
	u64 index = *pgoff >> shift;
	const struct lfs_extent *ext;
	struct lfs_fabric *fabric;
	struct lfs_map *map;

	rcu_read_lock();
	map = rcu_dereference(shelf->map);
	if (index >= map->nr_books) {
		rcu_read_unlock();
		return NULL;
	}
	ext = &map->books[index];
	fabric = ext->fabric;
	*pgoff = fabric->dax_pgoff + ((pgoff_t)ext->book << shift) + within;
	rcu_read_unlock();

	/* at most 2 MiB: a DAX filesystem's copy asks again (FENCING.md) */
	if (nr_pages)
		*nr_pages = min3(*nr_pages, (1L << shift) - (long)within,
				 (long)(SZ_2M >> PAGE_SHIFT));
	return fabric->dax_dev;
}

static long lfs_dax_direct_access(struct dax_device *dax_dev, pgoff_t pgoff,
				  long nr_pages, enum dax_access_mode mode,
				  void **kaddr, lfs_dax_pfn_t *pfn)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct dax_device *lower;

	/* before the fence has killed this device: the lease ran out */
	if (unlikely(lfs_shelf_fenced(shelf)))
		return -EIO;
	lower = lfs_dax_pgoff(shelf, &pgoff, &nr_pages);
	if (!lower)
		return -ERANGE;
	return dax_direct_access(lower, pgoff, nr_pages, mode, kaddr, pfn);
}

static int lfs_dax_zero_page_range(struct dax_device *dax_dev, pgoff_t pgoff,
				   size_t nr_pages)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct dax_device *lower;
	pgoff_t lower_pgoff;
	long n;
	int ret;

	if (unlikely(lfs_shelf_fenced(shelf)))
		return -EIO;
	while (nr_pages) {
		lower_pgoff = pgoff;
		n = min_t(size_t, nr_pages, LONG_MAX);
		lower = lfs_dax_pgoff(shelf, &lower_pgoff, &n);
		if (!lower)
			return -ERANGE;
		ret = dax_zero_page_range(lower, lower_pgoff, n);
		if (ret)
			return ret;
		pgoff += n;
		nr_pages -= n;
	}
	return 0;
}

static size_t lfs_dax_recovery_write(struct dax_device *dax_dev, pgoff_t pgoff,
				     void *addr, size_t bytes,
				     struct iov_iter *iter)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct dax_device *lower;

	if (unlikely(lfs_shelf_fenced(shelf)))
		return 0;
	lower = lfs_dax_pgoff(shelf, &pgoff, NULL);
	if (!lower)
		return 0;
	return dax_recovery_write(lower, pgoff, addr, bytes, iter);
}

static const struct dax_operations lfs_dax_ops = {
	.direct_access = lfs_dax_direct_access,
	.zero_page_range = lfs_dax_zero_page_range,
	.recovery_write = lfs_dax_recovery_write,
};

/* Every fabric device of the shelf has DAX. */
bool lfs_dax_capable(struct lfs_shelf *shelf)
{
	unsigned int i;

	for (i = 0; i < shelf->nr_flush; i++)
		if (!shelf->flush[i]->dax_dev)
			return false;
	return true;
}

/*
 * Before device_add_disk(), in pmem's order. Only if every fabric device of
 * the shelf has DAX (the queue then has the DAX flag, lfs_alloc_disk());
 * synchronous (MAP_SYNC allowed) only if every one is.
 */
int lfs_dax_add(struct lfs_shelf *shelf, struct gendisk *disk)
{
	struct dax_device *dax_dev;
	bool sync = true, wc = false;
	unsigned int i;
	int ret;

	if (!lfs_dax_capable(shelf))
		return 0;
	for (i = 0; i < shelf->nr_flush; i++) {
		sync &= dax_synchronous(shelf->flush[i]->dax_dev);
		wc |= dax_write_cache_enabled(shelf->flush[i]->dax_dev);
	}
	dax_dev = alloc_dax(shelf, &lfs_dax_ops);
	if (IS_ERR(dax_dev))
		return PTR_ERR(dax_dev);
	set_dax_nocache(dax_dev);
	set_dax_nomc(dax_dev);
	if (sync)
		set_dax_synchronous(dax_dev);
	ret = dax_add_host(dax_dev, disk);
	if (ret) {
		kill_dax(dax_dev);
		put_dax(dax_dev);
		return ret;
	}
	dax_write_cache(dax_dev, wc);
	shelf->dax_dev = dax_dev;
	return 0;
}

void lfs_dax_remove(struct lfs_shelf *shelf)
{
	if (!shelf->dax_dev)
		return;
	dax_remove_host(shelf->disk);
	kill_dax(shelf->dax_dev);
	put_dax(shelf->dax_dev);
	shelf->dax_dev = NULL;
}
