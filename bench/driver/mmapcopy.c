// SPDX-License-Identifier: MIT
/*
 * mmapcopy FILE_A FILE_B BYTES PASSES: map BYTES of each file shared and
 * fault them in; then, PASSES times, copy the files 2 MiB chunk by chunk,
 * DRAM -> file and file -> DRAM, alternating A and B chunk by chunk so that
 * both see the same conditions. Each chunk copy is timed; one line per pass:
 *     A_WRITE A_READ B_WRITE B_READ
 * in MiB/s, each the median over the pass's chunks. A median resists the
 * emulated machine being descheduled by the host now and then.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "liblfs.h"

#define CHUNK (2UL << 20)

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

/* Seconds for one chunk copy. */
static double timed_copy(char *dst, const char *src)
{
	double t = now();

	memcpy(dst, src, CHUNK);
	return now() - t;
}

int main(int argc, char **argv)
{
	double *aw, *ar, *bw, *br, mib = CHUNK / (double)(1 << 20);
	char err[256], *a, *b, *dram;
	size_t chunks, c;
	uint64_t len;
	int passes, i;

	if (argc != 5 || lfs_parse_size(argv[3], &len, err, sizeof(err)) || len < CHUNK ||
	    (passes = atoi(argv[4])) < 1) {
		fprintf(stderr, "usage: mmapcopy FILE_A FILE_B BYTES PASSES\n");
		return 2;
	}
	chunks = len / CHUNK;
	a = map_file(argv[1], len);
	b = map_file(argv[2], len);
	dram = malloc(CHUNK);
	aw = calloc(chunks, sizeof(double));
	ar = calloc(chunks, sizeof(double));
	bw = calloc(chunks, sizeof(double));
	br = calloc(chunks, sizeof(double));
	if (!a || !b || !dram || !aw || !ar || !bw || !br)
		return 1;
	memset(dram, 0x5a, CHUNK);
	for (c = 0; c < chunks; c++) { /* fault everything in */
		memcpy(a + c * CHUNK, dram, CHUNK);
		memcpy(b + c * CHUNK, dram, CHUNK);
	}
	for (i = 0; i < passes; i++) {
		for (c = 0; c < chunks; c++) {
			int b_first = (c + i) % 2;

			if (b_first)
				bw[c] = mib / timed_copy(b + c * CHUNK, dram);
			aw[c] = mib / timed_copy(a + c * CHUNK, dram);
			if (!b_first)
				bw[c] = mib / timed_copy(b + c * CHUNK, dram);
			if (b_first)
				br[c] = mib / timed_copy(dram, b + c * CHUNK);
			ar[c] = mib / timed_copy(dram, a + c * CHUNK);
			if (!b_first)
				br[c] = mib / timed_copy(dram, b + c * CHUNK);
		}
		printf("%.1f %.1f %.1f %.1f\n", median(aw, chunks), median(ar, chunks),
		       median(bw, chunks), median(br, chunks));
	}
	return 0;
}
