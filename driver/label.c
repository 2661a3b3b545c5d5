// SPDX-License-Identifier: GPL-2.0
/*
 * Fabric device labels (uapi/lfs.h, docs/FENCING.md): a struct lfs_label at
 * byte 0 of the device, inside its data offset area, saying which fabric,
 * interleave group, book size and data offset the device belongs to. Every
 * attach reads it, so a device configured as the wrong IG is refused before
 * anything can be written to it; only LFS_CMD_FABRIC_LABEL writes one
 * (fabric.c opens the device for it).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/uuid.h>

#include "lfs.h"

static u32 lfs_label_sum(const struct lfs_label *l)
{
	struct lfs_label copy = *l;

	copy.checksum = 0;
	return crc32_le(~0, (const u8 *)&copy, sizeof(copy)) ^ ~0;
}

/*
 * Read or write the first page of the fabric's device (the label's): by a
 * bio, or through a device-DAX's memory.
 */
static int lfs_label_io(struct lfs_fabric *fabric, struct page *page,
			blk_opf_t opf)
{
	struct bio bio;
	struct bio_vec bvec;
	int ret;

	if (lfs_fabric_devdax(fabric))
		return lfs_devdax_rw(fabric, 0, page_address(page), PAGE_SIZE,
				     op_is_write(opf));
	bio_init(&bio, fabric->bdev, &bvec, 1, opf);
	bio.bi_iter.bi_sector = 0;
	__bio_add_page(&bio, page, PAGE_SIZE, 0);
	ret = submit_bio_wait(&bio);
	bio_uninit(&bio);
	return ret;
}

/*
 * The label on the fabric's device, if any: 1 and *@out filled, 0 if the
 * device carries none (no magic), or an error (unreadable, or damaged).
 */
static int lfs_label_read(struct lfs_fabric *fabric, struct lfs_label *out,
			  const char *path, struct netlink_ext_ack *extack)
{
	struct page *page = alloc_page(GFP_KERNEL);
	int ret;

	if (!page)
		return -ENOMEM;
	ret = lfs_label_io(fabric, page, REQ_OP_READ);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack,
				   "reading the label area of '%s' failed (error %d)",
				   path, ret);
		goto out;
	}
	memcpy(out, page_address(page), sizeof(*out));
	ret = 0;
	if (memcmp(out->magic, LFS_LABEL_MAGIC, sizeof(out->magic)))
		goto out;
	ret = 1;
	if (le32_to_cpu(out->version) != LFS_LABEL_VERSION ||
	    le32_to_cpu(out->checksum) != lfs_label_sum(out)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "the label of '%s' is damaged (bad checksum or version %u)",
				   path, le32_to_cpu(out->version));
		ret = -EMEDIUMTYPE;
	}
out:
	__free_page(page);
	return ret;
}

/*
 * Extack messages are cut at 80 characters on recent kernels: one
 * difference per message, UUIDs by their first 8 hex digits.
 */
static int lfs_label_compare(struct lfs_fabric *f, const struct lfs_label *l,
			     const u8 *fabric_uuid,
			     struct netlink_ext_ack *extack)
{
	if (le32_to_cpu(l->ig) != f->ig)
		NL_SET_ERR_MSG_FMT(extack, "'%s' is labelled IG %u, not IG %u",
				   f->path, le32_to_cpu(l->ig), f->ig);
	else if (le64_to_cpu(l->book_size) != f->book_size)
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is labelled with book size %llu, not %llu",
				   f->path, le64_to_cpu(l->book_size),
				   f->book_size);
	else if (le64_to_cpu(l->offset) != f->offset)
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is labelled with offset %llu, not %llu",
				   f->path, le64_to_cpu(l->offset), f->offset);
	else if (fabric_uuid &&
		 memcmp(l->fabric_uuid, fabric_uuid, LFS_UUID_LEN))
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is labelled for fabric %4phN, not %4phN",
				   f->path, l->fabric_uuid, fabric_uuid);
	else
		return 0;
	pr_notice("not attaching %s: its label disagrees; nothing was written\n",
		  f->path);
	return -EMEDIUMTYPE;
}

/* At attach: a label must agree with the attach; required if asked for. */
int lfs_label_check(struct lfs_fabric *fabric, const u8 *fabric_uuid,
		    struct netlink_ext_ack *extack)
{
	struct lfs_label label;
	int ret = 0;

	/* with no data offset, byte 0 is book 0's: there is no label area */
	if (fabric->offset >= LFS_OFFSET_ALIGN)
		ret = lfs_label_read(fabric, &label, fabric->path, extack);
	if (ret < 0)
		return ret;
	if (!ret && fabric_uuid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' carries no label (lfsvol attach --init writes it)",
				   fabric->path);
		return -EMEDIUMTYPE;
	}
	if (!ret)
		return 0;
	ret = lfs_label_compare(fabric, &label, fabric_uuid, extack);
	if (ret)
		return ret;
	fabric->labelled = true;
	memcpy(fabric->fabric_uuid, label.fabric_uuid, LFS_UUID_LEN);
	return 0;
}

static void lfs_label_fill(struct lfs_label *l, u32 ig, u64 book_size,
			   u64 offset, const u8 *fabric_uuid)
{
	uuid_t dev;

	memset(l, 0, sizeof(*l));
	memcpy(l->magic, LFS_LABEL_MAGIC, sizeof(l->magic));
	l->version = cpu_to_le32(LFS_LABEL_VERSION);
	l->ig = cpu_to_le32(ig);
	l->book_size = cpu_to_le64(book_size);
	l->offset = cpu_to_le64(offset);
	memcpy(l->fabric_uuid, fabric_uuid, LFS_UUID_LEN);
	uuid_gen(&dev);
	memcpy(l->device_uuid, &dev, LFS_UUID_LEN);
	l->created = cpu_to_le64(ktime_get_real_seconds());
	l->checksum = cpu_to_le32(lfs_label_sum(l));
}

/*
 * Write the label, on a device opened exclusively and not attached
 * (lfs_fabric_label()), unless it carries one.
 */
int lfs_label_write(struct lfs_fabric *fabric, const char *path, u32 ig,
		    u64 book_size, u64 offset, const u8 *fabric_uuid,
		    struct netlink_ext_ack *extack)
{
	struct lfs_label old;
	struct page *page;
	int ret;

	ret = lfs_label_read(fabric, &old, path, extack);
	if (ret > 0) {
		NL_SET_ERR_MSG_FMT(extack,
				   "'%s' is labelled already (IG %u of fabric %4phN)",
				   path, le32_to_cpu(old.ig), old.fabric_uuid);
		return -EEXIST;
	}
	if (ret < 0)
		return ret;
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	lfs_label_fill(page_address(page), ig, book_size, offset, fabric_uuid);
	ret = lfs_label_io(fabric, page,
			   REQ_OP_WRITE | REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
	__free_page(page);
	if (ret)
		NL_SET_ERR_MSG_FMT(extack,
				   "writing the label of '%s' failed (error %d)",
				   path, ret);
	else
		pr_info("labelled %s as interleave group %u of fabric %pUb\n",
			path, ig, fabric_uuid);
	return ret;
}
