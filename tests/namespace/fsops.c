// SPDX-License-Identifier: MIT
/*
 * fsops: run file system calls in one process, step by step, and print one
 * line per step: "ok", a value, "error ENAME", or "SIGBUS" (then exit 7).
 * The tests of tests/namespace compare these lines with what they expect.
 *
 * usage: fsops STEP...
 *   open PATH MODE       MODE: r w rw, with c (O_CREAT) x (O_EXCL)
 *                        t (O_TRUNC) d (O_DIRECT), e.g. rwc
 *   close                the open file
 *   mmap LEN MODE        MODE: shared, private or sync (MAP_SHARED_VALIDATE |
 *                        MAP_SYNC); read and write
 *   munmap
 *   store OFF BYTE       a byte into the mapping
 *   load OFF             print the mapping's byte
 *   fill LEN BYTE        store BYTE in the mapping's first LEN bytes
 *   pwrite OFF LEN BYTE  LEN bytes of BYTE at OFF
 *   pread OFF LEN        print the bytes' sum and count ("sum N of M")
 *   ftruncate SIZE | fallocate MODE OFF LEN | fsync | msync
 *   rename OLD NEW FLAGS FLAGS: none, noreplace, exchange or whiteout
 *   unlink PATH | truncate PATH SIZE | stat PATH (prints the size)
 *   mknod PATH           a regular file made by mknod(2): the filesystem's
 *                        create, not open(O_CREAT)
 *   wait                 read standard input until it ends
 *   spin SECONDS         store into every page of the mapping, again and
 *                        again, for SECONDS (a revoked mapping: SIGBUS)
 *   sleep MS
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
#endif

static int fd = -1;
static unsigned char *map;
static size_t map_len;

static void on_sigbus(int sig)
{
	static const char msg[] = "SIGBUS\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(8);
	_exit(7);
}

static int result(int ret)
{
	if (ret < 0)
		printf("error %s\n", strerrorname_np(errno));
	else
		printf("ok\n");
	fflush(stdout);
	return 0;
}

static int open_flags(const char *m)
{
	int f = strchr(m, 'w') ? (strchr(m, 'r') ? O_RDWR : O_WRONLY) : O_RDONLY;

	if (strchr(m, 'c'))
		f |= O_CREAT;
	if (strchr(m, 'x'))
		f |= O_EXCL;
	if (strchr(m, 't'))
		f |= O_TRUNC;
	if (strchr(m, 'd'))
		f |= O_DIRECT;
	return f;
}

static int do_mmap(size_t len, const char *mode)
{
	int flags = !strcmp(mode, "private") ? MAP_PRIVATE :
		    !strcmp(mode, "sync")    ? MAP_SHARED_VALIDATE | MAP_SYNC :
					       MAP_SHARED;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (p == MAP_FAILED)
		return -1;
	map = p;
	map_len = len;
	return 0;
}

static int do_rename(const char *a, const char *b, const char *f)
{
	unsigned int flags = !strcmp(f, "noreplace") ? RENAME_NOREPLACE :
			     !strcmp(f, "exchange")  ? RENAME_EXCHANGE :
			     !strcmp(f, "whiteout")  ? RENAME_WHITEOUT :
						       0;

	return renameat2(AT_FDCWD, a, AT_FDCWD, b, flags);
}

static int do_pwrite(off_t off, size_t len, int byte)
{
	char *buf = aligned_alloc(4096, len + 4096);
	ssize_t n;

	if (!buf)
		return -1;
	memset(buf, byte, len);
	n = pwrite(fd, buf, len, off);
	free(buf);
	if (n >= 0 && (size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return n < 0 ? -1 : 0;
}

static int do_pread(off_t off, size_t len)
{
	unsigned char *buf = aligned_alloc(4096, len + 4096);
	unsigned long long sum = 0;
	ssize_t n, i;

	if (!buf)
		return -1;
	n = pread(fd, buf, len, off);
	for (i = 0; i < n; i++)
		sum += buf[i];
	free(buf);
	if (n < 0)
		return -1;
	printf("sum %llu of %zd\n", sum, n);
	return 1;
}

static void spin(int seconds)
{
	time_t end = time(NULL) + seconds;
	unsigned int n = 0;

	printf("spinning\n");
	fflush(stdout);
	while (time(NULL) < end)
		for (size_t off = 0; off < map_len; off += 4096)
			map[off] = (unsigned char)n++;
	printf("ok\n");
}

static int s_open(char **a)
{
	fd = open(a[1], open_flags(a[2]), 0644);
	return result(fd);
}

static int s_close(char **a)
{
	(void)a;
	result(close(fd));
	fd = -1;
	return 0;
}

static int s_mmap(char **a)
{
	return result(do_mmap(strtoull(a[1], NULL, 0), a[2]));
}

static int s_munmap(char **a)
{
	(void)a;
	result(munmap(map, map_len));
	map = NULL;
	return 0;
}

static int s_store(char **a)
{
	map[strtoull(a[1], NULL, 0)] = (unsigned char)atoi(a[2]);
	return result(0);
}

static int s_load(char **a)
{
	printf("%u\n", map[strtoull(a[1], NULL, 0)]);
	return 0;
}

static int s_fill(char **a)
{
	memset(map, atoi(a[2]), strtoull(a[1], NULL, 0));
	return result(0);
}

static int s_pwrite(char **a)
{
	return result(do_pwrite(strtoll(a[1], NULL, 0), strtoull(a[2], NULL, 0), atoi(a[3])));
}

static int s_pread(char **a)
{
	return do_pread(strtoll(a[1], NULL, 0), strtoull(a[2], NULL, 0)) < 0 ? result(-1) : 0;
}

static int s_ftruncate(char **a)
{
	return result(ftruncate(fd, strtoll(a[1], NULL, 0)));
}

static int s_fallocate(char **a)
{
	return result(fallocate(fd, atoi(a[1]), strtoll(a[2], NULL, 0), strtoll(a[3], NULL, 0)));
}

static int s_fsync(char **a)
{
	(void)a;
	return result(fsync(fd));
}

static int s_msync(char **a)
{
	(void)a;
	return result(msync(map, map_len, MS_SYNC));
}

static int s_rename(char **a)
{
	return result(do_rename(a[1], a[2], a[3]));
}

static int s_unlink(char **a)
{
	return result(unlink(a[1]));
}

static int s_truncate(char **a)
{
	return result(truncate(a[1], strtoll(a[2], NULL, 0)));
}

static int s_mknod(char **a)
{
	return result(mknod(a[1], S_IFREG | 0600, 0));
}

static int s_stat(char **a)
{
	struct stat st;

	if (stat(a[1], &st))
		return result(-1);
	printf("%lld\n", (long long)st.st_size);
	return 0;
}

static int s_wait(char **a)
{
	char buf[16];

	(void)a;
	printf("waiting\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return result(0);
}

static int s_spin(char **a)
{
	spin(atoi(a[1]));
	return 0;
}

static int s_sleep(char **a)
{
	usleep(atoi(a[1]) * 1000);
	return 0;
}

static const struct {
	const char *name;
	int args;
	int (*fn)(char **a);
} steps[] = {
	{ "open", 2, s_open },	       { "close", 0, s_close },
	{ "mmap", 2, s_mmap },	       { "munmap", 0, s_munmap },
	{ "store", 2, s_store },       { "load", 1, s_load },
	{ "fill", 2, s_fill },	       { "pwrite", 3, s_pwrite },
	{ "pread", 2, s_pread },       { "ftruncate", 1, s_ftruncate },
	{ "fallocate", 3, s_fallocate }, { "fsync", 0, s_fsync },
	{ "msync", 0, s_msync },       { "rename", 3, s_rename },
	{ "unlink", 1, s_unlink },     { "truncate", 2, s_truncate },
	{ "stat", 1, s_stat },	       { "wait", 0, s_wait },
	{ "spin", 1, s_spin },	       { "sleep", 1, s_sleep },
	{ "mknod", 1, s_mknod },
};

/* One step at a[0]; returns how many arguments it took, or 0. */
static int step(char **a, int left)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (strcmp(a[0], steps[i].name))
			continue;
		if (left < steps[i].args + 1)
			return 0;
		steps[i].fn(a);
		return steps[i].args + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, n;

	signal(SIGBUS, on_sigbus);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (i < argc) {
		n = step(argv + i, argc - i);
		if (!n) {
			fprintf(stderr, "fsops: bad step `%s'\n", argv[i]);
			return 2;
		}
		fflush(stdout);
		i += n;
	}
	return 0;
}
