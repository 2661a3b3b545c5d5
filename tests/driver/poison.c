// SPDX-License-Identifier: MIT
/*
 * The poison test's view of one page of a file (tests/driver/guest/poison.sh):
 * poison pfn FILE OFFSET: map the page at OFFSET shared, load from it, print
 *   its page frame number from /proc/self/pagemap (root sees it).
 * poison phys FILE OFFSET: print the byte on the file's block device that
 *   holds byte OFFSET (FIBMAP; root).
 * poison hold FILE OFFSET: map the page, load from it, print "mapped", wait
 *   until standard input ends, load from the page again and exit 0 (a SIGBUS
 *   ends it before, by the default action).
 * poison hold-early FILE OFFSET: the same, asking for early kill
 *   (PR_MCE_KILL_EARLY): memory failure signals it as soon as the page is
 *   poisoned, not only when it touches it.
 * poison touch FILE OFFSET: map the page (a new mapping) and load from it;
 *   exit 0 if the load returned, 2 with "SIGBUS" if it raised SIGBUS.
 * Exit 1 with a message on any other failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PAGE 4096

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "poison: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

static volatile char *map_page(const char *path, int fd, long off)
{
	void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, off & ~(long)(PAGE - 1));

	if (p == MAP_FAILED) {
		fail("mmap", path);
		return NULL;
	}
	return p;
}

static int print_pfn(const char *path, int fd, long off)
{
	volatile char *p = map_page(path, fd, off);
	uint64_t entry;
	int pm;

	if (!p)
		return 1;
	(void)p[off & (PAGE - 1)];
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0 || pread(pm, &entry, 8, (uintptr_t)p / PAGE * 8) != 8)
		return fail("reading", "/proc/self/pagemap");
	if (!(entry >> 63) || !(entry & ((1ULL << 55) - 1))) {
		fprintf(stderr, "poison: page not present or no PFN shown (entry %#llx)\n",
			(unsigned long long)entry);
		return 1;
	}
	printf("%llu\n", (unsigned long long)(entry & ((1ULL << 55) - 1)));
	return 0;
}

static int print_phys(const char *path, int fd, long off)
{
	int blksz, blk = off / PAGE;

	if (ioctl(fd, FIGETBSZ, &blksz) || blksz != PAGE)
		return fail("FIGETBSZ (4 KiB blocks expected)", path);
	if (ioctl(fd, FIBMAP, &blk) || !blk)
		return fail("FIBMAP", path);
	printf("%lld\n", (long long)blk * PAGE + (off & (PAGE - 1)));
	return 0;
}

static int hold(const char *path, int fd, long off, int early)
{
	volatile char *p = map_page(path, fd, off);
	char buf[64];

	if (!p)
		return 1;
	if (early && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		return fail("prctl(PR_MCE_KILL_EARLY)", path);
	(void)p[off & (PAGE - 1)];
	printf("mapped\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	(void)p[off & (PAGE - 1)];
	return 0;
}

static int touch(const char *path, int fd, long off)
{
	volatile char *p = map_page(path, fd, off);

	if (!p)
		return 1;
	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(bus_jmp, 1)) {
		printf("SIGBUS\n");
		return 2;
	}
	(void)p[off & (PAGE - 1)];
	return 0;
}

int main(int argc, char **argv)
{
	long off;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: poison pfn|phys|hold|hold-early|touch FILE OFFSET\n");
		return 1;
	}
	off = strtol(argv[3], NULL, 0);
	fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return fail("open", argv[2]);
	if (!strcmp(argv[1], "pfn"))
		return print_pfn(argv[2], fd, off);
	if (!strcmp(argv[1], "phys"))
		return print_phys(argv[2], fd, off);
	if (!strcmp(argv[1], "hold") || !strcmp(argv[1], "hold-early"))
		return hold(argv[2], fd, off, !strcmp(argv[1], "hold-early"));
	if (!strcmp(argv[1], "touch"))
		return touch(argv[2], fd, off);
	fprintf(stderr, "poison: unknown command `%s'\n", argv[1]);
	return 1;
}
