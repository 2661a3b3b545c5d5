/* SPDX-License-Identifier: GPL-2.0 */
/* lfs.ko as lfsvol uses it: its session and messages, shelves, fabric devices. */
#ifndef LFSVOL_KERNEL_H
#define LFSVOL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "liblfsnl.h"

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
 * A module that is loaded but cannot say (another version of the netlink
 * family than this lfsvol's, a failed query) is not "nothing active here":
 * with must_know, a failure reported (exit code 5), for a command that
 * would otherwise change a shelf the kernel still maps; without, an empty
 * list (a display only).
 */
int lfsvol_kernel_shelves(struct lfs_client **drv, const char *name, struct lfs_shelf_info **v,
			  size_t *n, bool must_know);
/* The kernel shelf by name in a list; NULL if not active here. */
struct lfs_shelf_info *lfsvol_find_active(struct lfs_shelf_info *v, size_t n, const char *name);
/*
 * Create or remove a shelf's block device at the config's process_priority
 * (as LVM's activation/process_priority): the udev work they start does
 * not preempt the rest of the request. No message: the raw errno.
 */
int lfsvol_kernel_create(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name,
			 const uint8_t *uuid, unsigned int flags, const struct lfs_book *books,
			 size_t n, char *disk, size_t disklen);
int lfsvol_kernel_remove(const struct lfsvol_conf *conf, struct lfs_client *drv, const char *name);

/*
 * The node's lease (docs/FENCING.md). The librarian's lease_time (seconds)
 * as the kernel's lease in ms, within LFS_LEASE_MS_MIN..MAX.
 */
uint32_t lfsvol_lease_ms(long long lease_time);
/*
 * Renew the kernel's lease: the librarian received a request sent at
 * sent_ns (CLOCK_BOOTTIME), with the config's fence action. No message.
 */
int lfsvol_lease_renew(const struct lfsvol_conf *conf, struct lfs_client *drv, uint64_t sent_ns,
		       uint32_t lease_ms);
/*
 * Refuse (exit code 7) while the node's lease has expired: only the node
 * agent's renewal revives it. what names the action refused.
 */
int lfsvol_lease_usable(struct lfs_client *drv, const char *what);

/* A fabric device's place: the librarian's book size and fabric (labels). */
struct lfsvol_fabric_id {
	uint64_t book_size;
	bool has_uuid; /* the librarian gave its fabric's UUID */
	uint8_t uuid[LFS_UUID_LEN];
};

struct lfsvol_lib;
/*
 * The librarian's book size and fabric UUID (book_size when lib is NULL,
 * the librarian unreachable: no UUID). -ENODATA if no book size is known.
 */
int lfsvol_fabric_id_get(struct lfsvol_lib *lib, uint64_t book_size, struct lfsvol_fabric_id *id);
/*
 * attach.c: attach the configured fabric devices that are not attached
 * yet, with the librarian's book size, and with its fabric's UUID where
 * the data offset leaves room for a label (the device must then carry
 * one: see lfsvol_label_fabrics). Each failure is reported (quiet: only
 * refusals, and a device not present is none); returns 0 or the last
 * failure's errno.
 */
int lfsvol_attach_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			  const struct lfsvol_fabric_id *id, bool quiet);
/* Does the data offset leave room for a label (LFS_OFFSET_ALIGN, 2 MiB, or more)? */
bool lfsvol_fabric_labels(const struct lfsvol_fabric_conf *f);
/*
 * attach --init: write the label on each configured device not attached,
 * with no label and no signature libblkid knows, after checking the
 * values; nr_books[i] is how many books the librarian gives the IG of
 * conf->fabrics[i] (-1: the fabric has no such IG). Before each label the
 * librarian forgets which of the IG's FREE books read as zeroes (its memory
 * is new: free.forget). Returns 0 or the last failure's errno.
 */
int lfsvol_label_fabrics(const struct lfsvol_conf *conf, struct lfs_client *drv,
			 struct lfsvol_lib *lib, const struct lfsvol_fabric_id *id,
			 const long long *nr_books);

#endif /* LFSVOL_KERNEL_H */
