// SPDX-License-Identifier: GPL-2.0
/*
 * Poison: the bad ranges of a fabric device. The module is the holder of each
 * fabric's dax_device (fs_dax_get_by_bdev() with lfs_fabric_dax_hops), so the
 * kernel's memory failure handling tells it a poisoned range, as it tells
 * fs/xfs/xfs_notify_failure.c; the bad blocks the device reports at attach
 * count the same. Emulated memory is not really poisoned (reads after a
 * hwpoison injection return the old bytes, and pmem's badblocks stay empty),
 * nor does real memory always fail each later access, so the module itself
 * remembers: every path to the books asks lfs_bad_first() and fails at a bad
 * page (docs/CXL.md "Poison").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/badblocks.h>
#include <linux/mm.h>

#include "lfs.h"

/*
 * Pages [start, end) of the fabric, counted from its first book, under
 * bad_lock. False if they were bad already. A full list grows its last entry
 * to cover them: more pages fail, never fewer. A reader may see one bound
 * grown and not the other, a range between the old one and the new.
 */
static bool lfs_bad_add_locked(struct lfs_fabric *fabric, u64 start, u64 end)
{
	unsigned int i, n = fabric->nr_bad;
	struct lfs_bad *bad;

	for (i = 0; i < n; i++)
		if (start >= fabric->bad[i].start && end <= fabric->bad[i].end)
			return false;
	if (n < LFS_BAD_MAX) {
		fabric->bad[n].start = start;
		fabric->bad[n].end = end;
		/* Pairs with the readers' acquire: the entry before the count. */
		smp_store_release(&fabric->nr_bad, n + 1);
		return true;
	}
	bad = &fabric->bad[n - 1];
	pr_warn("interleave group %u (%s): more than %u bad ranges, the last grows to pages %llu-%llu\n",
		fabric->ig, fabric->path, LFS_BAD_MAX,
		min(start, bad->start), max(end, bad->end) - 1);
	if (start < bad->start)
		WRITE_ONCE(bad->start, start);
	if (end > bad->end)
		WRITE_ONCE(bad->end, end);
	return true;
}

/*
 * Bytes [off, off + len) of the fabric's block device, clipped to its books,
 * in *start and *end (pages from the first book). False if nothing of it is
 * in a book (logged: a bad label area is found by the next attach).
 */
static bool lfs_bad_pages(struct lfs_fabric *fabric, u64 off, u64 len,
			  u64 *start, u64 *end)
{
	u64 pages = (u64)fabric->nr_books << (fabric->book_shift - PAGE_SHIFT);
	u64 last = len > U64_MAX - off ? U64_MAX : off + len;

	if (!len || last <= fabric->offset ||
	    off - min(off, fabric->offset) >= pages << PAGE_SHIFT) {
		pr_warn("interleave group %u (%s): bytes %llu-%llu of the device are bad, outside its books\n",
			fabric->ig, fabric->path, off, last - 1);
		return false;
	}
	*start = (max(off, fabric->offset) - fabric->offset) >> PAGE_SHIFT;
	*end = min(DIV_ROUND_UP_ULL(last - fabric->offset, PAGE_SIZE), pages);
	return true;
}

static bool lfs_bad_add(struct lfs_fabric *fabric, u64 start, u64 end)
{
	unsigned long flags;
	bool added;

	spin_lock_irqsave(&fabric->bad_lock, flags);
	added = lfs_bad_add_locked(fabric, start, end);
	spin_unlock_irqrestore(&fabric->bad_lock, flags);
	return added;
}

/* The first bad page of pages [page, page + nr), or page + nr if none. */
u64 lfs_bad_first(const struct lfs_fabric *fabric, u64 page, u64 nr)
{
	u64 first = page + nr, start, end;
	unsigned int i, n;

	/* Pairs with lfs_bad_add_locked(): entries below n are written. */
	n = smp_load_acquire(&fabric->nr_bad);

	for (i = 0; i < n; i++) {
		start = READ_ONCE(fabric->bad[i].start);
		end = READ_ONCE(fabric->bad[i].end);
		if (start < first && end > page)
			first = max(start, page);
	}
	return first;
}

static void lfs_bad_range(const struct lfs_fabric *fabric,
			  const struct lfs_bad *bad, struct lfs_bad_range *out)
{
	unsigned int shift = fabric->book_shift - PAGE_SHIFT;
	u64 start = READ_ONCE(bad->start), end = READ_ONCE(bad->end);

	out->book = start >> shift;
	out->pad = 0;
	out->offset = (start & ((1ULL << shift) - 1)) << PAGE_SHIFT;
	out->length = (end - start) << PAGE_SHIFT;
}

/* The fabric's bad ranges as userspace sees them, at most max. */
unsigned int lfs_bad_get(const struct lfs_fabric *fabric,
			 struct lfs_bad_range *out, unsigned int max)
{
	unsigned int i, n;

	/* Pairs with lfs_bad_add_locked(): entries below n are written. */
	n = min(smp_load_acquire(&fabric->nr_bad), max);

	for (i = 0; i < n; i++)
		lfs_bad_range(fabric, &fabric->bad[i], &out[i]);
	return n;
}

