// SPDX-License-Identifier: GPL-2.0
/*
 * The bytes of `lfsvol copy': one active shelf's block device into
 * another's, with large O_DIRECT reads and writes, in the node agent's
 * child (`lfsvol agent --copy'). A block device has no DAX mmap (only a
 * filesystem on it has), and a buffered copy would go through the page
 * cache twice; O_DIRECT is the driver's own memcpy from the fabric into
 * the buffer and from the buffer into the fabric (docs/LFSVOL.md, "copy",
 * has the figures). Also the command's progress line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "copy_io.h"
#include "lfs_rules.h"
#include "msg.h"

#define CHUNK (8U << 20)

struct mover {
	struct lfsvol_copy_io *io;
	int in, out;
	void *buf;
	int64_t t0;
};

double lfsvol_copy_mib_s(uint64_t bytes, int64_t ms)
{
	return ms > 0 ? (double)bytes / (1 << 20) / ((double)ms / 1000) : 0;
}

void lfsvol_copy_line(const char *src, uint64_t done, uint64_t total, int64_t ms, bool last)
{
	char a[32], b[32];

	fprintf(stderr, "\rcopying %s: %s of %s (%3.0f%%), %.0f MiB/s%s", src,
		lfs_size_human(done, a, sizeof(a)), lfs_size_human(total, b, sizeof(b)),
		total ? 100.0 * (double)done / (double)total : 100.0, lfsvol_copy_mib_s(done, ms),
		last ? "\n" : "  ");
}

static int open_dev(const char *disk, int flags)
{
	char dev[64];
	int fd;

	snprintf(dev, sizeof(dev), "/dev/%s", disk);
	fd = open(dev, flags | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return lfsvol_fail(LFSVOL_EFAIL, -errno, "copy: cannot open %s: %s", dev,
				   strerror(errno));
	return fd;
}

/* One chunk at offset off: read it whole from SRC, write it whole to DST. */
static int move_chunk(struct mover *m, uint64_t off, size_t len)
{
	ssize_t n = pread(m->in, m->buf, len, (off_t)off);

	if (n != (ssize_t)len)
		return lfsvol_fail(LFSVOL_EFAIL, n < 0 ? -errno : -EIO,
				   "copy: reading /dev/%s (shelf `%s') at byte %llu: %s",
				   m->io->src_disk, m->io->src, (unsigned long long)off,
				   n < 0 ? strerror(errno) : "short read");
	n = pwrite(m->out, m->buf, len, (off_t)off);
	if (n != (ssize_t)len)
		return lfsvol_fail(LFSVOL_EFAIL, n < 0 ? -errno : -EIO,
				   "copy: writing /dev/%s (shelf `%s') at byte %llu: %s",
				   m->io->dst_disk, m->io->dst, (unsigned long long)off,
				   n < 0 ? strerror(errno) : "short write");
	return 0;
}

/* Under a rate limit, wait until the bytes done are due. */
static void pace(struct mover *m)
{
	int64_t due, now = lfsvol_now_ms();
	struct timespec ts;

	if (!m->io->max_rate)
		return;
	due = m->t0 + (int64_t)(m->io->done * 1000 / m->io->max_rate);
	if (due <= now)
		return;
	ts = (struct timespec){ (due - now) / 1000, (due - now) % 1000 * 1000000 };
	nanosleep(&ts, NULL); /* a signal cuts it short: *stop is seen next */
}

static int move_all(struct mover *m)
{
	struct lfsvol_copy_io *io = m->io;
	int r = 0;

	while (!r && io->done < io->bytes) {
		size_t len = io->bytes - io->done < CHUNK ? io->bytes - io->done : CHUNK;

		if (*io->stop)
			return lfsvol_fail(LFSVOL_EFAIL, -EINTR,
					   "copy: stopped after %llu of %llu bytes",
					   (unsigned long long)io->done,
					   (unsigned long long)io->bytes);
		r = move_chunk(m, io->done, len);
		if (!r) {
			io->done += len;
			pace(m); /* before the progress: its rate is then the paced one */
		}
		if (io->progress)
			io->progress(io, io->arg);
	}
	/* the driver's flush reaches every fabric device under the shelf */
	if (!r && fsync(m->out))
		r = lfsvol_fail(LFSVOL_EFAIL, -errno, "copy: flushing /dev/%s: %s", io->dst_disk,
				strerror(errno));
	return r;
}

int lfsvol_copy_bytes(struct lfsvol_copy_io *io)
{
	struct mover m = { .io = io, .in = -1, .out = -1 };
	int r = 0;

	io->done = 0;
	m.buf = aligned_alloc(4096, CHUNK);
	if (!m.buf)
		return lfsvol_fail(LFSVOL_EFAIL, -ENOMEM, "copy: no memory for a %u MiB buffer",
				   CHUNK >> 20);
	m.in = open_dev(io->src_disk, O_RDONLY);
	if (m.in >= 0)
		m.out = open_dev(io->dst_disk, O_WRONLY);
	if (m.in < 0 || m.out < 0)
		r = m.in < 0 ? m.in : m.out;
	m.t0 = lfsvol_now_ms();
	if (!r)
		r = move_all(&m);
	io->ms = lfsvol_now_ms() - m.t0;
	if (m.out >= 0)
		close(m.out);
	if (m.in >= 0)
		close(m.in);
	free(m.buf);
	return r;
}
