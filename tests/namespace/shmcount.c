// SPDX-License-Identifier: MIT
/*
 * shmcount: a 64-bit counter in a file's first page, mapped MAP_SHARED_VALIDATE
 * | MAP_SYNC, written on one node and watched on another (tests/namespace/
 * nodes.t). Word 0 is the counter, word 1 the watcher's "seen enough": the
 * watcher's store travels back to the writer, so one run checks both ways.
 * Every store is flushed out of the writer's caches (clflush + sfence) and
 * every load is preceded by a flush of the reader's own line
 * (docs/NAMESPACE.md, "Coherence").
 *
 * shmcount write FILE SECONDS   clear word 1, then store counter+1, +2, ...
 *                               until word 1 is set or SECONDS pass; print
 *                               "wrote N, stopped by the watcher" or
 *                               "wrote N, timed out"; exit 0 only if stopped
 * shmcount watch FILE K SECONDS print "mapped", then the first value and K
 *                               more values, each larger than the one
 *                               before ("saw V0 V1 ... VK"), then set word 1;
 *                               exit 1 (with what it saw) if that takes
 *                               longer than SECONDS
 * A failed open or mmap prints the call and its error and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define SHM_LEN 4096
#define SHM_SEEN_MAX 64

static void line_flush(volatile uint64_t *p)
{
#if defined(__x86_64__) || defined(__i386__)
	asm volatile("clflush %0" : "+m"(*(volatile char *)p));
	asm volatile("mfence" ::: "memory");
#else
	__sync_synchronize();
#endif
}

static void store_flushed(volatile uint64_t *p, uint64_t v)
{
	*p = v;
	line_flush(p);
}

static uint64_t load_fresh(volatile uint64_t *p)
{
	line_flush(p);
	return *p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile uint64_t *shm_map(const char *path)
{
	void *p;
	int fd;

	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("mmap(MAP_SHARED_VALIDATE|MAP_SYNC) of %s: %s\n", path, strerror(errno));
		return NULL;
	}
	return p;
}

static int shm_write(volatile uint64_t *w, double secs)
{
	double end = now() + secs;
	uint64_t v = load_fresh(&w[0]), n = 0;

	store_flushed(&w[1], 0);
	printf("mapped\n");
	fflush(stdout);
	while (!load_fresh(&w[1])) {
		if (now() > end) {
			printf("wrote %llu, timed out\n", (unsigned long long)n);
			return 1;
		}
		store_flushed(&w[0], ++v);
		n++;
	}
	printf("wrote %llu, stopped by the watcher\n", (unsigned long long)n);
	return 0;
}

static int shm_watch(volatile uint64_t *w, int k, double secs)
{
	uint64_t seen[SHM_SEEN_MAX + 1], v;
	double end = now() + secs;
	int n = 0, i, rc = 0;

	printf("mapped\n");
	fflush(stdout);
	seen[n++] = load_fresh(&w[0]);
	while (n <= k) {
		if (now() > end) {
			rc = 1;
			break;
		}
		v = load_fresh(&w[0]);
		if (v > seen[n - 1])
			seen[n++] = v;
	}
	if (rc)
		printf("timed out after %d values:", n - 1);
	else
		printf("saw");
	for (i = 0; i < n; i++)
		printf(" %llu", (unsigned long long)seen[i]);
	printf("\n");
	if (!rc)
		store_flushed(&w[1], 1);
	return rc;
}

int main(int argc, char **argv)
{
	volatile uint64_t *w;
	int k;

	if (argc == 4 && !strcmp(argv[1], "write")) {
		w = shm_map(argv[2]);
		return w ? shm_write(w, atof(argv[3])) : 1;
	}
	if (argc == 5 && !strcmp(argv[1], "watch")) {
		k = atoi(argv[3]);
		if (k < 1 || k > SHM_SEEN_MAX) {
			fprintf(stderr, "shmcount: K must be 1 to %d, not `%s'\n", SHM_SEEN_MAX,
				argv[3]);
			return 2;
		}
		w = shm_map(argv[2]);
		return w ? shm_watch(w, k, atof(argv[4])) : 1;
	}
	fprintf(stderr, "usage: shmcount write FILE SECONDS | watch FILE K SECONDS\n");
	return 2;
}