/* LFS_CMD_FABRIC_BAD to the events group; a failure only loses the event. */
static void lfs_bad_event(struct lfs_fabric *fabric, u64 start, u64 end)
{
	struct lfs_bad bad = { .start = start, .end = end };
	struct lfs_bad_range range;
	struct sk_buff *skb;
	void *hdr;

	lfs_bad_range(fabric, &bad, &range);
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!skb)
		return;
	hdr = lfs_genl_put(skb, LFS_CMD_FABRIC_BAD);
	if (!hdr || nla_put_u32(skb, LFS_A_IG, fabric->ig) ||
	    nla_put_string(skb, LFS_A_PATH, fabric->path) ||
	    nla_put(skb, LFS_A_BAD, sizeof(range), &range)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	lfs_genl_event(skb);
}

/*
 * MF_MEM_PRE_REMOVE (6.10 and later here): the device is being unbound, not
 * poisoned. Nothing is recorded; its books fail from its deletion on
 * (lfs_fabric_dead()).
 */
static bool lfs_mf_pre_remove(int mf_flags)
{
#ifdef LFS_HAVE_MF_PRE_REMOVE
	return mf_flags & MF_MEM_PRE_REMOVE;
#else
	return false;
#endif
}

/*
 * The device is being unbound: a device-DAX has no disk whose deletion tells
 * the fabric (lfs_fabric_dead()), this is its notice. The copies under way
 * are waited for outside the RCU section that keeps the fabric.
 */
static int lfs_fabric_pre_remove(struct dax_device *dax_dev)
{
	struct lfs_fabric *fabric;
	bool devdax;

	rcu_read_lock();
	fabric = dax_holder(dax_dev);
	devdax = fabric && lfs_fabric_devdax(fabric);
	if (devdax)
		lfs_devdax_dead(fabric);
	rcu_read_unlock();
	if (devdax)
		lfs_copy_wait();
	return 0;
}

/*
 * Bytes [off, off + len) of the fabric's device failed: recorded, logged and
 * multicast once. From a DAX holder's notify_failure, or from the page map
 * of a device-DAX the module maps itself (devdax_map.c).
 */
void lfs_bad_notify(struct lfs_fabric *fabric, u64 off, u64 len)
{
	u64 start, end;

	if (!lfs_bad_pages(fabric, off, len, &start, &end))
		return;
	if (lfs_bad_add(fabric, start, end)) {
		pr_err("interleave group %u (%s): memory failure at book %llu, pages %llu-%llu of the device's books: they fail from now on\n",
		       fabric->ig, fabric->path,
		       start >> (fabric->book_shift - PAGE_SHIFT), start,
		       end - 1);
		lfs_bad_event(fabric, start, end);
	}
}

/*
 * dax_holder_operations.notify_failure, inside the DAX device's SRCU read
 * section; off counts from the DAX device's first byte, the disk's. The
 * fabric may be being detached: its struct outlives an RCU grace period after
 * fs_put_dax() has let go of the holder. Returns -EOPNOTSUPP so that the
 * kernel's generic handling still unmaps the page and kills its mappers.
 */
static int lfs_fabric_notify_failure(struct dax_device *dax_dev, u64 off,
				     u64 len, int mf_flags)
{
	struct lfs_fabric *fabric;
	u64 part;

	if (lfs_mf_pre_remove(mf_flags))
		return lfs_fabric_pre_remove(dax_dev);
	rcu_read_lock();
	fabric = dax_holder(dax_dev);
	if (fabric) {
		part = fabric->bdev ?
			       (u64)get_start_sect(fabric->bdev) << SECTOR_SHIFT :
			       0;
		if (off >= part)
			lfs_bad_notify(fabric, off - part, len);
	}
	rcu_read_unlock();
	return -EOPNOTSUPP;
}

const struct dax_holder_operations lfs_fabric_dax_hops = {
	.notify_failure = lfs_fabric_notify_failure,
};

/*
 * At attach: the bad blocks the device reports (pmem's, from the platform's
 * address range scrub), in sectors of the whole disk.
 */
void lfs_bad_init(struct lfs_fabric *fabric)
{
	struct badblocks *bb;
	u64 s, e, start, end;
	unsigned int seq;
	sector_t part;
	int i;

	if (lfs_fabric_devdax(fabric)) /* no bad blocks of a disk */
		return;
	bb = fabric->bdev->bd_disk->bb;
	part = get_start_sect(fabric->bdev);
	if (!bb || !READ_ONCE(bb->count))
		return;
	do {
		seq = read_seqbegin(&bb->lock);
		for (i = 0; i < bb->count; i++) {
			s = BB_OFFSET(bb->page[i]) << bb->shift;
			e = s + (BB_LEN(bb->page[i]) << bb->shift);
			if (e <= part)
				continue;
			s = max_t(u64, s, part) - part;
			if (lfs_bad_pages(fabric, s << SECTOR_SHIFT,
					  (e - part - s) << SECTOR_SHIFT,
					  &start, &end))
				lfs_bad_add(fabric, start, end);
		}
	} while (read_seqretry(&bb->lock, seq));
	if (fabric->nr_bad)
		pr_warn("interleave group %u (%s): %u bad ranges reported by the device\n",
			fabric->ig, fabric->path, fabric->nr_bad);
}
