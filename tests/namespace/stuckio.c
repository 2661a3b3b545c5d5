// SPDX-License-Identifier: MIT
/*
 * stuckio: a write() that never finishes its copy, and a file beside it in
 * use, across the lease's deadline (issue 30, docs/FENCING.md).
 *
 * usage: stuckio G H
 *        stuckio G -     (no H: the stuck write alone, for a DAX
 *                         filesystem on a shelf, tests/driver/fencelate.t)
 *
 * A thread writes 4 KiB into G from a page of a userfaultfd that nobody
 * serves: the kernel's copy from it stalls. Meanwhile H is open and mapped;
 * every 20 ms the program writes a byte to H with pwrite() and stores one
 * into the mapping, at most 1500 times (30 s), until both are refused.
 * Then it reads a line from standard input (the test renews the lease
 * late), tries both once more, serves the userfaultfd page and reports
 * what the stuck write returned (the page holds 4096 'X'). Lines printed:
 *   stuck                           the write waits for the page
 *   h write refused store refused store_after_ms N
 *       (N: the last store that went through, in ms after the first
 *       refused pwrite; or "store never refused")
 *   fenced                          waiting for a line
 *   after write ok|error ENAME      (not without H)
 *   after store ok|SIGBUS           (not without H)
 *   stuck write ok N|error ENAME
 * Exit status 0 if it could run the scenario, 1 if not.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define ROUNDS 1500

static int gfd, hfd;
static char *ubuf;
static ssize_t stuck_ret;
static int stuck_errno;
static volatile unsigned char *hmap;
static sigjmp_buf on_bus;

static void die(const char *what)
{
	printf("error %s: %s\n", what, strerrorname_np(errno));
	exit(1);
}

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(on_bus, 1);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void *stuck_writer(void *arg)
{
	(void)arg;
	stuck_ret = pwrite(gfd, ubuf, PAGE, 0);
	stuck_errno = errno;
	return NULL;
}

/* A userfaultfd over one page, with nobody serving it yet. */
static int uffd_page(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);

	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	ubuf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ubuf == MAP_FAILED)
		die("mmap anonymous");
	reg.range.start = (uintptr_t)ubuf;
	reg.range.len = PAGE;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	return uffd;
}

/* Wait until the writer's copy faults on the page (10 s at most). */
static void wait_stuck(int uffd)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, 10000) != 1)
		die("no fault on the userfaultfd page in 10 s");
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		die("read userfaultfd");
	printf("stuck\n");
	fflush(stdout);
}

static int try_store(unsigned char v)
{
	if (sigsetjmp(on_bus, 1))
		return -1;
	hmap[0] = v;
	return 0;
}

/* pwrite and store into H every 20 ms until both are refused. */
static void use_h(void)
{
	int64_t write_refused = -1, store_refused = -1, store_ok = -1, t;
	const struct timespec tick = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < ROUNDS && (write_refused < 0 || store_refused < 0); i++) {
		t = now_ms();
		if (write_refused < 0 && pwrite(hfd, "w", 1, 1) != 1)
			write_refused = t;
		if (store_refused < 0) {
			if (try_store(i & 0xff))
				store_refused = now_ms();
			else
				store_ok = now_ms();
		}
		nanosleep(&tick, NULL);
	}
	printf("h write %s store %s ", write_refused < 0 ? "ok" : "refused",
	       store_refused < 0 ? "ok" : "refused");
	if (store_refused < 0 || write_refused < 0)
		printf("store never refused\n");
	else
		printf("store_after_ms %lld\n", (long long)(store_ok - write_refused));
	printf("fenced\n");
	fflush(stdout);
}

static void report(void)
{
	if (stuck_ret >= 0)
		printf("stuck write ok %zd\n", stuck_ret);
	else
		printf("stuck write error %s\n", strerrorname_np(stuck_errno));
}

static void serve(int uffd)
{
	static char page[PAGE] __attribute__((aligned(PAGE)));
	struct uffdio_copy copy = { .dst = (uintptr_t)ubuf, .len = PAGE, .src = (uintptr_t)page };

	memset(page, 'X', sizeof(page));
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		die("UFFDIO_COPY");
}

/* The stuck write alone: serve its page once a line comes. */
static int stuck_alone(void)
{
	char line[64];
	pthread_t thr;
	int uffd = uffd_page();

	if (pthread_create(&thr, NULL, stuck_writer, NULL))
		die("pthread_create");
	wait_stuck(uffd);
	if (!fgets(line, sizeof(line), stdin))
		die("standard input ended");
	serve(uffd);
	pthread_join(thr, NULL);
	report();
	return 0;
}

int main(int argc, char **argv)
{
	char line[64];
	pthread_t thr;
	void *p;
	int uffd;

	if (argc != 3) {
		fprintf(stderr, "usage: stuckio G H\n");
		return 2;
	}
	signal(SIGBUS, on_sigbus);
	gfd = open(argv[1], O_RDWR);
	if (gfd < 0)
		die("open G");
	if (!strcmp(argv[2], "-"))
		return stuck_alone();
	hfd = open(argv[2], O_RDWR);
	if (hfd < 0)
		die("open H");
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, hfd, 0);
	if (p == MAP_FAILED)
		die("mmap H");
	hmap = p;
	if (try_store(1))
		die("store into H before the deadline");
	uffd = uffd_page();
	if (pthread_create(&thr, NULL, stuck_writer, NULL))
		die("pthread_create");
	wait_stuck(uffd);
	use_h();
	if (!fgets(line, sizeof(line), stdin))
		die("standard input ended");
	if (pwrite(hfd, "a", 1, 2) == 1)
		printf("after write ok\n");
	else
		printf("after write error %s\n", strerrorname_np(errno));
	printf("after store %s\n", try_store(7) ? "SIGBUS" : "ok");
	serve(uffd);
	pthread_join(thr, NULL);
	report();
	return 0;
}
