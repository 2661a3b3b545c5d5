// SPDX-License-Identifier: MIT
/*
 * pattern SEED BYTES [OFFSET]: write BYTES of deterministic pseudo-random
 * data to stdout, the part starting at byte OFFSET (a multiple of 8) of the
 * endless stream for SEED. Counter-based (splitmix64), so any part can be
 * produced on its own, and fast enough under TCG where /dev/urandom is not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_rules.h"

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

int main(int argc, char **argv)
{
	static uint64_t buf[1 << 14];
	uint64_t seed, left, off = 0, i;
	struct lfs_size sz, so = { 0 };
	char err[256];
	size_t j, n;

	if ((argc != 3 && argc != 4) ||
	    lfs_size_parse(argv[2], LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err)) ||
	    (argc == 4 && (lfs_size_parse(argv[3], LFS_SIZE_BARE | LFS_SIZE_ZERO, &so, err,
					  sizeof(err)) ||
			   so.value % 8))) {
		fprintf(stderr, "usage: pattern SEED BYTES [OFFSET]\n");
		return 2;
	}
	left = sz.value;
	off = so.value;
	seed = strtoull(argv[1], NULL, 0) << 40;
	i = off / 8;
	while (left) {
		for (j = 0; j < sizeof(buf) / sizeof(buf[0]); j++)
			buf[j] = splitmix64(seed + i++);
		n = left < sizeof(buf) ? left : sizeof(buf);
		if (fwrite(buf, 1, n, stdout) != n) {
			if (errno == EPIPE)
				return 0;
			perror("pattern: write");
			return 1;
		}
		left -= n;
	}
	return 0;
}
