// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent (`lfsvol agent'): passes, and between them the session it
 * lends and the check of never-used books.
 *
 * Every pass is idempotent, so the agent is restart-safe and the udev rule
 * may run `agent --once' for each fabric device event: attach what is
 * configured and present, activate the auto shelves not active yet,
 * heartbeat, zero this node's ZOMBIE books. Passes are serialised by an
 * flock on STATE_DIR/agent.lock; progress is kept in STATE_DIR/agent.json.
 *
 * Between passes the daemon serves the commands that borrow its librarian
 * session on STATE_DIR/agent.sock, request by request, and checks by
 * reading only which of this node's FREE books of unknown content read as
 * zeroes (check.c).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "kernel.h"
#include "lfsvol.h"
#include "session.h"

/* agent.sock clients served at once, and how long one may stay silent */
#define AGENT_CLIENTS 64
#define AGENT_CLIENT_IDLE_MS 30000

struct agent {
	struct lfsvol_ctx *ctx;
	struct agent_state st;
	struct lfsvol_lib *lib; /* NULL while the librarian is unreachable */
	struct lfs_client *drv;
	bool once;
	int lfd; /* agent.sock, or -1 */
	int clients[AGENT_CLIENTS];
	int64_t seen[AGENT_CLIENTS];
	int nclients;
	int interval; /* the librarian's heartbeat_interval, seconds */
	int backoff; /* seconds before the next try while unreachable */
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

	if (lfs_fabric_list(drv, &fv, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		sig = (sig ^ fv[i].ig) * 1099511628211ULL;
		sig = (sig ^ fv[i].nr_books) * 1099511628211ULL;
		sig = (sig ^ fv[i].devt) * 1099511628211ULL;
	}
	free(fv);
	return sig;
}

static int heartbeat(struct agent *a)
{
	json_t *res = NULL;
	json_int_t hb;
	int r = lfsvol_lib_call(a->lib, "heartbeat", NULL, &res);

	if (r)
		return r;
	a->st.heartbeats++;
	a->st.last_heartbeat = time(NULL);
	a->st.pending = json_integer_value(json_object_get(res, "zombies"));
	hb = json_integer_value(json_object_get(res, "heartbeat_interval"));
	if (hb > 0)
		a->interval = (int)hb;
	json_decref(res);
	return 0;
}

/* A session of our own, if there is none; without one, attach with a configured book size. */
static int agent_connect(struct agent *a)
{
	struct lfsvol_conf *conf = a->ctx->conf;
	int r;

	if (a->lib)
		return 0;
	r = lfsvol_lib_open(a->ctx, &a->lib);
	if (r) {
		snprintf(a->st.librarian, sizeof(a->st.librarian), "unreachable at %s",
			 conf->librarian);
		if (conf->book_size)
			lfsvol_attach_fabrics(conf, a->drv, conf->book_size, a->once);
		return r;
	}
	snprintf(a->st.librarian, sizeof(a->st.librarian), "connected to %s", conf->librarian);
	a->st.next_sweep = 0; /* the librarian may have new books, or forgotten some */
	return 0;
}

/* The auto_activate shelves of lfs.conf that are not active here; returns how many failed. */
static int auto_activate(struct agent *a)
{
	/* a --once pass runs from udev: not waiting for udev's names there */
	struct lfsvol_activation how = { .quiet = a->once };
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int failed = 0;

	if (lfs_shelf_list(a->drv, NULL, &kv, &kn))
		return 0;
	for (int i = 0; i < a->ctx->conf->nshelves; i++) {
		const struct lfsvol_shelf_conf *s = &a->ctx->conf->shelves[i];

		if (s->auto_activate && !lfsvol_find_active(kv, kn, s->name))
			failed += !!lfsvol_activate_one(a->ctx, a->lib, a->drv, s->name, &how);
	}
	lfs_shelf_list_free(kv, kn);
	return failed;
}

/* One pass; 0 if everything that could be done was done. */
static int agent_pass(struct agent *a)
{
	struct lfsvol_conf *conf = a->ctx->conf;
	int r, failed = 0;

	r = agent_connect(a);
	if (r)
		return r;
	failed += lfsvol_attach_fabrics(conf, a->drv, lfsvol_lib_book_size(a->lib), a->once) != 0;
	if (a->st.daemon) {
		uint64_t sig = fabric_signature(a->drv);

		if (sig != a->st.fabric_sig)
			a->st.next_sweep = 0; /* memory attached (or gone): sweep now */
		a->st.fabric_sig = sig;
	}
	failed += auto_activate(a);
	r = heartbeat(a);
	if (r) {
		snprintf(a->st.librarian, sizeof(a->st.librarian), "lost: %s",
			 lfsvol_lib_errmsg(a->lib));
		r = lfsvol_fail(LFSVOL_ELIBRARIAN, r, "heartbeat to the librarian failed: %s",
				lfsvol_lib_errmsg(a->lib));
		lfsvol_lib_close(a->lib);
		a->lib = NULL;
		lfsvol_state_write(conf, &a->st);
		return r;
	}
	/* the heartbeat counts this node's ZOMBIE books: no list to ask for if none */
	if (a->st.pending)
		r = lfsvol_scrub_pass(conf, a->lib, a->drv, &a->st, !a->once);
	else
		snprintf(a->st.scrub, sizeof(a->st.scrub), "idle");
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

/* What poll() returned: client requests, the check child's result, a new client. */
static void serve(struct agent *a, const struct pollfd *p)
{
	/* from the last: dropping one moves the last into its place */
	for (int k = a->nclients - 1; k >= 0; k--) {
		if (!p[2 + k].revents)
			continue;
		a->seen[k] = lfsvol_now_ms();
		if (lfsvol_proxy_serve_one(a->clients[k], a->lib))
			client_drop(a, k);
	}
	if (p[1].revents)
		lfsvol_check_collect(a->ctx->conf, a->lib, &a->st);
	if (p[0].revents && a->nclients < AGENT_CLIENTS) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0) {
			a->clients[a->nclients] = fd;
			a->seen[a->nclients++] = lfsvol_now_ms();
		}
	}
}

/* How long poll() may wait: until end, or at once when the check's next batch is due. */
static int wait_ms(struct agent *a, int64_t now, int64_t left)
{
	struct agent_state *st = &a->st;

	if (st->job_fd < 0 && a->ctx->conf->check_free && a->lib &&
	    (st->sweeping || st->next_sweep - now < left))
		left = st->sweeping || st->next_sweep < now ? 0 : st->next_sweep - now;
	return (int)left;
}

/* Until end (ms) or a signal: serve agent.sock and run the check. */
static void agent_wait(struct agent *a, int64_t end)
{
	while (!lfsvol_agent_stop) {
		struct pollfd p[2 + AGENT_CLIENTS];
		int64_t now = lfsvol_now_ms();

		if (end - now <= 0)
			break;
		/* the next batch of books to read, while nothing else is due */
		lfsvol_check_start(a->ctx->conf, a->lib, a->drv, &a->st);
		clients_expire(a, now);
		p[0] = (struct pollfd){ .fd = a->nclients < AGENT_CLIENTS ? a->lfd : -1,
					.events = POLLIN };
		p[1] = (struct pollfd){ .fd = a->st.job_fd, .events = POLLIN };
		for (int k = 0; k < a->nclients; k++)
			p[2 + k] = (struct pollfd){ .fd = a->clients[k], .events = POLLIN };
		if (poll(p, 2 + (nfds_t)a->nclients, wait_ms(a, now, end - now)) > 0)
			serve(a, p);
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

static int agent_run(struct agent *a)
{
	int lock, r;

	for (;;) {
		lock = lfsvol_state_lock(a->ctx->conf);
		if (lock < 0)
			return lock;
		driver_refresh(a);
		r = agent_pass(a);
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
	a->lfd = lfsvol_proxy_listen(a->ctx->conf->state_dir);
	if (a->lfd < 0)
		lfsvol_err(
			"cannot listen on %s/agent.sock (%s); lfsvol will talk to the librarian directly",
			a->ctx->conf->state_dir, strerror(-a->lfd));
	return 0;
}

static void agent_close(struct agent *a)
{
	lfsvol_check_stop(&a->st);
	while (a->nclients > 0)
		close(a->clients[--a->nclients]);
	if (a->lfd >= 0) {
		lfsvol_proxy_unlink(a->ctx->conf->state_dir);
		close(a->lfd);
	}
	lfsvol_lib_close(a->lib);
	lfs_client_close(a->drv);
}

int cmd_agent(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "once", no_argument, NULL, 'o' },
					      { NULL, 0, NULL, 0 } };
	struct agent a = { .ctx = ctx, .lfd = -1, .interval = 10, .backoff = 1 };
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'o')
			return LFSVOL_EUSAGE;
		a.once = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s agent [--once]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	a.st = (struct agent_state){ .scrub = "idle", .job_fd = -1, .daemon = !a.once };
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
