// SPDX-License-Identifier: GPL-2.0
/*
 * A shelf's attributes: /sys/block/lfsN/lfs/.
 */
#include <linux/blkdev.h>
#include <linux/sysfs.h>

#include "lfs.h"

static struct lfs_shelf *lfs_dev_shelf(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t name_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", lfs_dev_shelf(dev)->name);
}
static DEVICE_ATTR_RO(name);

static ssize_t uuid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%pUb\n", &lfs_dev_shelf(dev)->uuid);
}
static DEVICE_ATTR_RO(uuid);

static ssize_t book_size_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%llu\n", lfs_dev_shelf(dev)->book_size);
}
static DEVICE_ATTR_RO(book_size);

static ssize_t dax_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", lfs_dev_shelf(dev)->dax_dev ? 1 : 0);
}
static DEVICE_ATTR_RO(dax);

static ssize_t zeroed_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(lfs_dev_shelf(dev)->zeroed));
}
static DEVICE_ATTR_RO(zeroed);

/*
 * books: one "IG:BOOK" line per book in shelf order. The list can be far
 * longer than a page, so it is a binary attribute read in pieces; the text
 * is produced on the fly from the book map.
 *
 * A removed shelf (dying) reads empty: its books went back to their fabric
 * devices at the remove, and a device may be detached, and its struct
 * lfs_fabric freed, before the reaper deletes the disk and with it this
 * attribute. The fabric is freed an RCU grace period after the detach
 * (lfs_fabric_free()), and the remove set dying before that, so a reader
 * either sees dying or finishes before the fabric is freed.
 */
static ssize_t books_read(struct file *file, struct kobject *kobj,
			  lfs_bin_attr_read_const struct bin_attribute *attr,
			  char *buf, loff_t off,
			  size_t count)
{
	struct lfs_shelf *shelf = lfs_dev_shelf(kobj_to_dev(kobj));
	char line[24];
	size_t done = 0;
	loff_t pos = 0;
	struct lfs_map *map;
	u32 i;
	int len;

	rcu_read_lock();
	if (READ_ONCE(shelf->dying))
		goto out;
	map = rcu_dereference(shelf->map);
	for (i = 0; i < map->nr_books && done < count; i++) {
		len = scnprintf(line, sizeof(line), "%u:%u\n",
				map->books[i].fabric->ig, map->books[i].book);
		if (pos + len > off) {
			size_t skip = off > pos ? off - pos : 0;
			size_t n = min_t(size_t, len - skip, count - done);

			memcpy(buf + done, line + skip, n);
			done += n;
		}
		pos += len;
	}
out:
	rcu_read_unlock();
	return done;
}
static BIN_ATTR_RO(books, 0);

static struct attribute *lfs_attrs[] = {
	&dev_attr_name.attr,
	&dev_attr_uuid.attr,
	&dev_attr_book_size.attr,
	&dev_attr_dax.attr,
	&dev_attr_zeroed.attr,
	NULL,
};

static lfs_bin_attrs_const struct bin_attribute *lfs_bin_attrs[] = {
	&bin_attr_books,
	NULL,
};

static const struct attribute_group lfs_attr_group = {
	.name = "lfs",
	.attrs = lfs_attrs,
	.bin_attrs = lfs_bin_attrs,
};

const struct attribute_group *lfs_disk_groups[] = {
	&lfs_attr_group,
	NULL,
};
