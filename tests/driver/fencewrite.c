// SPDX-License-Identifier: MIT
/*
 * fencewrite: write an increasing counter without pause until the kernel
 * stops it, and say how far it got.
 *
 *   fencewrite direct DEVICE|FILE STATE [OFFSET]
 *       pwrite() a 4 KiB block holding the counter at OFFSET (default 0)
 *       with O_DIRECT, again and again
 *   fencewrite mmap FILE STATE [OFFSET]
 *       store the counter into a MAP_SHARED (MAP_SYNC if the file allows it)
 *       mapping of FILE at OFFSET, again and again
 *
 * After every write that succeeded, STATE (a small file, best on tmpfs) holds
 * "COUNTER\n": the last value that reached the device. The first value is 1.
 * When a write fails the program prints "error ERRNO-NAME after COUNTER" and
 * exits 1; a SIGBUS prints "sigbus after COUNTER" and exits 2. The counter is
 * a 64-bit little-endian number, followed by the magic "fencewr1".
 *
 * FENCEWRITE_PAUSE_US=N in the environment: wait N microseconds after each
 * write. Under TCG a writer without pause keeps a guest CPU (and so a host
 * core) busy; the fence tests want writes in flight, not the most of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

static int state_fd = -1;
static useconds_t pause_us;
static volatile uint64_t counter;

static void save_state(uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);

	if (pwrite(state_fd, buf, n, 0) != n)
		_exit(3);
	if (pause_us)
		usleep(pause_us);
}

static void on_sigbus(int sig)
{
	char buf[64];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof(buf), "sigbus after %llu\n", (unsigned long long)counter);
	if (write(1, buf, n) != n)
		_exit(3);
	_exit(2);
}

static int run_direct(const char *path, off_t off)
{
	void *buf;
	int fd = open(path, O_RDWR | O_DIRECT);

	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(path);
		return 3;
	}
	memset(buf, 0, 4096);
	for (counter = 1;; counter++) {
		uint64_t v = counter;

		memcpy(buf, &v, sizeof(v));
		memcpy((char *)buf + 8, "fencewr1", 8);
		if (pwrite(fd, buf, 4096, off) != 4096) {
			printf("error %s after %llu\n", strerrorname_np(errno),
			       (unsigned long long)(counter - 1));
			return 1;
		}
		save_state(counter);
	}
}

static int run_mmap(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	volatile uint64_t *p;
	char *m;

	if (fd < 0) {
		perror(path);
		return 3;
	}
	m = mmap(NULL, off + 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (m == MAP_FAILED)
		m = mmap(NULL, off + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 3;
	}
	signal(SIGBUS, on_sigbus);
	memcpy(m + off + 8, "fencewr1", 8);
	p = (volatile uint64_t *)(m + off);
	for (counter = 1;; counter++) {
		*p = counter;
		/* the store is in the mapping: with MAP_SYNC it is persistent */
		__builtin_ia32_clflush((const void *)p);
		__builtin_ia32_sfence();
		save_state(counter);
	}
}

int main(int argc, char **argv)
{
	off_t off;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: fencewrite direct|mmap PATH STATE [OFFSET]\n");
		return 3;
	}
	off = argc == 5 ? strtoll(argv[4], NULL, 0) : 0;
	state_fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (state_fd < 0) {
		perror(argv[3]);
		return 3;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (getenv("FENCEWRITE_PAUSE_US"))
		pause_us = strtoul(getenv("FENCEWRITE_PAUSE_US"), NULL, 10);
	if (!strcmp(argv[1], "direct"))
		return run_direct(argv[2], off);
	if (!strcmp(argv[1], "mmap"))
		return run_mmap(argv[2], off);
	fprintf(stderr, "fencewrite: unknown mode `%s'\n", argv[1]);
	return 3;
}
