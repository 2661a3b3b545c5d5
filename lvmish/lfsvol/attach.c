// SPDX-License-Identifier: GPL-2.0
/*
 * The configured fabric devices, attached to lfs.ko with the librarian's
 * book size. A device carrying a foreign signature is refused unless its
 * entry says force = true.
 *
 * Labels (docs/FENCING.md): where the data offset leaves room for one (2
 * MiB or more, the default), every attach asks the kernel to check that
 * the device carries the label of the librarian's fabric with the IG,
 * book size and offset lfs.conf gives it, so a device mapped as the wrong
 * IG is refused before anything is written to it. `attach --init' writes
 * the labels, once per fabric.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "msg.h"
#include "session.h"

static bool ig_attached(const struct lfs_fabric_info *fv, size_t nf, uint32_t ig)
{
	for (size_t k = 0; k < nf; k++)
		if (fv[k].ig == ig)
			return true;
	return false;
}

int lfsvol_fabric_id_get(struct lfsvol_lib *lib, uint64_t book_size, struct lfsvol_fabric_id *id)
{
	const char *u =
		lib ? json_string_value(json_object_get(lfsvol_lib_info(lib), "fabric_uuid")) :
		      NULL;

	memset(id, 0, sizeof(*id));
	id->book_size = lib ? lfsvol_lib_book_size(lib) : book_size;
	id->has_uuid = u && !lfs_parse_uuid(u, id->uuid);
	return id->book_size ? 0 : -ENODATA;
}

bool lfsvol_fabric_labels(const struct lfsvol_fabric_conf *f)
{
	return f->offset >= LFS_OFFSET_ALIGN;
}

/*
 * The device path of an entry, resolved (symlinks followed). A numa_node
 * that names several devices is refused here, naming them; a device not
 * present is the caller's to report (-ENODEV).
 */
static int fabric_path(const struct lfsvol_conf *conf, const struct lfsvol_fabric_conf *f,
		       char real[PATH_MAX])
{
	char path[PATH_MAX];
	int r = lfsvol_fabric_resolve(f, path, sizeof(path));

	if (r == -ENOTUNIQ)
		return lfsvol_fail(
			LFSVOL_ECONFIG, r,
			"%s:%d: numa_node = %d of IG %u matches more than one pmem device (%s): which one became IG %u would depend on the order they are listed in; name the device instead (device = \"/dev/disk/by-id/pmem-NAMESPACE_UUID\" or by_path)",
			conf->path, f->line, f->numa_node, f->ig, path, f->ig);
	if (r)
		return r;
	if (!realpath(path, real))
		snprintf(real, PATH_MAX, "%s", path);
	return 0;
}

/* The kernel refused the device's label: say what to do about it. */
static int label_refused(const struct lfsvol_conf *conf, struct lfs_client *drv,
			 const struct lfsvol_fabric_conf *f, const char *real, int r)
{
	char what[PATH_MAX + 64];

	snprintf(what, sizeof(what), "attaching %s as IG %u", real, f->ig);
	lfsvol_drv_fail(drv, r, what);
	lfsvol_err(
		"if %s is new to this fabric, label it with `%s attach --init'; if %s:%d maps the wrong device to IG %u, fix that entry (nothing was written to the device)",
		real, lfsvol_prog, conf->path, f->line, f->ig);
	return lfsvol_exit_as(LFSVOL_EREFUSED, r);
}

