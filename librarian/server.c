// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop: one thread, epoll, non-blocking sockets and TLS, in
 * rounds. A round reads what arrived, answers heartbeats first, then the
 * other requests in turn, one per connection at a time, within a time
 * budget; it commits their transaction and only then sends their replies.
 *
 * Heartbeats go first and alone: they change nothing, so their replies
 * describe the last commit and leave at once, and a node's renewal never
 * waits behind another connection's pipelined requests for more than the
 * one request being answered. A connection that carries only heartbeats is
 * then handed to the lease thread (beat.c), which answers them beside the
 * loop's work, without that wait. The work pass ends early when new input waits
 * (after ROUND_MIN_US) and always after ROUND_BUDGET_US. Requests on one
 * connection are answered in order; a slow or stalled client holds nothing
 * but its own buffers (bounded), so no request waits behind it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "server.h"
#include "store.h"

#define ROUND_BUDGET_US 10000
#define ROUND_MIN_US 200

static int64_t clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

void lib_work_add(struct srv *s, struct conn *c)
{
	if (!c->queued && lib_conn_can_work(s, c)) {
		c->queued = true;
		s->work[s->nwork++] = c->fd;
	}
}

/* The work list without the connections that have nothing to do now. */
static void work_prune(struct srv *s)
{
	int n = 0;

	for (int i = 0; i < s->nwork; i++) {
		struct conn *c = s->work[i] < 0 ? NULL : s->conns[s->work[i]];

		if (!c || c->beat) /* (never on the list: the lease thread's) */
			continue;
		if (lib_conn_can_work(s, c))
			s->work[n++] = c->fd;
		else
			c->queued = false;
	}
	s->nwork = n;
}

/* After the commit: each connection's replies (or errors if it failed). */
static void release(struct srv *s, struct conn *c, bool failed)
{
	if (failed)
		lib_conn_batch_failed(s, c, &s->core.batch_err);
	lib_conn_batch_done(c);
	lib_conn_output(s, c);
}

/*
 * Commit the round's transaction: false if it failed (and say so). How long
 * commits take (a moving average) sets how long a round gathers requests
 * before it yields to new input (work_pass).
 */
static bool commit(struct srv *s)
{
	bool open = s->core.batch_open;
	int64_t t0 = now_us();
	bool failed = lib_batch_commit(&s->core) < 0;

	lib_latency_round_end(&s->core); /* the round's replies may leave now */
	if (open)
		s->commit_us = (3 * s->commit_us + (now_us() - t0)) / 4;
	lib_audit_flush(&s->core, failed ? &s->core.batch_err : NULL);
	if (failed)
		lib_log("a transaction failed to commit (%s); its requests get errors and their connections close",
			s->core.batch_err.msg);
	return !failed;
}

/* End of a round: commit, then release the replies. */
static void round_end(struct srv *s)
{
	bool failed = !commit(s);

	for (int i = 0; i < s->ndirty; i++) {
		struct conn *c = s->dirty[i] < 0 ? NULL : s->conns[s->dirty[i]];

		if (c && !c->beat)
			release(s, c, failed);
	}
	s->ndirty = 0;
	memset(&s->core.batch_err, 0, sizeof(s->core.batch_err));
}

/*
 * Heartbeats at the head of their connections, answered, committed and sent
 * before anything else (and before other connections' output).
 */
static void heartbeat_pass(struct srv *s)
{
	int *hb = s->hb, n = 0;
	bool failed;

	for (int i = 0; i < s->nwork; i++) {
		struct conn *c = s->work[i] < 0 ? NULL : s->conns[s->work[i]];

		if (c && !c->beat && lib_conn_head_is_heartbeat(s, c)) {
			c->renews = true; /* closed last when its node has too many (listen.c) */
			lib_conn_process_one(s, c);
			hb[n++] = c->fd;
		}
	}
	if (!n)
		return;
	failed = !commit(s);
	for (int i = 0; i < n; i++) {
		if (s->conns[hb[i]])
			release(s, s->conns[hb[i]], failed);
		if (s->conns[hb[i]]) /* still open: the lease thread may take it on */
			lib_beat_offer(s, s->conns[hb[i]]);
	}
	memset(&s->core.batch_err, 0, sizeof(s->core.batch_err));
}

/*
 * How long rounds take (stats' "loop"): what a heartbeat may wait for. The
 * processor time is the librarian's own work; the rest of the wall time it
 * waited for a processor.
 */
static void count_round(struct srv *s, int64_t us, int64_t cpu_us)
{
	s->core.rounds[us < 1000 ? 0 : us < 10000 ? 1 : us < 100000 ? 2 : 3]++;
	if (us > s->core.round_max_us)
		s->core.round_max_us = us;
	if (cpu_us > s->core.round_max_cpu_us)
		s->core.round_max_cpu_us = cpu_us;
}

