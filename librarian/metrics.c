// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus metrics (docs/METRICS.md): with `metrics_listen` set, a thread
 * of its own answers `GET /metrics` over plain HTTP on that address with
 * the text exposition format. The event loop writes the text once a second
 * (lib_metrics_publish, between rounds: the catalogue is read on the loop's
 * own connection, outside any transaction) and the thread serves the latest
 * copy, so a scrape never waits for the loop nor the loop for a scraper.
 * One scraper at a time, each bounded by METRICS_IO_MS for its request and
 * its reply. Read-only and unauthenticated: bind it to an address only the
 * monitoring system reaches.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ops.h"
#include "server.h"

#define METRICS_IO_MS 2000
#define METRICS_REQ_MAX 4096

struct lib_metrics {
	pthread_t thread;
	struct listener l;
	int stopfd;
	pthread_mutex_t mu;
	char *text; /* the latest snapshot (mu) */
	size_t len;
	uint64_t scrapes; /* (mu) */
};

/* The request, up to its blank line: whether it asks for /metrics; -1 if it never came. */
static int metrics_read(int fd)
{
	char buf[METRICS_REQ_MAX + 1];
	size_t n = 0;
	ssize_t r;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (n < METRICS_REQ_MAX) {
		if (poll(&p, 1, METRICS_IO_MS) <= 0)
			return -1;
		r = read(fd, buf + n, METRICS_REQ_MAX - n);
		if (r <= 0)
			return -1;
		n += r;
		buf[n] = 0;
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			break;
	}
	buf[n] = 0;
	return !strncmp(buf, "GET /metrics ", 13) || !strncmp(buf, "GET /metrics?", 13);
}

static void metrics_write(int fd, const char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	ssize_t r;

	while (len && poll(&p, 1, METRICS_IO_MS) > 0) {
		r = send(fd, buf, len, MSG_NOSIGNAL);
		if (r <= 0)
			return;
		buf += r;
		len -= r;
	}
}

static void metrics_answer(struct lib_metrics *m, int fd)
{
	static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
				 "Connection: close\r\n\r\nonly /metrics is served here\n";
	char head[160];
	int want = metrics_read(fd);

	if (want < 0)
		return;
	if (!want) {
		metrics_write(fd, nf, sizeof(nf) - 1);
		return;
	}
	pthread_mutex_lock(&m->mu);
	m->scrapes++;
	snprintf(head, sizeof(head),
		 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		 m->len);
	metrics_write(fd, head, strlen(head));
	metrics_write(fd, m->text ?: "", m->len);
	pthread_mutex_unlock(&m->mu);
}

static void *metrics_main(void *arg)
{
	struct lib_metrics *m = arg;
	struct pollfd p[2] = { { .fd = m->l.fd, .events = POLLIN },
			       { .fd = m->stopfd, .events = POLLIN } };

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			int fd = accept4(m->l.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (fd >= 0) {
				metrics_answer(m, fd);
				close(fd);
			}
		}
	}
	return NULL;
}

int lib_metrics_start(struct lib_server *srv)
{
	struct lib_metrics *m;
	struct lib_err e = { 0 };

	if (!srv->cfg->metrics_listen)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->stopfd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&m->mu, NULL);
	if (m->stopfd < 0 || lib_listen_tcp(&m->l, srv->cfg->metrics_listen, &e) < 0) {
		lib_log("metrics_listen: %s", e.err ? e.msg : strerror(errno));
		goto fail;
	}
	srv->metrics = m;
	lib_metrics_publish(srv);
	if (pthread_create(&m->thread, NULL, metrics_main, m) == 0)
		return 0;
	lib_log("metrics_listen: cannot start its thread");
	srv->metrics = NULL;
fail:
	if (m->l.fd > 0)
		close(m->l.fd);
	if (m->stopfd >= 0)
		close(m->stopfd);
	free(m->l.addr);
	free(m->text);
	free(m);
	return -EINVAL;
}

void lib_metrics_stop(struct lib_server *srv)
{
	struct lib_metrics *m = srv->metrics;
	uint64_t one = 1;

	if (!m)
		return;
	if (write(m->stopfd, &one, sizeof(one)) == sizeof(one))
		pthread_join(m->thread, NULL);
	close(m->l.fd);
	close(m->stopfd);
	free(m->l.addr);
	free(m->text);
	free(m);
	srv->metrics = NULL;
}

/* Swap in a new snapshot; the thread serves it from the next scrape. */
void lib_metrics_set(struct lib_server *srv, char *text, size_t len)
{
	struct lib_metrics *m = srv->metrics;

	pthread_mutex_lock(&m->mu);
	free(m->text);
	m->text = text;
	m->len = len;
	pthread_mutex_unlock(&m->mu);
}

uint64_t lib_metrics_scrapes(struct lib_server *srv)
{
	struct lib_metrics *m = srv->metrics;
	uint64_t n;

	pthread_mutex_lock(&m->mu);
	n = m->scrapes;
	pthread_mutex_unlock(&m->mu);
	return n;
}
