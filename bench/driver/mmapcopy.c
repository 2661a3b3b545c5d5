// SPDX-License-Identifier: MIT
/*
 * mmapcopy FILE BYTES PASSES: map BYTES of FILE shared and fault it in;
 * then, PASSES times, copy it 2 MiB chunk by chunk DRAM -> file and
 * file -> DRAM, timing each chunk. Prints "WRITE READ" in MiB/s, each the
 * median over all chunks: a median resists the emulated machine being
 * descheduled by the host now and then.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lfs_rules.h"

#define CHUNK (2UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* MiB/s of one chunk copy. */
static double timed_copy(char *dst, const char *src)
{
	double t = now();

	memcpy(dst, src, CHUNK);
	return CHUNK / (double)(1 << 20) / (now() - t);
}

int main(int argc, char **argv)
{
	char err[256], *map, *dram;
	size_t chunks, c, n = 0;
	struct lfs_size sz;
	double *w, *r;
	uint64_t len;
	int passes, i, fd;

	if (argc != 4 || lfs_size_parse(argv[2], LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err)) ||
	    (len = sz.value) < CHUNK || (passes = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: mmapcopy FILE BYTES PASSES\n");
		return 2;
	}
	chunks = len / CHUNK;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	dram = malloc(CHUNK);
	w = calloc(chunks * passes, sizeof(double));
	r = calloc(chunks * passes, sizeof(double));
	if (map == MAP_FAILED || !dram || !w || !r) {
		perror("mmapcopy");
		return 1;
	}
	memset(dram, 0x5a, CHUNK);
	for (c = 0; c < chunks; c++) /* fault everything in */
		memcpy(map + c * CHUNK, dram, CHUNK);
	for (i = 0; i < passes; i++) {
		for (c = 0; c < chunks; c++, n++) {
			w[n] = timed_copy(map + c * CHUNK, dram);
			r[n] = timed_copy(dram, map + c * CHUNK);
		}
	}
	printf("%.1f %.1f\n", median(w, n), median(r, n));
	return 0;
}
