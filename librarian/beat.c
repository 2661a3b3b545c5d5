// SPDX-License-Identifier: GPL-2.0
/*
 * The lease thread: heartbeats answered beside the event loop's work.
 *
 * A node's agent renews its lease over a connection that carries nothing but
 * heartbeats. Once the loop has answered one on a connection that has
 * nothing else buffered or unsent, it hands the connection to this thread.
 * From then on the thread reads it and answers its heartbeats from its own
 * read-only connection to the catalogue, which sees the last commit (WAL
 * lets it read while the loop writes). So a heartbeat never waits for the
 * request the loop is working on, however long that takes.
 *
 * On anything else the thread gives the connection back: a frame that is
 * not a heartbeat, the end of the connection, an error, a reply the socket
 * cannot take now, an idle connection. The loop then carries on as if the
 * connection had never left. One thread owns a connection at a time; the
 * hand-over goes through two lists under one mutex, with an eventfd each
 * way. What the two threads share is in lease.c (the clock, heard[] and the
 * node states, under srv->core.lease_mu). docs/LIBRARIAN.md, "The lease
 * thread".
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server.h"
#include "store.h"

#define BEAT_BURST 16 /* heartbeats answered at once for one connection */

struct lib_beat {
	struct srv *s;
	struct lib_store *ro; /* the thread's reading connection */
	pthread_t thread;
	bool running;
	int ep; /* the thread's: its connections (data.ptr) and wake (NULL) */
	int wake; /* eventfd: loop -> thread (connections given, stop) */
	int back; /* eventfd: thread -> loop (connections given back) */
	pthread_mutex_t mu; /* give, ret, stop */
	struct conn **give, **ret; /* each holds a connection at most once */
	int ngive, nret;
	bool stop;
	struct conn **own; /* the thread's alone: the connections it serves */
	int nown;
};

static void notify(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		lib_log("lease thread: eventfd: %s", strerror(errno));
}

static void drain(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		lib_log("lease thread: eventfd: %s", strerror(errno));
}

/* The thread's side */

static int owned(struct lib_beat *b, struct conn *c)
{
	for (int i = 0; i < b->nown; i++)
		if (b->own[i] == c)
			return i;
	return -1;
}

static void give_back(struct lib_beat *b, struct conn *c)
{
	int i = owned(b, c);

	epoll_ctl(b->ep, EPOLL_CTL_DEL, c->fd, NULL);
	if (i >= 0)
		b->own[i] = b->own[--b->nown];
	__atomic_fetch_sub(&b->s->core.beat_conns, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&b->mu);
	b->ret[b->nret++] = c;
	pthread_mutex_unlock(&b->mu);
	notify(b->back);
}

/* Read what came: false at the end of the connection or an error. */
static bool beat_read(struct lib_beat *b, struct conn *c)
{
	for (int i = 0; i < 16; i++) {
		int r = lib_conn_read(b->s, c);

		if (r == 0)
			break;
		if (r < 0) {
			c->eof = true;
			return false;
		}
		c->read_at = c->last_active = lib_svc_peek(&b->s->core);
	}
	return true;
}

/*
 * Answer the heartbeats that came: false to give the connection back. Reads
 * stop after 16 records (beat_read), so a node that pipelines heartbeats is
 * served in turns with the others; one with more than BEAT_BURST frames
 * buffered at once goes back to the loop, where it gets its turn with the
 * others rather than holding up every other node's heartbeat here.
 */
static bool beat_serve(struct lib_beat *b, struct conn *c)
{
	struct srv *s = b->s;
	int n = 0;

	do {
		if (!beat_read(b, c))
			return false;
		while (lib_conn_has_frame(s, c))
			if (n++ == BEAT_BURST || !lib_conn_head_is_heartbeat(s, c) ||
			    lib_conn_beat_one(s, c, b->ro) < 0)
				return false;
		if (lib_conn_flush(c) != 1)
			return false;
	} while (SSL_pending(c->ssl));
	return true;
}

/* Take the connections the loop gave; true once told to stop. */
static bool adopt(struct lib_beat *b)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct conn *c;
		bool stop;

		pthread_mutex_lock(&b->mu);
		c = b->ngive ? b->give[--b->ngive] : NULL;
		stop = b->stop;
		pthread_mutex_unlock(&b->mu);
		if (!c)
			return stop;
		b->own[b->nown++] = c;
		ev.data.ptr = c;
		/* bytes may have come before it was in the set */
		if (epoll_ctl(b->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0 || !beat_serve(b, c))
			give_back(b, c);
	}
}

/* Connections idle for idle_timeout go back: the loop closes them. */
static void sweep(struct lib_beat *b)
{
	int64_t now = lib_svc_peek(&b->s->core);

	for (int i = b->nown - 1; i >= 0; i--)
		if (now - b->own[i]->last_active > (int64_t)b->s->core.cfg->idle_timeout * 1000)
			give_back(b, b->own[i]);
}