static int attach_one(const struct lfsvol_conf *conf, struct lfs_client *drv,
		      const struct lfsvol_fabric_conf *f, const struct lfsvol_fabric_id *id,
		      bool quiet)
{
	const uint8_t *uuid = id->has_uuid && lfsvol_fabric_labels(f) ? id->uuid : NULL;
	char real[PATH_MAX], what[PATH_MAX + 64];
	struct lfsvol_fsinfo fs;
	int r;

	/* quiet (a udev pass): a device not present yet has its own pass when it comes */
	r = fabric_path(conf, f, real);
	if (r == -ENOTUNIQ)
		return r; /* said, in a udev pass too: lfs.conf is wrong */
	if (r) {
		if (quiet)
			return 0;
		lfsvol_err("%s:%d: fabric device for IG %u is not present (yet)", conf->path,
			   f->line, f->ig);
		return r;
	}
	if (!f->force && !lfsvol_probe_fs(real, 0, 0, &fs) && fs.type[0])
		return lfsvol_fail(
			LFSVOL_EFAIL, -EEXIST,
			"refusing to attach %s as IG %u: it carries a signature (%s%s%s); wipe it (wipefs -a) or set force = true for it in %s:%d",
			real, f->ig, fs.type, fs.label[0] ? " LABEL=" : "", fs.label, conf->path,
			f->line);
	r = lfsnl_attach_labelled(drv, real, f->ig, id->book_size, f->offset, uuid);
	if (r == -EMEDIUMTYPE)
		return label_refused(conf, drv, f, real, r);
	if (r && r != -EEXIST) {
		snprintf(what, sizeof(what), "attaching %s as IG %u", real, f->ig);
		return lfsvol_drv_fail(drv, r, what);
	}
	if (!quiet)
		lfsvol_info("attached %s as IG %u%s", real, f->ig,
			    uuid ? " (its label matches)" : "");
	return 0;
}

