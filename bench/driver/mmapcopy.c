// SPDX-License-Identifier: MIT
/*
 * mmapcopy FILE BYTES PASSES: map BYTES of FILE shared, fault it in once,
 * then time PASSES rounds of memcpy DRAM -> file and file -> DRAM. Prints
 * "write MiB/s read MiB/s".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "liblfs.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t len;
	double t, wr = 0, rd = 0;
	char err[256], *map, *dram;
	int fd, passes, i;

	if (argc != 4 || lfs_parse_size(argv[2], &len, err, sizeof(err)) || !len ||
	    (passes = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: mmapcopy FILE BYTES PASSES\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	dram = malloc(len);
	if (map == MAP_FAILED || !dram) {
		perror("mmapcopy");
		return 1;
	}
	memset(dram, 0x5a, len);
	memcpy(map, dram, len); /* fault everything in */
	for (i = 0; i < passes; i++) {
		t = now();
		memcpy(map, dram, len);
		wr += now() - t;
		t = now();
		memcpy(dram, map, len);
		rd += now() - t;
	}
	printf("%.1f %.1f\n", passes * (len >> 20) / wr, passes * (len >> 20) / rd);
	munmap(map, len);
	close(fd);
	return 0;
}
