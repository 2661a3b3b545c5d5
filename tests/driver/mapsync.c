// SPDX-License-Identifier: MIT
/*
 * mapsync FILE: map the first page of FILE with MAP_SHARED_VALIDATE|MAP_SYNC
 *   (which only a real, synchronous DAX mapping allows), store to it and
 *   unmap. Exit 0 if the mapping was allowed, 1 with the error otherwise.
 * mapsync --touch FILE BYTES: map BYTES of FILE shared and store one byte in
 *   every 4 KiB page, so each fault is visible to the fs_dax tracepoints.
 * mapsync --hold FILE BYTES: map BYTES of FILE with MAP_SYNC, store each
 *   page's number in it, print "mapped N pages", then keep the mapping until
 *   standard input ends; exit 0 if every page still holds its number, 1 if
 *   not (naming the first that does not).
 * mapsync --cat FILE BYTES: map BYTES of FILE with MAP_SYNC and write the
 *   mapped bytes to standard output, read with loads from the mapping (the
 *   demo compares their sha256 with what another node wrote).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lfs_rules.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

static int map_sync(const char *path)
{
	int fd = open(path, O_RDWR);
	char *p;

	if (fd < 0) {
		fprintf(stderr, "mapsync: %s: %s\n", path, strerror(errno));
		return 1;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mapsync: mmap(MAP_SHARED_VALIDATE|MAP_SYNC) of %s: %s\n", path,
			strerror(errno));
		close(fd);
		return 1;
	}
	p[0] ^= 0;
	munmap(p, 4096);
	close(fd);
	printf("MAP_SYNC mapping of %s allowed\n", path);
	return 0;
}

/* SIZE -> bytes in *len; 0, or 2 with the parser's message printed */
static int parse_len(const char *size, uint64_t *len)
{
	struct lfs_size sz;
	char err[256];

	if (lfs_size_parse(size, LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err))) {
		fprintf(stderr, "mapsync: %s\n", err);
		return 2;
	}
	*len = sz.value;
	return 0;
}

static int touch(const char *path, const char *size)
{
	uint64_t len, off;
	volatile char *p;
	int fd;

	if (parse_len(size, &len))
		return 2;
	fd = open(path, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "mapsync: %s: %s\n", path, strerror(errno));
		return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mapsync: mmap of %s: %s\n", path, strerror(errno));
		close(fd);
		return 1;
	}
	for (off = 0; off < len; off += 4096)
		p[off] = (char)off;
	munmap((void *)p, len);
	close(fd);
	return 0;
}

/* Waits for end of file on standard input (the test closes its end). */
static void wait_stdin_eof(void)
{
	char buf[64];

	while (read(0, buf, sizeof(buf)) > 0 || errno == EINTR)
		errno = 0;
}

/* LEN bytes of PATH mapped with MAP_SYNC, or NULL with the error printed */
static void *map_sync_len(const char *path, uint64_t len)
{
	void *p;
	int fd;

	fd = open(path, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "mapsync: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mapsync: mmap(MAP_SHARED_VALIDATE|MAP_SYNC) of %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	return p;
}

static int cat(const char *path, const char *size)
{
	uint64_t len, off;
	const char *p;
	ssize_t n;

	if (parse_len(size, &len))
		return 2;
	p = map_sync_len(path, len);
	if (!p)
		return 1;
	for (off = 0; off < len; off += n) {
		n = write(1, p + off, len - off);
		if (n <= 0) {
			perror("mapsync: write");
			return 1;
		}
	}
	munmap((void *)p, len);
	return 0;
}

static int hold(const char *path, const char *size)
{
	uint64_t len, off;
	uint64_t *p;

	if (parse_len(size, &len))
		return 2;
	p = map_sync_len(path, len);
	if (!p)
		return 1;
	for (off = 0; off < len; off += 4096)
		p[off / 8] = off / 4096;
	printf("mapped %llu pages\n", (unsigned long long)(len / 4096));
	fflush(stdout);
	wait_stdin_eof();
	for (off = 0; off < len; off += 4096) {
		if (p[off / 8] != off / 4096) {
			printf("page %llu holds %llu after the wait\n", (unsigned long long)(off / 4096),
			       (unsigned long long)p[off / 8]);
			return 1;
		}
	}
	munmap(p, len);
	printf("all %llu pages intact\n", (unsigned long long)(len / 4096));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2)
		return map_sync(argv[1]);
	if (argc == 4 && !strcmp(argv[1], "--touch"))
		return touch(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "--hold"))
		return hold(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "--cat"))
		return cat(argv[2], argv[3]);
	fprintf(stderr, "usage: mapsync FILE | mapsync --touch|--hold|--cat FILE BYTES\n");
	return 2;
}