/* Input waits on a connection with nothing queued, or on a listener: end the round. */
static bool input_waits(struct srv *s)
{
	struct epoll_event evs[16];
	int n = epoll_wait(s->ep, evs, 16, 0);

	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd < 0 || (s->conns[fd] && !s->conns[fd]->queued &&
			       (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))))
			return true;
	}
	return false;
}

/*
 * Requests in turn, one per connection per pass, within the round's budget.
 * New input ends the pass early, but only after ROUND_MIN_US or as long as
 * a commit takes, if longer (half the budget at most): where a commit is
 * slow (PostgreSQL with a synchronous standby: milliseconds), a round
 * still gathers enough requests to share it (group commit).
 */
static void work_pass(struct srv *s)
{
	int64_t start = now_us();
	int64_t min = s->commit_us > ROUND_MIN_US ? s->commit_us : ROUND_MIN_US;
	bool progress = true;

	if (min > ROUND_BUDGET_US / 2)
		min = ROUND_BUDGET_US / 2;

	while (progress) {
		progress = false;
		work_prune(s);
		for (int i = 0; i < s->nwork; i++) {
			struct conn *c = s->work[i] < 0 ? NULL : s->conns[s->work[i]];
			int64_t spent;

			if (!c || c->beat || !lib_conn_can_work(s, c))
				continue;
			lib_conn_process_one(s, c);
			progress = true;
			spent = now_us() - start;
			if (spent > ROUND_BUDGET_US || (spent > min && input_waits(s)))
				return;
		}
	}
}

/* One event of epoll_wait(); returns true for a shutdown signal. */
static bool serve_event(struct srv *s, const struct epoll_event *ev)
{
	int fd = ev->data.fd;
	struct conn *c;

	if (fd == -1) {
		struct signalfd_siginfo si;

		if (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
			lib_log("signal %d: shutting down", si.ssi_signo);
			sd_notify(0, "STOPPING=1");
			return true;
		}
		return false;
	}
	if (fd == LIB_BEAT_EVENT) {
		lib_beat_returns(s);
		return false;
	}
	if (fd <= -2) {
		lib_accept(s, &s->ls[-2 - fd]);
		return false;
	}
	c = s->conns[fd];
	if (!c || c->beat)
		return false;
	if (ev->events & (EPOLLERR | EPOLLHUP) && !(ev->events & EPOLLIN)) {
		lib_conn_close(s, c, "hangup");
		return false;
	}
	if (ev->events & EPOLLOUT)
		lib_conn_mark_dirty(s, c);
	if (c->state == C_HANDSHAKE && lib_handshake(s, c) < 0)
		return false;
	if (c->state == C_OPEN)
		lib_conn_pull(s, c);
	return false;
}

/*
 * One round: wait for events (not at all if requests wait), read, answer.
 * Returns 1 to stop, -1 on an epoll failure, 0 to go on.
 */
static int serve_round(struct srv *s)
{
	struct epoll_event evs[256];
	bool stop = false;
	int64_t start, cpu;
	int n;

	work_prune(s);
	n = epoll_wait(s->ep, evs, 256, s->nwork ? 0 : lib_leader_wait_ms(&s->core, 1000));
	if (n < 0 && errno != EINTR) {
		lib_log("epoll_wait: %s", strerror(errno));
		return -1;
	}
	lib_svc_now(&s->core); /* a tick: a stall shows here */
	lib_leader_tick(&s->core); /* before any request: a deposed leader answers none */
	lib_fence_poll(&s->core); /* fence_command children: reaped, or killed at their timeout */
	start = now_us();
	cpu = clock_us(CLOCK_THREAD_CPUTIME_ID);
	/* connections first: a handshake under way proves its key before a burst of accepts */
	for (int i = 0; i < n; i++)
		if (evs[i].data.fd >= 0)
			stop = serve_event(s, &evs[i]) || stop;
	for (int i = 0; i < n; i++)
		if (evs[i].data.fd < 0)
			stop = serve_event(s, &evs[i]) || stop;
	heartbeat_pass(s);
	work_pass(s);
	round_end(s);
	count_round(s, now_us() - start, clock_us(CLOCK_THREAD_CPUTIME_ID) - cpu);
	return stop;
}

static void sweep_timeouts(struct srv *s)
{
	const struct lib_config *cfg = s->core.cfg;
	int64_t now = lib_svc_now(&s->core);

	for (int fd = 0; fd <= s->maxfd; fd++) {
		struct conn *c = s->conns[fd];

		if (!c || c->beat) /* the lease thread sweeps its own */
			continue;
		if (c->state == C_HANDSHAKE &&
		    now - c->last_active > (int64_t)cfg->handshake_timeout * 1000)
			lib_conn_close(s, c, "handshake timeout");
		else if (now - c->last_active > (int64_t)cfg->idle_timeout * 1000)
			lib_conn_close(s, c, "idle timeout");
	}
}

