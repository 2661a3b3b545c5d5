// SPDX-License-Identifier: MIT
/*
 * mapsync FILE: map the first page of FILE with MAP_SHARED_VALIDATE|MAP_SYNC
 *   (which only a real, synchronous DAX mapping allows), store to it and
 *   unmap. Exit 0 if the mapping was allowed, 1 with the error otherwise.
 * mapsync --touch FILE BYTES: map BYTES of FILE shared and store one byte in
 *   every 4 KiB page, so each fault is visible to the fs_dax tracepoints.
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

static int touch(const char *path, const char *size)
{
	uint64_t len, off;
	struct lfs_size sz;
	char err[256];
	volatile char *p;
	int fd;

	if (lfs_size_parse(size, LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err))) {
		fprintf(stderr, "mapsync: %s\n", err);
		return 2;
	}
	len = sz.value;
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

int main(int argc, char **argv)
{
	if (argc == 2)
		return map_sync(argv[1]);
	if (argc == 4 && !strcmp(argv[1], "--touch"))
		return touch(argv[2], argv[3]);
	fprintf(stderr, "usage: mapsync FILE | mapsync --touch FILE BYTES\n");
	return 2;
}
