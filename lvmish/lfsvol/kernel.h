/* SPDX-License-Identifier: GPL-2.0 */
/* lfs.ko as lfsvol uses it: its session and messages, shelves, fabric devices. */
#ifndef LFSVOL_KERNEL_H
#define LFSVOL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "liblfs.h"

/* Open a driver session; reports a failure (exit code 5). */
int lfsvol_drv_open(struct lfs_client **out);
/* Report "WHAT: kernel reports: ..." for a failed request err; returns err. */
int lfsvol_drv_fail(struct lfs_client *c, int err, const char *what);
/* Report that the command needs root (exit code 8); what names it. */
int lfsvol_need_root(const char *what);
/*
 * The kernel's shelves, all (name NULL) or the one named: an empty list if
 * the module is not loaded or no such shelf is active here. *drv is the
 * session opened for it (NULL without the module), for what follows.
 */
int lfsvol_kernel_shelves(struct lfs_client **drv, const char *name, struct lfs_shelf_info **v,
			  size_t *n);
/* The kernel shelf by name in a list; NULL if not active here. */
struct lfs_shelf_info *lfsvol_find_active(struct lfs_shelf_info *v, size_t n, const char *name);
/*
 * Create or remove a shelf's block device at the config's process_priority
 * (as LVM's activation/process_priority): the udev work they start does
 * not preempt the rest of the request. No message: the raw errno.
 */
int lfsvol_kernel_create(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name,
			 const uint8_t *uuid, bool zeroed, const struct lfs_book *books, size_t n,
			 char *disk, size_t disklen);
int lfsvol_kernel_remove(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name);

/*
 * attach.c: attach the configured fabric devices that are not attached
 * yet, with the librarian's book size. Each failure is reported (quiet:
 * only refusals); returns 0 or the last failure's errno.
 */
int lfsvol_attach_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			  uint64_t book_size, bool quiet);

#endif /* LFSVOL_KERNEL_H */
