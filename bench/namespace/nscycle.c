// SPDX-License-Identifier: GPL-2.0
/*
 * nscycle - the management cycle of issue 16 without process starts: in one
 * process, alternately,
 *   fs      the system calls of touch, truncate -s SIZE and rm on DIR/fN,
 *           as coreutils makes them (strace of Debian 12's coreutils 9.1);
 *   lfsvol  lfsvol's own main() for "create vN -s BOOKSb" and "remove vN",
 *           linked in (lvmish/lfsvol/lfsvol.a), its output to /dev/null.
 * Each command does all its own work (lfsvol reads its configuration and
 * opens its librarian session every time, as the program does); only the
 * exec and the dynamic loader are left out, which under QEMU's TCG cost
 * more than the work (docs/bench-namespace.md).
 *
 *   nscycle CYCLES DIR CONF BOOKS BOOK_BYTES
 * prints one line per cycle and kind: "CYCLE\tKIND\tMICROSECONDS".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int lfsvol_main(int argc, char **argv);

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "nscycle: %s %s: %s\n", what, path, strerror(errno));
	return -1;
}

/* touch: open, futimens, close */
static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK, 0666);

	if (fd < 0)
		return fail("touch", path);
	if (futimens(fd, NULL)) {
		close(fd);
		return fail("touch (utimensat)", path);
	}
	return close(fd) ? fail("touch (close)", path) : 0;
}

/* truncate -s SIZE: open, ftruncate, close */
static int truncate_to(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK, 0666);

	if (fd < 0)
		return fail("truncate", path);
	if (ftruncate(fd, size)) {
		close(fd);
		return fail("truncate (ftruncate)", path);
	}
	return close(fd) ? fail("truncate (close)", path) : 0;
}

/* rm: fstatat without following, unlinkat */
static int rm(const char *path)
{
	struct stat st;

	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW))
		return fail("rm (stat)", path);
	return unlinkat(AT_FDCWD, path, 0) ? fail("rm", path) : 0;
}

/* the three commands, each one's time in us[] */
static int fs_cycle(const char *dir, int i, off_t size, long long us[3])
{
	char path[4096];
	long long t = now_us();

	snprintf(path, sizeof(path), "%s/f%d", dir, i);
	if (touch(path))
		return -1;
	us[0] = now_us() - t;
	if (truncate_to(path, size))
		return -1;
	us[1] = now_us() - t - us[0];
	if (rm(path))
		return -1;
	us[2] = now_us() - t - us[0] - us[1];
	return 0;
}

/* lfsvol -c CONF ARGS..., as its main() would run it, stdout to /dev/null */
static int lfsvol(const char *conf, char *a0, char *a1, char *a2, char *a3)
{
	char *argv[] = { "lfsvol", "-c", (char *)conf, a0, a1, a2, a3, NULL };
	int argc = 3 + !!a0 + !!a1 + !!a2 + !!a3;
	int out = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY), r;

	if (out < 0 || null < 0)
		return fail("dup", "stdout");
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	close(null);
	optind = 0; /* glibc: a full getopt reset for each run */
	r = lfsvol_main(argc, argv);
	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	close(out);
	if (r)
		fprintf(stderr, "nscycle: lfsvol %s %s: exit %d\n", a0, a1, r);
	return r;
}

static int lfsvol_cycle(const char *conf, int i, const char *books)
{
	char name[32], size[32];

	snprintf(name, sizeof(name), "v%d", i);
	snprintf(size, sizeof(size), "%s", books);
	if (lfsvol(conf, "create", name, "-s", size))
		return -1;
	return lfsvol(conf, "remove", name, NULL, NULL);
}

int main(int argc, char **argv)
{
	int cycles;
	off_t size;
	char books[32];

	if (argc != 6) {
		fprintf(stderr, "usage: nscycle CYCLES DIR CONF BOOKS BOOK_BYTES\n");
		return 2;
	}
	cycles = atoi(argv[1]);
	size = (off_t)atoll(argv[4]) * atoll(argv[5]);
	snprintf(books, sizeof(books), "%sb", argv[4]);
	if (cycles <= 0 || size <= 0) {
		fprintf(stderr, "nscycle: bad CYCLES '%s' or size %s x %s\n", argv[1], argv[4],
			argv[5]);
		return 2;
	}
	for (int i = 1; i <= cycles; i++) {
		long long t[3], us[3];
		int fs_first = i % 2;

		t[0] = now_us();
		if (fs_first ? fs_cycle(argv[2], i, size, us) : lfsvol_cycle(argv[3], i, books))
			return 1;
		t[1] = now_us();
		if (fs_first ? lfsvol_cycle(argv[3], i, books) : fs_cycle(argv[2], i, size, us))
			return 1;
		t[2] = now_us();
		printf("%d\tfs-inproc\t%lld\n%d\tlfsvol-inproc\t%lld\n", i,
		       fs_first ? t[1] - t[0] : t[2] - t[1], i,
		       fs_first ? t[2] - t[1] : t[1] - t[0]);
		printf("%d\ttouch-inproc\t%lld\n%d\ttruncate-inproc\t%lld\n%d\trm-inproc\t%lld\n",
		       i, us[0], i, us[1], i, us[2]);
		fflush(stdout);
	}
	return 0;
}