/* Books the device holds after its data offset; -1 if unknown. */
static long long device_books(const char *dev, uint64_t offset, uint64_t book_size)
{
	uint64_t size = 0;
	int fd = open(dev, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	close(fd);
	if (!size || !book_size)
		return -1;
	return size > offset ? (long long)((size - offset) / book_size) : 0;
}

/* The values a label will carry, checked before anything is written. */
static int label_check(const struct lfsvol_conf *conf, const struct lfsvol_fabric_conf *f,
		       const char *real, const struct lfsvol_fabric_id *id, long long books)
{
	struct lfsvol_fsinfo fs;
	long long have;
	char a[32];
	struct stat sb;

	if (!lfsvol_fabric_labels(f))
		return lfsvol_fail(
			LFSVOL_ECONFIG, -EINVAL,
			"%s:%d: IG %u has data offset %llu: a label needs %llu bytes (2 MiB) or more before the first book; such a device is attached unlabelled and never zeroed in the background",
			conf->path, f->line, f->ig, (unsigned long long)f->offset,
			(unsigned long long)LFS_OFFSET_ALIGN);
	if (books < 0)
		return lfsvol_fail(
			LFSVOL_ECONFIG, -EINVAL,
			"%s:%d: IG %u is not in the librarian's fabric: not labelling %s",
			conf->path, f->line, f->ig, real);
	if (stat(real, &sb) || !S_ISBLK(sb.st_mode))
		return lfsvol_fail(LFSVOL_ECONFIG, -ENOTBLK,
				   "%s:%d: %s (IG %u) is not a block device", conf->path, f->line,
				   real, f->ig);
	if (!f->force && !lfsvol_probe_fs(real, 0, 0, &fs) && fs.type[0])
		return lfsvol_fail(
			LFSVOL_EREFUSED, -EEXIST,
			"refusing to label %s as IG %u: it carries a signature (%s%s%s); wipe it (wipefs -a) first",
			real, f->ig, fs.type, fs.label[0] ? " LABEL=" : "", fs.label);
	have = device_books(real, f->offset, id->book_size);
	if (have >= 0 && have < books)
		lfsvol_err(
			"warning: the librarian gives IG %u %lld books of %s, but %s holds only %lld after its %llu-byte data offset; the others can never be used",
			f->ig, books, lfs_size_human(id->book_size, a, sizeof(a)), real, have,
			(unsigned long long)f->offset);
	lfsvol_trace("label %s: IG %u, %lld books of %s, offset %llu", real, f->ig, books,
		     lfs_size_human(id->book_size, a, sizeof(a)), (unsigned long long)f->offset);
	return 0;
}

/*
 * Before a device is labelled: its memory is new to the catalogue (a new or
 * replaced device, volatile memory that lost its contents), so the IG's FREE
 * books are known zero no longer (free.forget; FENCING.md, "Safe reuse").
 * First, so that no label is ever written while the librarian still trusts
 * what the memory before it held.
 */
static int forget_zero(struct lfsvol_lib *lib, const struct lfsvol_fabric_conf *f)
{
	json_t *res = NULL;
	char what[64];
	json_int_t n, inuse;
	int r;

	snprintf(what, sizeof(what), "telling the librarian IG %u is new memory", f->ig);
	r = lfsvol_lib_request(lib, what, "free.forget", json_pack("{s:i}", "ig", (int)f->ig),
			       &res);
	if (r)
		return r;
	n = json_integer_value(json_object_get(res, "unknown"));
	inuse = json_integer_value(json_object_get(res, "inuse"));
	json_decref(res);
	if (n)
		lfsvol_info(
			"IG %u: %lld FREE books are no longer known zero: the agent reads or zeroes each before it is used",
			f->ig, (long long)n);
	if (inuse)
		lfsvol_err(
			"warning: IG %u: shelves hold %lld of its books; what they held was on the memory the device had before",
			f->ig, (long long)inuse);
	return 0;
}

static int label_one(const struct lfsvol_conf *conf, struct lfs_client *drv, struct lfsvol_lib *lib,
		     const struct lfsvol_fabric_conf *f, const struct lfsvol_fabric_id *id,
		     long long books)
{
	char real[PATH_MAX], what[PATH_MAX + 64], u[37];
	int r = fabric_path(conf, f, real);

	if (r == -ENOTUNIQ)
		return r;
	if (r)
		return lfsvol_fail(LFSVOL_ECONFIG, r,
				   "%s:%d: fabric device for IG %u is not present", conf->path,
				   f->line, f->ig);
	r = label_check(conf, f, real, id, books);
	if (!r)
		r = forget_zero(lib, f);
	if (r)
		return r;
	r = lfsnl_fabric_label(drv, real, f->ig, id->book_size, f->offset, id->uuid);
	if (r == -EEXIST) {
		lfsvol_info("%s (IG %u) carries a label already: %s", real, f->ig,
			    lfs_client_error(drv));
		return 0;
	}
	snprintf(what, sizeof(what), "labelling %s as IG %u", real, f->ig);
	if (r)
		return lfsvol_drv_fail(drv, r, what);
	lfs_format_uuid(id->uuid, u);
	lfsvol_info("labelled %s as IG %u of fabric %s", real, f->ig, u);
	return 0;
}

/*
 * One pass over lfs.conf's IGs not attached yet: attach each (nr_books
 * NULL; quiet: a udev pass), or label each with the librarian's count of
 * its books. The last failure, the others said.
 */
static int fabric_pass(const struct lfsvol_conf *conf, struct lfs_client *drv,
		       struct lfsvol_lib *lib, const struct lfsvol_fabric_id *id, bool quiet,
		       const long long *nr_books)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0;
	int r, failed = 0;

	r = lfsnl_fabric_list(drv, &fv, &nf);
	if (r)
		return lfsvol_drv_fail(drv, r, "listing fabric devices");
	for (int i = 0; i < conf->nfabrics; i++) {
		const struct lfsvol_fabric_conf *f = &conf->fabrics[i];

		if (ig_attached(fv, nf, f->ig)) {
			if (nr_books)
				lfsvol_info("IG %u is attached already: not labelling it", f->ig);
			continue;
		}
		r = nr_books ? label_one(conf, drv, lib, f, id, nr_books[i]) :
			       attach_one(conf, drv, f, id, quiet);
		if (r)
			failed = r;
	}
	free(fv);
	return failed;
}

int lfsvol_attach_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			  const struct lfsvol_fabric_id *id, bool quiet)
{
	return fabric_pass(conf, drv, NULL, id, quiet, NULL);
}

int lfsvol_label_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			 struct lfsvol_lib *lib, const struct lfsvol_fabric_id *id,
			 const long long *nr_books)
{
	return fabric_pass(conf, drv, lib, id, false, nr_books);
}