/* The descriptor table sized by the budgets, and the lists indexed by descriptor. */
static int serve_alloc(struct srv *s)
{
	int size = lib_fd_budget(s);

	if (size < 0)
		return size;
	s->maxfd = size - 1;
	s->conns = calloc(size, sizeof(*s->conns));
	s->dirty = calloc(size, sizeof(*s->dirty));
	s->work = calloc(size, sizeof(*s->work));
	s->hb = calloc(size, sizeof(*s->hb));
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!s->conns || !s->dirty || !s->work || !s->hb)
		return -ENOMEM;
	return lib_lease_start(&s->core);
}

/* epoll and a signalfd for SIGTERM and SIGINT (blocked before any thread starts). */
static int serve_events(struct srv *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };
	sigset_t mask;

	s->ep = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit fails the write (EFBIG): EIO, not death */
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->ep < 0 || s->sigfd < 0)
		return -errno;
	epoll_ctl(s->ep, EPOLL_CTL_ADD, s->sigfd, &ev);
	return 0;
}

static void serve_announce(struct srv *s, int ntls)
{
	const struct lib_config *cfg = s->core.cfg;
	int keyed = 0;

	for (int i = 0; i < cfg->nnodes; i++)
		keyed += cfg->nodes[i].keylen > 0;
	lib_log("serving %llu books in %d IGs of %d nodes (%d with keys%s) on %d address%s, book size %llu",
		(unsigned long long)cfg->total_books, cfg->nigs, cfg->nnodes, keyed,
		cfg->admin_keylen ? ", admin key" : "", s->nls, s->nls == 1 ? "" : "es",
		(unsigned long long)cfg->book_size);
	/* Type=notify: units ordered after librarian.service start once it answers */
	sd_notifyf(0, "READY=1\nSTATUS=serving %llu books on %d address%s",
		   (unsigned long long)cfg->total_books, s->nls, s->nls == 1 ? "" : "es");
	if (ntls && !keyed && !cfg->admin_keylen)
		lib_log("warning: no node has a key: TLS clients cannot connect (keys_dir, key_file)");
}

static void serve_cleanup(struct srv *s)
{
	lib_beat_stop(s);
	for (int fd = 0; s->conns && fd <= s->maxfd; fd++)
		if (s->conns[fd])
			lib_conn_close(s, s->conns[fd], NULL);
	lib_listen_close(s);
	if (s->ep >= 0)
		close(s->ep);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	free(s->conns);
	free(s->dirty);
	free(s->work);
	free(s->hb);
	lib_lease_free(&s->core);
}

int lib_serve(struct lib_config *cfg, struct lib_store *store, struct lib_leader *leader,
	      int verbose)
{
	struct srv s = { .core = { .cfg = cfg, .store = store, .leader = leader },
			 .ep = -1,
			 .sigfd = -1,
			 .reserve_fd = -1 };
	int64_t last_sweep = 0;
	int ntls, r;

	s.core.started = lib_now_mono();
	s.verbose = verbose;
	if (lib_audit_open(&s.core) < 0 || lib_metrics_start(&s.core) < 0 ||
	    lib_latency_init(&s.core, lib_op_count()) < 0) {
		r = 1;
		goto out;
	}
	/* the lead taken at start (lib_leader_open()), now that the trail is open */
	if (leader && lib_leader_epoch(leader))
		lib_audit_event(&s.core, "leader.took", json_pack("{s:b}", "at_start", 1));
	if (serve_alloc(&s) < 0 || serve_events(&s) < 0) {
		lib_log("cannot set up the event loop: %s", strerror(errno));
		r = 1;
		goto out;
	}
	lib_beat_start(&s); /* without it, the loop answers every heartbeat */
	ntls = lib_listen_all(&s);
	r = ntls < 0;
	if (r)
		goto out;
	serve_announce(&s, ntls);
	while ((r = serve_round(&s)) == 0) {
		if (lib_now_mono() != last_sweep) {
			last_sweep = lib_now_mono();
			sweep_timeouts(&s);
			lib_metrics_publish(&s.core);
		}
	}
	r = r < 0; /* 1: epoll failed, 0: stopped by a signal */
out:
	serve_cleanup(&s);
	lib_leader_stop(&s.core);
	lib_metrics_stop(&s.core);
	lib_latency_free(&s.core);
	lib_audit_close(&s.core);
	return r;
}
