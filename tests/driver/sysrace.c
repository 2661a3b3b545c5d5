// SPDX-License-Identifier: MIT
/*
 * sysrace detach SHELF DEVICE | sysrace rmmod SHELF
 *   Reads /sys/block/lfsN/lfs/books of SHELF in a loop while SHELF is
 *   removed and then, at once, its fabric DEVICE is detached (detach) or
 *   lfs.ko is unloaded (rmmod). Remove leaves the disk's deletion to the
 *   driver's reaper (a kworker); this holds the reaper off so that the reads
 *   fall between the remove and the disk's deletion, whatever the timing:
 *   every thread here is SCHED_FIFO, the reader on CPU 1, the requests and
 *   a spinner on CPU 0 (the spinner keeps CPU 0 while the requests sleep, for
 *   HOLD_MS after they began), so no ordinary task runs until then.
 *
 *   A read is good if it returns the shelf's book list as read before the
 *   remove, or nothing; anything else (a freed fabric's poisoned interleave
 *   group, say) is bad. Prints one line:
 *     reads: N before, N during, N after; bad N
 *   ("during": while the detach or unload ran; "after": once it returned),
 *   then the first bad read, if any. The reads end when the attribute is
 *   gone (ENODEV/ENOENT) or after 20 s.
 * Exit: 0 no bad read, 1 bad reads, 2 usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "liblfsnl.h"

#define HOLD_MS 300
#define READ_LIMIT_S 20

enum phase { BEFORE, REMOVED, DURING, AFTER };

static atomic_int phase = BEFORE;
static atomic_int reader_ready;
static atomic_llong hold_until_ns;
static int sysfs_fd;
static char expected[65536];
static ssize_t expected_len;
static long reads[AFTER + 1], bad;
static char first_bad[512];
static const char *reader_end = "";

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* SCHED_FIFO at @prio on @cpu, for the calling thread. */
static int realtime(int cpu, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		fprintf(stderr, "sysrace: SCHED_FIFO on CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static void *reader(void *arg)
{
	long long deadline = now_ns() + READ_LIMIT_S * 1000000000LL;
	static char buf[65536];
	ssize_t n;
	int p;

	(void)arg;
	if (realtime(1, 30))
		exit(2);
	atomic_store(&reader_ready, 1);
	for (;;) {
		if (now_ns() > deadline) {
			reader_end = "the attribute was still there after 20 s";
			break;
		}
		p = atomic_load(&phase);
		n = pread(sysfs_fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			reader_end = errno == ENODEV || errno == ENOENT ? "" : strerror(errno);
			break;
		}
		reads[p]++;
		if (n == 0 || (n == expected_len && !memcmp(buf, expected, n)))
			continue;
		if (!bad++) {
			buf[n] = 0;
			snprintf(first_bad, sizeof(first_bad), "%s read: %.*s",
				 p == AFTER ? "after" : p == DURING ? "during" : "before", (int)n,
				 buf);
		}
	}
	return NULL;
}

/* Keeps CPU 0 from ordinary tasks (the reaper) until hold_until_ns. */
static void *spinner(void *arg)
{
	(void)arg;
	if (realtime(0, 10))
		exit(2);
	while (!atomic_load(&hold_until_ns) || now_ns() < atomic_load(&hold_until_ns))
		;
	return NULL;
}

static int open_books(struct lfs_client *c, const char *shelf)
{
	struct lfs_shelf_info *info;
	char path[128];
	size_t n;
	int ret;

	ret = lfsnl_shelf_list(c, shelf, &info, &n);
	if (ret || n != 1) {
		fprintf(stderr, "sysrace: no shelf '%s': %s\n", shelf, lfs_client_error(c));
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/lfs/books", info[0].disk);
	lfsnl_shelf_list_free(info, n);
	sysfs_fd = open(path, O_RDONLY);
	if (sysfs_fd < 0) {
		fprintf(stderr, "sysrace: %s: %s\n", path, strerror(errno));
		return -1;
	}
	expected_len = pread(sysfs_fd, expected, sizeof(expected), 0);
	if (expected_len <= 0) {
		fprintf(stderr, "sysrace: %s reads empty\n", path);
		return -1;
	}
	return 0;
}

/* Remove, then the detach or the unload; CPU 0 is held from the remove on. */
static int act(struct lfs_client *c, const char *mode, const char *shelf, const char *device)
{
	int ret;

	atomic_store(&hold_until_ns, now_ns() + HOLD_MS * 1000000LL);
	ret = lfsnl_shelf_remove(c, shelf);
	if (ret) {
		fprintf(stderr, "sysrace: remove %s: %s\n", shelf, lfs_client_error(c));
		return -1;
	}
	atomic_store(&phase, REMOVED);
	atomic_store(&phase, DURING);
	if (!strcmp(mode, "detach")) {
		ret = lfsnl_detach(c, device);
		if (ret)
			fprintf(stderr, "sysrace: detach %s: %s\n", device, lfs_client_error(c));
	} else {
		lfs_client_close(c);
		ret = syscall(SYS_delete_module, "lfs", O_NONBLOCK);
		if (ret)
			fprintf(stderr, "sysrace: unloading lfs: %s\n", strerror(errno));
	}
	atomic_store(&phase, AFTER);
	return ret ? -1 : 0;
}

int main(int argc, char **argv)
{
	pthread_t rt, st;
	struct lfs_client *c;
	int ret;

	if (!((argc == 4 && !strcmp(argv[1], "detach")) || (argc == 3 && !strcmp(argv[1], "rmmod")))) {
		fprintf(stderr, "usage: sysrace detach SHELF DEVICE | sysrace rmmod SHELF\n");
		return 2;
	}
	if (lfs_client_open(&c)) {
		fprintf(stderr, "sysrace: lfs.ko is not loaded\n");
		return 2;
	}
	if (open_books(c, argv[2]))
		return 2;
	if (pthread_create(&rt, NULL, reader, NULL))
		return 2;
	while (!atomic_load(&reader_ready))
		;
	if (realtime(0, 20) || pthread_create(&st, NULL, spinner, NULL))
		return 2;
	ret = act(c, argv[1], argv[2], argv[3]);
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	if (!strcmp(argv[1], "detach"))
		lfs_client_close(c);
	printf("reads: %ld before, %ld during, %ld after; bad %ld\n", reads[BEFORE] + reads[REMOVED],
	       reads[DURING], reads[AFTER], bad);
	if (bad)
		printf("first bad %s\n", first_bad);
	if (*reader_end)
		printf("reads ended: %s\n", reader_end);
	if (ret)
		return 2;
	return bad ? 1 : 0;
}
