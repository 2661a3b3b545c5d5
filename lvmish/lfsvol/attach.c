// SPDX-License-Identifier: GPL-2.0
/*
 * The configured fabric devices, attached to lfs.ko with the librarian's
 * book size. A device carrying a foreign signature is refused unless its
 * entry says force = true.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "kernel.h"
#include "msg.h"

static bool ig_attached(const struct lfs_fabric_info *fv, size_t nf, uint32_t ig)
{
	for (size_t k = 0; k < nf; k++)
		if (fv[k].ig == ig)
			return true;
	return false;
}

static int attach_one(const struct lfsvol_conf *conf, struct lfs_client *drv,
		      const struct lfsvol_fabric_conf *f, uint64_t book_size, bool quiet)
{
	char path[PATH_MAX], real[PATH_MAX], what[PATH_MAX + 64];
	struct lfsvol_fsinfo fs;
	int r;

	r = lfsvol_fabric_resolve(f, path, sizeof(path));
	if (r) {
		if (!quiet)
			lfsvol_err("%s:%d: fabric device for IG %u is not present (yet)",
				   conf->path, f->line, f->ig);
		return r;
	}
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	if (!f->force && !lfsvol_probe_fs(real, 0, 0, &fs) && fs.type[0])
		return lfsvol_fail(
			LFSVOL_EFAIL, -EEXIST,
			"refusing to attach %s as IG %u: it carries a signature (%s%s%s); wipe it (wipefs -a) or set force = true for it in %s:%d",
			real, f->ig, fs.type, fs.label[0] ? " LABEL=" : "", fs.label, conf->path,
			f->line);
	r = lfs_attach(drv, real, f->ig, book_size, f->offset);
	if (r && r != -EEXIST) {
		snprintf(what, sizeof(what), "attaching %s as IG %u", real, f->ig);
		return lfsvol_drv_fail(drv, r, what);
	}
	if (!quiet)
		lfsvol_info("attached %s as IG %u", real, f->ig);
	return 0;
}

int lfsvol_attach_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			  uint64_t book_size, bool quiet)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0;
	int r, failed = 0;

	r = lfs_fabric_list(drv, &fv, &nf);
	if (r)
		return lfsvol_drv_fail(drv, r, "listing fabric devices");
	for (int i = 0; i < conf->nfabrics; i++) {
		if (ig_attached(fv, nf, conf->fabrics[i].ig))
			continue;
		r = attach_one(conf, drv, &conf->fabrics[i], book_size, quiet);
		if (r)
			failed = r;
	}
	free(fv);
	return failed;
}
