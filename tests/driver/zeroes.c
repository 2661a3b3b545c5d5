// SPDX-License-Identifier: MIT
/*
 * zeroes PATH [OFFSET:LENGTH ...]: do these ranges of PATH (a file or a
 * block device; all of it when no range is given) read as zeroes? Reads
 * with O_DIRECT where PATH and the ranges allow it, in 1 MiB pieces. Prints each range
 * that does not, with the first byte that is not zero, and exits 1; exits 0
 * when every range reads as zeroes, 2 on bad usage or an I/O error (named).
 * One process for many ranges: under TCG a fork costs tens of ms, a MiB
 * read about 15.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lfs_rules.h"

#define PIECE (1u << 20)

/* first byte of buf[0..n) that is not zero, or n */
static size_t first_nonzero(const unsigned char *buf, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, buf + i, 8);
		if (w)
			break;
	}
	for (; i < n && !buf[i]; i++)
		;
	return i;
}

/*
 * 0 if [off, off + len) reads as zeroes, 1 if not (printed), 2 on an error
 * (printed). A range past the end of PATH is an error: it cannot read.
 */
static int check_range(int fd, const char *path, uint64_t off, uint64_t len, unsigned char *buf)
{
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < PIECE ? len - done : PIECE, at;
		ssize_t got = pread(fd, buf, want, off + done);

		/* an unaligned piece: read it through the page cache */
		if (got < 0 && errno == EINVAL && (fcntl(fd, F_GETFL) & O_DIRECT) &&
		    !fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT))
			continue;
		if (got < 0) {
			fprintf(stderr, "zeroes: reading %s at %" PRIu64 ": %s\n", path, off + done,
				strerror(errno));
			return 2;
		}
		if (got == 0) {
			fprintf(stderr, "zeroes: %s ends at %" PRIu64 ", before %" PRIu64 "\n",
				path, off + done, off + len);
			return 2;
		}
		at = first_nonzero(buf, got);
		if (at < (size_t)got) {
			printf("%" PRIu64 ":%" PRIu64 " not zero at %" PRIu64 "\n", off, len,
			       off + done + at);
			return 1;
		}
		done += got;
	}
	return 0;
}

static int whole_size(int fd, const char *path, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st)) {
		fprintf(stderr, "zeroes: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode)) {
		*size = st.st_size;
		return 0;
	}
	if (ioctl(fd, BLKGETSIZE64, size)) {
		fprintf(stderr, "zeroes: %s: BLKGETSIZE64: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_range(const char *arg, uint64_t *off, uint64_t *len)
{
	struct lfs_size so, sl;
	char err[256], *s = strdup(arg), *colon;
	int ret = -1;

	if (!s)
		return -1;
	colon = strchr(s, ':');
	if (colon) {
		*colon = '\0';
		if (!lfs_size_parse(s, LFS_SIZE_BARE | LFS_SIZE_ZERO, &so, err, sizeof(err)) &&
		    !lfs_size_parse(colon + 1, LFS_SIZE_BARE, &sl, err, sizeof(err))) {
			*off = so.value;
			*len = sl.value;
			ret = 0;
		}
	}
	if (ret)
		fprintf(stderr, "zeroes: bad range '%s' (want OFFSET:LENGTH, in bytes)\n", arg);
	free(s);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	uint64_t off, len;
	int fd, i, rc, worst = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: zeroes PATH [OFFSET:LENGTH ...]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 && errno == EINVAL)
		fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "zeroes: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (posix_memalign((void **)&buf, 4096, PIECE)) {
		fprintf(stderr, "zeroes: out of memory\n");
		return 2;
	}
	if (argc == 2) {
		if (whole_size(fd, argv[1], &len))
			return 2;
		return check_range(fd, argv[1], 0, len, buf);
	}
	for (i = 2; i < argc; i++) {
		if (parse_range(argv[i], &off, &len))
			return 2;
		rc = check_range(fd, argv[1], off, len, buf);
		if (rc == 2)
			return 2;
		if (rc > worst)
			worst = rc;
	}
	return worst;
}