static void *beat_main(void *arg)
{
	struct lib_beat *b = arg;
	struct epoll_event evs[64];
	bool stop = false;

	while (!stop) {
		int n = epoll_wait(b->ep, evs, 64, 1000);

		for (int i = 0; i < n && !stop; i++) {
			struct conn *c = evs[i].data.ptr;

			if (!c) {
				drain(b->wake);
				stop = adopt(b);
			} else if (owned(b, c) >= 0 && !beat_serve(b, c)) {
				give_back(b, c); /* (not touched unless still ours) */
			}
		}
		sweep(b);
	}
	while (b->nown)
		give_back(b, b->own[0]);
	return NULL;
}

/* The loop's side */

/* Nothing buffered, unsent or pending: a node's connection between heartbeats. */
static bool eligible(const struct conn *c)
{
	return c->state == C_OPEN && c->ssl && !c->is_unix && !c->eof && c->authed &&
	       c->who.node >= 0 && !c->who.admin && c->inlen == 0 && c->outoff == c->outlen &&
	       !c->batch_ids && !c->head.req && !c->head.reply && !SSL_pending(c->ssl);
}

void lib_beat_offer(struct srv *s, struct conn *c)
{
	struct lib_beat *b = s->beat;

	if (!b || !eligible(c))
		return;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	c->events = 0;
	lib_conn_unlist(s, c);
	c->beat = true;
	__atomic_fetch_add(&s->core.beat_conns, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&b->mu);
	b->give[b->ngive++] = c;
	pthread_mutex_unlock(&b->mu);
	notify(b->wake);
}

void lib_beat_returns(struct srv *s)
{
	struct lib_beat *b = s->beat;

	drain(b->back);
	for (;;) {
		struct epoll_event ev = { .events = 0 };
		struct conn *c;

		pthread_mutex_lock(&b->mu);
		c = b->nret ? b->ret[--b->nret] : NULL;
		pthread_mutex_unlock(&b->mu);
		if (!c)
			return;
		c->beat = false;
		c->events = 0; /* lib_conn_output() asks for what it needs */
		ev.data.fd = c->fd;
		epoll_ctl(s->ep, EPOLL_CTL_ADD, c->fd, &ev);
		lib_conn_pull(s, c);
		lib_conn_mark_dirty(s, c);
	}
}

static void beat_free(struct lib_beat *b)
{
	if (b->ep >= 0)
		close(b->ep);
	if (b->wake >= 0)
		close(b->wake);
	if (b->back >= 0)
		close(b->back);
	lib_store_close(b->ro);
	pthread_mutex_destroy(&b->mu);
	free(b->give);
	free(b->ret);
	free(b->own);
	free(b);
}

static int beat_setup(struct srv *s, struct lib_beat *b)
{
	struct epoll_event w = { .events = EPOLLIN, .data.ptr = NULL };
	struct epoll_event r = { .events = EPOLLIN, .data.fd = LIB_BEAT_EVENT };
	size_t n = s->maxfd + 1;
	struct lib_err e = { 0 };

	b->give = calloc(n, sizeof(*b->give));
	b->ret = calloc(n, sizeof(*b->ret));
	b->own = calloc(n, sizeof(*b->own));
	if (!b->give || !b->ret || !b->own)
		return -1;
	if (lib_store_open_reader(s->core.store, &b->ro, &e) < 0) {
		lib_log("heartbeats are answered by the event loop only: %s", e.msg);
		return -1;
	}
	b->ep = epoll_create1(EPOLL_CLOEXEC);
	b->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->back = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->ep < 0 || b->wake < 0 || b->back < 0 ||
	    epoll_ctl(b->ep, EPOLL_CTL_ADD, b->wake, &w) < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, b->back, &r) < 0) {
		lib_log("heartbeats are answered by the event loop only: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Signals are blocked already (serve_events), so the thread inherits that. */
int lib_beat_start(struct srv *s)
{
	struct lib_beat *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->s = s;
	b->ep = b->wake = b->back = -1;
	pthread_mutex_init(&b->mu, NULL);
	if (beat_setup(s, b) < 0) {
		beat_free(b);
		return -1;
	}
	r = pthread_create(&b->thread, NULL, beat_main, b);
	if (r) {
		lib_log("heartbeats are answered by the event loop only: %s", strerror(r));
		beat_free(b);
		return -r;
	}
	b->running = true;
	s->beat = b;
	return 0;
}

/* The thread ends; its connections stay in s->conns for the loop to close. */
void lib_beat_stop(struct srv *s)
{
	struct lib_beat *b = s->beat;

	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_mutex_unlock(&b->mu);
	notify(b->wake);
	pthread_join(b->thread, NULL);
	s->beat = NULL;
	beat_free(b);
}
