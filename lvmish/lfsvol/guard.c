// SPDX-License-Identifier: GPL-2.0
/* What remove and resize check before a shelf's books are given up (lfsvol.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"

int lfsvol_check_name(const char *name)
{
	char msg[256];

	if (!lfs_rule_shelf_name(name, msg, sizeof(msg)))
		return 0;
	return lfsvol_usage("%s", msg);
}

int lfsvol_check_unused(const struct lfs_shelf_info *act, const char *name, const char *why)
{
	if (!act || (!act->open && !lfsvol_dev_mounted(act->devt)))
		return 0;
	return lfsvol_fail(LFSVOL_EREFUSED, -EBUSY,
			   "shelf `%s' is in use on this node (/dev/%s is mounted or open); %s",
			   name, act->disk, why);
}

/* The shelf's first book seen through its fabric device, while not active here. */
static int probe_inactive(struct lfs_client *drv, json_t *shelf, struct lfsvol_fsinfo *fs)
{
	json_t *first = json_array_get(json_object_get(shelf, "map"), 0);
	struct lfs_fabric_info *fv = NULL;
	json_int_t ig, book;
	size_t nf = 0;
	int r = -ENODEV;

	if (!first || json_unpack(first, "[II]", &ig, &book))
		return -ENODATA;
	if (!drv || lfsnl_fabric_list(drv, &fv, &nf))
		return -ENODEV;
	for (size_t i = 0; i < nf; i++) {
		if (fv[i].ig != (uint32_t)ig)
			continue;
		r = lfsvol_probe_fs(fv[i].path, fv[i].offset + (uint64_t)book * fv[i].book_size,
				    fv[i].book_size, fs);
		break;
	}
	free(fv);
	return r;
}

int lfsvol_fs_guard(struct lfs_client *drv, struct lfs_shelf_info *act, json_t *shelf,
		    const char *name, const char *verb)
{
	struct lfsvol_fsinfo fs;
	char dev[64];
	int r;

	if (act) {
		snprintf(dev, sizeof(dev), "/dev/%s", act->disk);
		r = lfsvol_probe_fs(dev, 0, 0, &fs);
	} else {
		r = probe_inactive(drv, shelf, &fs);
	}
	if (r == -ENODATA)
		return 0;
	if (r)
		return lfsvol_fail(
			LFSVOL_EREFUSED, r,
			"cannot check shelf `%s' for a filesystem (%s); %s it anyway with -f", name,
			act ? strerror(-r) :
			      "not active here and its first book's device is not attached",
			verb);
	if (!fs.type[0])
		return 0;
	return lfsvol_fail(
		LFSVOL_EREFUSED, -EBUSY,
		"shelf `%s' holds a filesystem (%s%s%s%s%s); %s it anyway with -f (its data is lost)",
		name, fs.type, fs.label[0] ? " LABEL=" : "", fs.label, fs.uuid[0] ? " UUID=" : "",
		fs.uuid, verb);
}

void lfsvol_say_rounding(bool books, uint64_t bytes, const char *arg, uint64_t n,
			 uint64_t book_size)
{
	char a[32], b[32];

	if (books || bytes == n * book_size)
		return;
	lfsvol_info("%s rounded up to %llu book%s of %s (%s)", arg, (unsigned long long)n,
		    n == 1 ? "" : "s", lfs_size_human(book_size, a, sizeof(a)),
		    lfs_size_human(n * book_size, b, sizeof(b)));
}
