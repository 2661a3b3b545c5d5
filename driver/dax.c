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

/*
 * The fabric holding the shelf's page *pgoff, which becomes the page of the
 * fabric's dax_device; *nr_pages is clamped at the book's end. *page is the
 * page counted from the fabric's first book, for lfs_bad_first().
 */
static struct lfs_fabric *lfs_dax_pgoff(struct lfs_shelf *shelf,
					pgoff_t *pgoff, long *nr_pages,
					u64 *page)
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
	*page = ((u64)ext->book << shift) + within;
	*pgoff = fabric->dax_pgoff + *page;
	rcu_read_unlock();

	/* at most 2 MiB: a DAX filesystem's copy asks again (FENCING.md) */
	if (nr_pages)
		*nr_pages = min3(*nr_pages, (1L << shift) - (long)within,
				 (long)(SZ_2M >> PAGE_SHIFT));
	return fabric;
}

/*
 * How many of the nr pages from the fabric's page are not bad, as pmem
 * refuses a range holding bad blocks: the pages before the first bad one.
 */
static long lfs_dax_good(struct lfs_fabric *fabric, u64 page, long nr)
{
	if (likely(!lfs_fabric_has_bad(fabric)))
		return nr;
	return lfs_bad_first(fabric, page, nr) - page;
}

static long lfs_dax_direct_access(struct dax_device *dax_dev, pgoff_t pgoff,
				  long nr_pages, enum dax_access_mode mode,
				  void **kaddr, lfs_dax_pfn_t *pfn)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct lfs_fabric *fabric;
	u64 page;
	long good;

	/* before the fence has killed this device: the lease ran out */
	if (unlikely(lfs_shelf_fenced(shelf)))
		return -EIO;
	fabric = lfs_dax_pgoff(shelf, &pgoff, &nr_pages, &page);
	if (!fabric)
		return -ERANGE;
	/* a bad page is refused in every mode: its writes do not clear it */
	good = lfs_dax_good(fabric, page, nr_pages);
	if (!good && nr_pages)
		return -EIO;
	return dax_direct_access(fabric->dax_dev, pgoff, good, mode, kaddr, pfn);
}

static int lfs_dax_zero_page_range(struct dax_device *dax_dev, pgoff_t pgoff,
				   size_t nr_pages)
{
	struct lfs_shelf *shelf = dax_get_private(dax_dev);
	struct lfs_fabric *fabric;
	pgoff_t lower_pgoff;
	u64 page;
	long n;
	int ret;

	if (unlikely(lfs_shelf_fenced(shelf)))
		return -EIO;
	while (nr_pages) {
		lower_pgoff = pgoff;
		n = min_t(size_t, nr_pages, LONG_MAX);
		fabric = lfs_dax_pgoff(shelf, &lower_pgoff, &n, &page);
		if (!fabric)
			return -ERANGE;
		if (lfs_dax_good(fabric, page, n) < n)
			return -EIO;
		ret = dax_zero_page_range(fabric->dax_dev, lower_pgoff, n);
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
	struct lfs_fabric *fabric;
	u64 page;
	long n;

	if (unlikely(lfs_shelf_fenced(shelf)))
		return 0;
	fabric = lfs_dax_pgoff(shelf, &pgoff, NULL, &page);
	n = DIV_ROUND_UP(offset_in_page(addr) + bytes, PAGE_SIZE);
	if (!fabric || lfs_dax_good(fabric, page, n) < n)
		return 0;
	return dax_recovery_write(fabric->dax_dev, pgoff, addr, bytes, iter);
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
		sync &= lfs_fabric_sync(shelf->flush[i]);
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
