/* SPDX-License-Identifier: GPL-2.0 */
/* copy_data.c: the bytes of `lfsvol copy', from one active shelf's device to another's. */
#ifndef LFSVOL_COPY_H
#define LFSVOL_COPY_H

#include <signal.h>
#include <stdint.h>

/* The attribute that marks a copy under way; activate refuses the shelf while it is set. */
#define LFSVOL_INCOMPLETE_KEY "lfs.incomplete"

struct lfsvol_copy_io {
	const char *src, *dst; /* shelf names, for the messages */
	const char *src_disk, *dst_disk; /* "lfsN" */
	uint64_t bytes; /* to copy */
	volatile sig_atomic_t *stop; /* set by a signal: end early, with an error */
	uint64_t done; /* out: bytes copied */
	int64_t ms; /* out: how long the copy took */
};

/*
 * Copy io->bytes from /dev/SRC_DISK to /dev/DST_DISK and flush, with a
 * progress line on a terminal (stderr). 0 or a reported -errno.
 */
int lfsvol_copy_bytes(struct lfsvol_copy_io *io);
/* MiB/s of a finished copy. */
double lfsvol_copy_rate(const struct lfsvol_copy_io *io);

#endif /* LFSVOL_COPY_H */
