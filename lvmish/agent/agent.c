// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent (`lfsvol agent'): the renewal thread, passes, and between
 * them the session it lends and the work on books in a child.
 *
 * The node's lease is renewed by a thread of its own with its own
 * librarian session (renew.c), started first and stopped last: nothing
 * the rest of the agent does can delay a renewal.
 *
 * Every pass is idempotent, so the agent is restart-safe and the udev rule
 * may run `agent --once' for each fabric device event: attach what is
 * configured and present, activate the auto shelves not active yet, and
 * (without a running daemon) zero this node's ZOMBIE books. Passes are
 * serialised by an flock on STATE_DIR/agent.lock; progress is kept in
 * STATE_DIR/agent.json.
 *
 * Between passes the daemon serves the commands that borrow its librarian
 * session on STATE_DIR/agent.sock, request by request, while a child
 * process (job.c) zeroes ZOMBIE books (scrub.c) or reads, and on labelled
 * devices zeroes, never-used FREE books (check.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "bad.h"
#include "proxy.h"
#include "kernel.h"
#include "lfsvol.h"
#include "session.h"
#include "upserver.h"

/* agent.sock clients served at once, and how long one may stay silent */
#define AGENT_CLIENTS 64
#define AGENT_CLIENT_IDLE_MS 30000
#define LOCK_RETRY_MS 1000

enum agent_job_kind { JOB_NONE, JOB_ZERO, JOB_SWEEP };

struct agent {
	struct lfsvol_ctx *ctx;
	struct agent_state st;
	struct lfsvol_lib *lib; /* NULL while the librarian is unreachable */
	struct lfs_client *drv;
	struct lfsvol_renewer *rn; /* the renewal thread (daemon only) */
	struct up_server *up; /* the filesystem's upcall server (daemon only) */
	bool once;
	int lfd; /* agent.sock, or -1 */
	int clients[AGENT_CLIENTS];
	int64_t seen[AGENT_CLIENTS];
	int nclients;
	int interval; /* the librarian's heartbeat_interval, seconds */
	int backoff; /* seconds before the next try while unreachable */
	struct lfsvol_job job;
	enum agent_job_kind job_kind;
	struct agent_copies copies; /* the copies of shelves, each a child (copyjob.c) */
	struct agent_bad bad; /* what book.bad last told the librarian (bad.c) */
	int job_lock; /* agent.lock, held while a zeroing job runs; -1 */
	int64_t zero_retry; /* when to try for the lock again (ms) */
	bool scrub_asked; /* agent.scrub: zero now */
	/*
	 * The daemon's auto-activation succeeded for the fabric attached now:
	 * like LVM's autoactivation, it happens when memory appears (and is
	 * retried until it succeeds), not again after an administrator
	 * deactivated the shelf.
	 */
	bool auto_done;
};

static void on_signal(int sig)
{
	(void)sig;
	lfsvol_agent_stop = 1;
}

/* The attached fabric devices, as one number: a new one starts a sweep. */
static uint64_t fabric_signature(struct lfs_client *drv)
{
	struct lfs_fabric_info *fv = NULL;
	uint64_t sig = 1469598103934665603ULL;
	size_t n = 0;

	if (lfsnl_fabric_list(drv, &fv, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		sig = (sig ^ fv[i].ig) * 1099511628211ULL;
		sig = (sig ^ fv[i].nr_books) * 1099511628211ULL;
		sig = (sig ^ fv[i].devt) * 1099511628211ULL;
		sig = (sig ^ fv[i].labelled) * 1099511628211ULL;
	}
	free(fv);
	return sig;
}

/* A session of our own, if there is none; without one, attach with a configured book size. */
static int agent_connect(struct agent *a)
{
	struct lfsvol_conf *conf = a->ctx->conf;
	struct lfsvol_fabric_id id;
	int r;

	if (a->lib && !lfsvol_lib_alive(a->lib)) {
		lfsvol_lib_close(a->lib); /* dropped: a new one below */
		a->lib = NULL;
	}
	if (a->lib)
		return 0;
	r = lfsvol_lib_open(a->ctx, &a->lib);
	if (r) {
		snprintf(a->st.librarian, sizeof(a->st.librarian), "unreachable at %s",
			 conf->librarian);
		if (!lfsvol_fabric_id_get(NULL, conf->book_size, &id))
			lfsvol_attach_fabrics(conf, a->drv, &id, a->once);
		return r;
	}
	snprintf(a->st.librarian, sizeof(a->st.librarian), "connected to %s", conf->librarian);
	a->bad.sig = 0; /* a new session: the librarian may not know them (a restore) */
	a->st.next_sweep = 0; /* the librarian may have new books, or forgotten some */
	return 0;
}

/* The auto_activate shelves of lfs.conf that are not active here; returns how many failed. */
static int auto_activate(struct agent *a)
{
	/* a --once pass runs from udev: not waiting for udev's names there */
	struct lfsvol_activation how = { .quiet = a->once, .wait_absent = a->once };
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int failed = 0;

	if (lfsnl_shelf_list(a->drv, NULL, &kv, &kn))
		return 0;
	for (int i = 0; i < a->ctx->conf->nshelves; i++) {
		const struct lfsvol_shelf_conf *s = &a->ctx->conf->shelves[i];

		if (s->auto_activate && !lfsvol_find_active(kv, kn, s->name)) {
			int r = lfsvol_activate_one(a->ctx, a->lib, a->drv, s->name, &how);

			/* waiting for a device: that device's own pass activates it */
			failed += r && r != LFSVOL_WAITING;
		}
	}
	lfsnl_shelf_list_free(kv, kn);
	return failed;
}

/* What the renewal thread learnt: the interval, this node's ZOMBIE books. */
static void renewal_news(struct agent *a)
{
	long long z = lfsvol_renew_zombies(a->rn, &a->interval);

	if (z > 0 && a->job_kind != JOB_ZERO && a->st.pending <= 0)
		a->st.pending = z;
	/*
	 * During a run the total follows the librarian: what is done, plus its
	 * ZOMBIE books less those of the batch under way already zeroed (the
	 * librarian hears of a batch when it ends). Books that go ZOMBIE
	 * during the run join it; it never shrinks (the count is a heartbeat
	 * old), so it is an upper bound.
	 */
	if (z > 0 && a->st.zeroing.what[0]) {
		long long left = z - (a->job_kind == JOB_ZERO ? (long long)a->job.done : 0);

		if (left > 0 && a->st.zeroing.done + left > a->st.zeroing.total)
			a->st.zeroing.total = a->st.zeroing.done + left;
	}
}

/* One pass; 0 if everything that could be done was done. */
static int agent_pass(struct agent *a)
{
	struct lfsvol_conf *conf = a->ctx->conf;
	struct lfsvol_fabric_id id;
	int r, failed = 0;

	r = agent_connect(a);
	if (r)
		return r;
	/* a module reloaded since the last pass has no fabric attached yet */
	if (a->st.daemon && fabric_signature(a->drv) != a->st.fabric_sig)
		a->auto_done = false;
	if (!lfsvol_fabric_id_get(a->lib, 0, &id))
		failed += lfsvol_attach_fabrics(conf, a->drv, &id, a->once) != 0;
	if (a->st.daemon) {
		uint64_t sig = fabric_signature(a->drv);

		if (sig != a->st.fabric_sig) {
			a->st.next_sweep = 0; /* memory attached (or gone): sweep now */
			a->auto_done = false;
		}
		a->st.fabric_sig = sig;
		renewal_news(a);
	}
	/* poisoned memory first: a zeroing below must not meet it unreported */
	lfsvol_bad_report(a->lib, a->drv, &a->bad);
	if (!a->auto_done) {
		int n = auto_activate(a);

		failed += n;
		a->auto_done = a->st.daemon && n == 0;
	}
	/* a --once pass zeroes only when no daemon does (udev runs it beside one) */
	if (!a->st.daemon && !lfsvol_state_daemon_runs(conf))
		r = lfsvol_scrub_pass(conf, a->lib, a->drv, &a->st, false);
	lfsvol_state_write(conf, &a->st);
	if (r)
		return r;
	return failed ? lfsvol_exit_as(LFSVOL_EFAIL, -EIO) : 0;
}

static void client_drop(struct agent *a, int k)
{
	close(a->clients[k]);
	a->nclients--;
	a->clients[k] = a->clients[a->nclients];
	a->seen[k] = a->seen[a->nclients];
}

/* A client silent for as long as a reply may take is dropped. */
static void clients_expire(struct agent *a, int64_t now)
{
	for (int k = 0; k < a->nclients;) {
		if (now - a->seen[k] < AGENT_CLIENT_IDLE_MS)
			k++;
		else
			client_drop(a, k);
	}
}

/* Start zeroing ZOMBIE books, under agent.lock (a scrub of its own process may hold it). */
static void zero_begin(struct agent *a)
{
	if (a->scrub_asked && a->st.pending <= 0)
		a->st.pending = 1; /* list them now */
	a->scrub_asked = false;
	if (a->st.pending <= 0 || lfsvol_now_ms() < a->zero_retry)
		return;
	a->job_lock = lfsvol_state_lock(a->ctx->conf, true);
	if (a->job_lock < 0) {
		a->zero_retry = lfsvol_now_ms() + LOCK_RETRY_MS;
		return;
	}
	if (lfsvol_zero_start(a->ctx->conf, a->lib, &a->st, &a->job)) {
		a->job_kind = JOB_ZERO;
	} else {
		close(a->job_lock);
		a->job_lock = -1;
	}
	lfsvol_state_write(a->ctx->conf, &a->st);
}

/* The next piece of work on books, if none runs: ZOMBIE books first, then the sweep. */
static void jobs_step(struct agent *a)
{
	if (a->job_kind != JOB_NONE || lfsvol_agent_stop)
		return;
	zero_begin(a);
	if (a->job_kind == JOB_NONE &&
	    lfsvol_check_start(a->ctx->conf, a->lib, a->drv, &a->st, &a->job))
		a->job_kind = JOB_SWEEP;
}

static void job_collect(struct agent *a)
{
	int done = a->job_kind == JOB_ZERO ?
			   lfsvol_zero_collect(a->ctx->conf, a->lib, &a->st, &a->job) :
			   lfsvol_check_collect(a->ctx->conf, a->lib, &a->st, &a->job);

	if (!done)
		return;
	if (a->job_kind == JOB_ZERO) {
		close(a->job_lock);
		a->job_lock = -1;
	}
	a->job_kind = JOB_NONE;
}

/* agent.json with the copies as they are now, if a copy started, ended or progressed. */
static void copies_publish(struct agent *a)
{
	if (!lfsvol_copies_due(&a->copies))
		return;
	json_decref(a->st.copies);
	a->st.copies = lfsvol_copies_json(&a->copies);
	lfsvol_state_write(a->ctx->conf, &a->st);
}

/* What poll() returned: client requests, the children's output, a new client. */
static void serve(struct agent *a, const struct pollfd *p)
{
	struct proxy_copy pc = { &a->copies, a->drv };

	/* from the last: dropping one moves the last into its place */
	for (int k = a->nclients - 1; k >= 0; k--) {
		if (!p[2 + k].revents)
			continue;
		/* never lend a session the librarian closed (a restart): a new one */
		if (lfsvol_lib_hung_up(a->lib)) {
			lfsvol_lib_close(a->lib);
			a->lib = NULL;
			if (lfsvol_lib_open(a->ctx, &a->lib))
				a->lib = NULL;
		}
		a->seen[k] = lfsvol_now_ms();
		if (lfsvol_proxy_serve_one(a->clients[k], a->lib, &a->st, &a->scrub_asked, &pc))
			client_drop(a, k);
	}
	if (p[1].revents && a->job_kind != JOB_NONE)
		job_collect(a);
	lfsvol_copies_collect(&a->copies, p + 2 + AGENT_CLIENTS);
	copies_publish(a);
	if (p[0].revents && a->nclients < AGENT_CLIENTS) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0) {
			a->clients[a->nclients] = fd;
			a->seen[a->nclients++] = lfsvol_now_ms();
		}
	}
}

/* How long poll() may wait: until end, or soon when work on books is due. */
static int wait_ms(struct agent *a, int64_t now, int64_t left)
{
	struct agent_state *st = &a->st;
	int64_t due = left;

	if (a->job_kind == JOB_NONE && (st->pending > 0 || a->scrub_asked))
		due = a->zero_retry > now ? a->zero_retry - now : 0;
	else if (a->job_kind == JOB_NONE && a->ctx->conf->check_free && a->lib)
		due = st->sweeping || st->next_sweep < now ? 0 : st->next_sweep - now;
	return (int)(due < left ? due : left);
}

/* Until end (ms) or a signal: serve agent.sock and run the work on books. */
static void agent_wait(struct agent *a, int64_t end)
{
	while (!lfsvol_agent_stop) {
		/* agent.sock, the job, the clients (a fixed room), the copies */
		struct pollfd p[2 + AGENT_CLIENTS + AGENT_COPIES];
		int64_t now = lfsvol_now_ms();

		if (end - now <= 0)
			break;
		jobs_step(a);
		clients_expire(a, now);
		p[0] = (struct pollfd){ .fd = a->nclients < AGENT_CLIENTS ? a->lfd : -1,
					.events = POLLIN };
		p[1] = (struct pollfd){ .fd = a->job_kind != JOB_NONE ? a->job.fd : -1,
					.events = POLLIN };
		for (int k = 0; k < AGENT_CLIENTS; k++)
			p[2 + k] = (struct pollfd){ .fd = k < a->nclients ? a->clients[k] : -1,
						    .events = POLLIN };
		lfsvol_copies_fds(&a->copies, p + 2 + AGENT_CLIENTS);
		if (poll(p, ARRAY_SIZE(p), wait_ms(a, now, end - now)) > 0)
			serve(a, p);
		if (a->lib && !lfsvol_lib_alive(a->lib))
			break; /* the session was dropped: a pass makes a new one */
	}
}

/*
 * A new driver session for every pass of the daemon: lfs.ko may have been
 * unloaded and loaded again since, and generic netlink then gives the
 * family a new id. (While the module is absent the old session stays, and
 * its requests fail with ENOENT.)
 */
static void driver_refresh(struct agent *a)
{
	struct lfs_client *fresh;

	if (!a->once && !lfs_client_open(&fresh)) {
		lfs_client_close(a->drv);
		a->drv = fresh;
	}
}

/* agent.lock for a pass: the daemon may hold it already for its zeroing. */
static int pass_lock(struct agent *a)
{
	if (a->st.daemon && a->job_lock >= 0)
		return INT_MAX;
	/* a --once pass beside the daemon does not zero: no need to wait for its zeroing */
	if (!a->st.daemon && lfsvol_state_daemon_runs(a->ctx->conf))
		return INT_MAX;
	return lfsvol_state_lock(a->ctx->conf, false);
}

static int agent_run(struct agent *a)
{
	int lock, r;

	for (;;) {
		lock = pass_lock(a);
		if (lock < 0)
			return lock;
		driver_refresh(a);
		r = agent_pass(a);
		if (lock != INT_MAX)
			close(lock);
		if (a->once || lfsvol_agent_stop)
			return r;
		agent_wait(a, lfsvol_now_ms() + 1000LL * (a->lib ? a->interval : a->backoff));
		a->backoff = a->lib ? 1 :
				      (a->backoff * 2 > a->interval ? a->interval : a->backoff * 2);
		if (lfsvol_agent_stop)
			return 0;
	}
}

static int agent_open(struct agent *a)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int r;

	r = lfsvol_need_root("agent");
	if (!r)
		r = lfsvol_need_conf(a->ctx);
	if (!r)
		r = lfsvol_drv_open(&a->drv);
	if (r)
		return r;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* the agent must never wait on its own socket (nor --once on the daemon's lock holder) */
	a->ctx->no_agent = true;
	if (a->once)
		return 0;
	mkdir(a->ctx->conf->state_dir, 0755);
	/*
	 * Locked in memory, as sanlock is: a page of the renewal thread's code
	 * or data paged out under memory pressure (and read back from a slow
	 * disk) would delay a renewal. Pages are locked as they are touched.
	 */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
		lfsvol_err("cannot lock the agent in memory (%s): renewals may wait for paging",
			   strerror(errno));
	/* renewals first: a lease held before anything else is done */
	r = lfsvol_renew_start(a->ctx->conf, &a->rn);
	if (r)
		return lfsvol_fail(LFSVOL_EFAIL, r, "cannot start the renewal thread: %s",
				   strerror(-r));
	/* the filesystem's server: its own threads and sessions, never waiting for the rest */
	r = lfsvol_upcall_start(a->ctx->conf, up_dispatch, &a->up);
	if (r)
		return lfsvol_fail(LFSVOL_EFAIL, r, "cannot start the upcall server: %s",
				   strerror(-r));
	a->lfd = lfsvol_proxy_listen(a->ctx->conf->state_dir);
	if (a->lfd < 0)
		lfsvol_err(
			"cannot listen on %s/agent.sock (%s); lfsvol will talk to the librarian directly",
			a->ctx->conf->state_dir, strerror(-a->lfd));
	return 0;
}

static void agent_close(struct agent *a)
{
	/* a copy does not outlive the agent: its DST stays marked incomplete */
	lfsvol_copies_stop(&a->copies);
	json_decref(a->st.copies);
	a->st.copies = NULL;
	lfsvol_job_free(&a->job);
	if (a->job_lock >= 0)
		close(a->job_lock);
	lfsvol_check_stop(&a->st);
	while (a->nclients > 0)
		close(a->clients[--a->nclients]);
	if (a->lfd >= 0) {
		lfsvol_proxy_unlink(a->ctx->conf->state_dir);
		close(a->lfd);
	}
	lfsvol_lib_close(a->lib);
	/* its socket closed: callers waiting get ENOTCONN, the files stay leased meanwhile */
	lfsvol_upcall_stop(a->up);
	/* the renewal thread last: the lease is kept while the rest stops */
	lfsvol_renew_stop(a->rn);
	lfs_client_close(a->drv);
}

int cmd_agent(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "once", no_argument, NULL, 'o' },
					      { "job", no_argument, NULL, 'j' },
					      { "copy", no_argument, NULL, 'c' },
					      { NULL, 0, NULL, 0 } };
	struct agent a = { .ctx = ctx, .lfd = -1, .interval = 5, .backoff = 1, .job_lock = -1 };
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			return lfsvol_job_child(); /* the agent's child (job.c), not for users */
		if (c == 'c') /* the agent's copy (copyjob.c), not for users either */
			return lfsvol_copy_child(argc - optind, argv + optind);
		if (c != 'o')
			return LFSVOL_EUSAGE;
		a.once = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s agent [--once]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	a.st = (struct agent_state){ .scrub = "idle", .daemon = !a.once };
	a.job.fd = -1;
	lfsvol_copies_init(&a.copies);
	r = agent_open(&a);
	if (r) {
		agent_close(&a);
		return lfsvol_exit_code(r);
	}
	r = agent_run(&a);
	agent_close(&a);
	/* a --once pass says how it went; the daemon ends when told to */
	return a.once ? lfsvol_exit_code(r) : LFSVOL_OK;
}
