// SPDX-License-Identifier: MIT
/*
 * altwrite SPAN_MIB BATCH ROUNDS DEV...: 4 KiB O_DIRECT writes at random
 * offsets in the first SPAN_MIB of each DEV, in batches of BATCH writes,
 * the devices taking turns (the first of each round rotates), ROUNDS
 * rounds. Prints one line per device: "altwrite DEV MEDIAN P10 MEAN", the
 * time of one write in ns, median, 10th percentile and mean over batches.
 *
 * fio over one second per set-up resolves about 3% between stacks on this
 * emulated machine; batches of a few milliseconds, interleaved, put every
 * device under the same host load, and the median over hundreds of
 * batches resolves about 1% (docs/bench-driver.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IO 4096L

struct target {
	const char *dev;
	int fd;
	double *ns; /* per write, one entry per round */
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static long arg(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0) {
		fprintf(stderr, "altwrite: bad %s '%s': a positive integer\n", what, s);
		exit(2);
	}
	return v;
}

static int batch(struct target *t, const void *buf, long n, long span, double *ns)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		off_t off = (random() % (span / IO)) * IO;

		if (pwrite(t->fd, buf, IO, off) != IO) {
			fprintf(stderr, "altwrite: %s: write at %lld: %s\n", t->dev, (long long)off,
				strerror(errno));
			return -1;
		}
	}
	*ns = (now_ns() - t0) / n;
	return 0;
}

static void report(struct target *t, long rounds)
{
	double sum = 0;
	long r;

	qsort(t->ns, rounds, sizeof(*t->ns), cmp_double);
	for (r = 0; r < rounds; r++)
		sum += t->ns[r];
	printf("altwrite %s %.1f %.1f %.1f\n", t->dev, t->ns[rounds / 2], t->ns[rounds / 10],
	       sum / rounds);
}

int main(int argc, char **argv)
{
	long span, n, rounds, r;
	struct target *t;
	void *buf;
	int nt, i;

	if (argc < 5) {
		fprintf(stderr, "usage: altwrite SPAN_MIB BATCH ROUNDS DEV...\n");
		return 2;
	}
	span = arg(argv[1], "span") << 20;
	n = arg(argv[2], "batch");
	rounds = arg(argv[3], "rounds");
	nt = argc - 4;
	t = calloc(nt, sizeof(*t));
	if (!t || posix_memalign(&buf, IO, IO))
		return 1;
	memset(buf, 0xa5, IO);
	for (i = 0; i < nt; i++) {
		t[i].dev = argv[4 + i];
		t[i].fd = open(t[i].dev, O_RDWR | O_DIRECT);
		t[i].ns = calloc(rounds, sizeof(*t[i].ns));
		if (t[i].fd < 0 || !t[i].ns) {
			fprintf(stderr, "altwrite: %s: %s\n", t[i].dev, strerror(errno));
			return 1;
		}
	}
	srandom(1);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nt; i++)
			if (batch(&t[(i + r) % nt], buf, n, span, &t[(i + r) % nt].ns[r]))
				return 1;
	for (i = 0; i < nt; i++)
		report(&t[i], rounds);
	return 0;
}
