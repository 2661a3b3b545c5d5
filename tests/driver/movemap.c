// SPDX-License-Identifier: MIT
/*
 * movemap FILE BYTES sync|shared STOPFILE: map BYTES of FILE (MAP_SYNC or
 *   plain MAP_SHARED) and store rounds of a pattern into it through the
 *   mapping until STOPFILE exists: before round r overwrites a page, every
 *   word of it must still hold round r-1's value (a store lost or torn by a
 *   book move shows there). At the end every word must hold the last round,
 *   read through the mapping and then with pread(). Prints "rounds R".
 * movemap --check FILE BYTES: pread BYTES of FILE and check that every word
 *   holds one round's value (the first word's). Prints "rounds R".
 * Exit 0 if all held, 1 naming the first word that did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define PAGE 4096
#define WORDS (PAGE / 8)

static uint64_t pat(uint64_t round, uint64_t page, uint64_t word)
{
	return (round << 40) ^ (page << 12) ^ (word << 1) ^ 0x5a5a000000000001ULL;
}

/* Does page p hold round r everywhere? Names the first word that does not. */
static int page_holds(const uint64_t *w, uint64_t r, uint64_t p, const char *how)
{
	for (uint64_t i = 0; i < WORDS; i++) {
		if (w[i] != pat(r, p, i)) {
			fprintf(stderr,
				"movemap: %s: page %" PRIu64 " word %" PRIu64
				": expected round %" PRIu64 " (%#" PRIx64 "), got %#" PRIx64 "\n",
				how, p, i, r, pat(r, p, i), w[i]);
			return 0;
		}
	}
	return 1;
}

static int check_file(int fd, uint64_t pages, uint64_t r)
{
	uint64_t buf[WORDS];

	for (uint64_t p = 0; p < pages; p++) {
		if (pread(fd, buf, PAGE, (off_t)(p * PAGE)) != PAGE) {
			fprintf(stderr, "movemap: pread page %" PRIu64 ": %s\n", p,
				strerror(errno));
			return 0;
		}
		if (!r)
			r = (buf[0] ^ pat(0, 0, 0)) >> 40;
		if (!page_holds(buf, r, p, "pread"))
			return 0;
	}
	printf("rounds %" PRIu64 "\n", r);
	return 1;
}

static int run(int fd, uint64_t pages, int sync, const char *stop)
{
	int flags = sync ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED;
	uint64_t *m, r;

	m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "movemap: mmap: %s\n", strerror(errno));
		return 0;
	}
	for (r = 1;; r++) {
		for (uint64_t p = 0; p < pages; p++) {
			uint64_t *w = m + p * WORDS;

			if (r > 1 && !page_holds(w, r - 1, p, "mapping"))
				return 0;
			for (uint64_t i = 0; i < WORDS; i++)
				w[i] = pat(r, p, i);
		}
		if (!access(stop, F_OK))
			break;
	}
	for (uint64_t p = 0; p < pages; p++)
		if (!page_holds(m + p * WORDS, r, p, "mapping at the end"))
			return 0;
	if (msync(m, pages * PAGE, MS_SYNC) || munmap(m, pages * PAGE)) {
		fprintf(stderr, "movemap: msync: %s\n", strerror(errno));
		return 0;
	}
	return check_file(fd, pages, r);
}

int main(int argc, char **argv)
{
	int check = argc == 4 && !strcmp(argv[1], "--check");
	uint64_t pages;
	int fd, ok;

	if (!check && argc != 5) {
		fprintf(stderr, "usage: movemap FILE BYTES sync|shared STOPFILE\n"
				"       movemap --check FILE BYTES\n");
		return 2;
	}
	pages = strtoull(argv[2 + check], NULL, 0) / PAGE;
	fd = open(argv[1 + check], O_RDWR);
	if (fd < 0 || !pages) {
		fprintf(stderr, "movemap: %s: %s\n", argv[1 + check],
			fd < 0 ? strerror(errno) : "no pages");
		return 1;
	}
	ok = check ? check_file(fd, pages, 0) : run(fd, pages, !strcmp(argv[3], "sync"), argv[4]);
	close(fd);
	return ok ? 0 : 1;
}
