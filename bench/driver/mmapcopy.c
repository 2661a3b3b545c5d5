// SPDX-License-Identifier: MIT
/*
 * mmapcopy FILE_A FILE_B BYTES PASSES: map BYTES of each file shared, fault
 * them in, then for each pass time memcpy DRAM -> file and file -> DRAM on A
 * and on B, in alternating order. Prints one line per pass:
 *     A_WRITE A_READ B_WRITE B_READ      (MiB/s)
 * Alternating within a pass puts both files under the same conditions.
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

static char *map_file(const char *path, uint64_t len)
{
	int fd = open(path, O_RDWR);
	char *p;

	if (fd < 0) {
		perror(path);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	return p;
}

/* Write then read @len bytes of @map; MiB/s into w and r. */
static void copy_pass(char *map, char *dram, uint64_t len, double *w, double *r)
{
	double t = now();

	memcpy(map, dram, len);
	*w = (len >> 20) / (now() - t);
	t = now();
	memcpy(dram, map, len);
	*r = (len >> 20) / (now() - t);
}

int main(int argc, char **argv)
{
	double aw, ar, bw, br;
	char err[256], *a, *b, *dram;
	uint64_t len;
	int passes, i;

	if (argc != 5 || lfs_parse_size(argv[3], &len, err, sizeof(err)) || !len ||
	    (passes = atoi(argv[4])) < 1) {
		fprintf(stderr, "usage: mmapcopy FILE_A FILE_B BYTES PASSES\n");
		return 2;
	}
	a = map_file(argv[1], len);
	b = map_file(argv[2], len);
	dram = malloc(len);
	if (!a || !b || !dram)
		return 1;
	memset(dram, 0x5a, len);
	memcpy(a, dram, len); /* fault everything in */
	memcpy(b, dram, len);
	for (i = 0; i < passes; i++) {
		if (i % 2) {
			copy_pass(b, dram, len, &bw, &br);
			copy_pass(a, dram, len, &aw, &ar);
		} else {
			copy_pass(a, dram, len, &aw, &ar);
			copy_pass(b, dram, len, &bw, &br);
		}
		printf("%.1f %.1f %.1f %.1f\n", aw, ar, bw, br);
	}
	return 0;
}
