// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent (agent), one scrub pass (scrub) and this node's status.
 *
 * Every pass is idempotent, so the agent is restart-safe and the udev rule
 * may run `agent --once' for each fabric device event: attach what is
 * configured and present, activate the auto shelves not active yet,
 * heartbeat, zero this node's ZOMBIE books. Passes are serialised by an
 * flock on STATE_DIR/agent.lock; progress is kept in STATE_DIR/agent.json.
 *
 * Between passes the daemon also checks, by reading only, which of this
 * node's FREE books of unknown content read as zeroes (agent.check_free):
 * new memory mostly. The reads run in a child process, a batch at a time, so
 * that the agent keeps serving commands meanwhile; the librarian marks the
 * books known zero only if nothing could have changed them since it listed
 * them (free.unknown / free.checked, docs/PROTOCOL.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "liblfs.h"
#include "lfs_librarian.h"
#include "lfsvol.h"


/* bytes of books read by one check child (at least one book) */
#define CHECK_BATCH_BYTES (256ULL << 20)

/* agent.sock clients served at once, and how long one may stay silent */
#define AGENT_CLIENTS 64
#define AGENT_CLIENT_IDLE_MS 30000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct agent_state {
	long long zeroed;	/* books zeroed by this agent since it started */
	long long pending;	/* ZOMBIE books of this node the librarian reported */
	long long heartbeats;
	time_t last_heartbeat;
	char librarian[256];	/* "connected" or why not */
	char scrub[256];	/* "idle", "zeroing N of M", or an error */
	bool daemon;		/* the running agent, not a --once pass or scrub */
	/* the read-only check of FREE books of unknown content (daemon only) */
	long long checked_zero;	/* found zero and marked known zero by the librarian */
	long long checked_other;	/* found not zero, or not marked (changed meanwhile) */
	long long checked_skipped;	/* passed over in the last sweep: not readable here */
	char check[320];	/* "idle ...", "reading N books ...", or an error */
	bool sweeping;		/* a sweep is under way */
	json_t *after;		/* [ig, book]: the sweep goes on after this book */
	int64_t next_sweep;	/* ms (lfsvol_now_ms); 0: at once */
	uint64_t fabric_sig;	/* attached devices at the last pass */
	pid_t job_pid;		/* the child reading a batch, 0 if none */
	int job_fd;		/* its result pipe, -1 if none */
	json_t *job_books;	/* the batch, as listed */
	char job_token[64];
};

/* agent.json belongs to a running agent daemon other than this process */
static bool daemon_owns_state(const char *path)
{
	json_t *o = json_load_file(path, 0, NULL);
	int pid = (int)json_integer_value(json_object_get(o, "pid"));
	bool owned = json_is_true(json_object_get(o, "daemon")) && pid > 0 && pid != getpid() &&
		     (kill(pid, 0) == 0 || errno == EPERM);

	json_decref(o);
	return owned;
}

static void state_write(struct lfsvol_ctx *ctx, const struct agent_state *st)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	json_t *o;

	mkdir(ctx->conf->state_dir, 0755);
	snprintf(path, sizeof(path), "%s/agent.json", ctx->conf->state_dir);
	/*
	 * A --once pass (udev) or scrub while the daemon runs leaves the
	 * daemon's progress in place: `lfsvol status' shows the agent's.
	 */
	if (!st->daemon && daemon_owns_state(path))
		return;
	snprintf(tmp, sizeof(tmp), "%s/.agent.json.%d", ctx->conf->state_dir, (int)getpid());
	o = json_pack("{s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:I,s:I,s:I,s:s}", "pid", (int)getpid(),
		      "daemon", st->daemon,
		      "updated", (json_int_t)time(NULL), "zeroed", (json_int_t)st->zeroed,
		      "zombies_pending", (json_int_t)st->pending,
		      "heartbeats", (json_int_t)st->heartbeats,
		      "last_heartbeat", (json_int_t)st->last_heartbeat,
		      "librarian", st->librarian, "scrub", st->scrub,
		      "checked_zero", (json_int_t)st->checked_zero,
		      "checked_other", (json_int_t)st->checked_other,
		      "checked_skipped", (json_int_t)st->checked_skipped,
		      "check", st->check[0] ? st->check
					    : (st->daemon && ctx->conf->check_free ? "starting" : "off"));
	if (o && !json_dump_file(o, tmp, JSON_COMPACT))
		rename(tmp, path);
	else
		unlink(tmp);
	json_decref(o);
}

static int lock_state(struct lfsvol_ctx *ctx)
{
	char path[PATH_MAX];
	int fd;

	mkdir(ctx->conf->state_dir, 0755);
	snprintf(path, sizeof(path), "%s/agent.lock", ctx->conf->state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		lfsvol_err("cannot open %s: %s; set agent.state_dir in %s to a writable directory",
			   path, strerror(errno), ctx->conf->path);
		return -1;
	}
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Zero this node's ZOMBIE books through the driver, then tell the librarian. */
static int scrub_pass(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
		      struct agent_state *st, bool verbose)
{
	int batch = ctx->conf->scrub_batch;

	for (int rounds = 0; !stop && rounds < 1000000; rounds++) {
		json_t *res = NULL, *el, *done;
		struct lfs_book *books;
		size_t n, i;
		int r;

		r = lfsvol_lib_call(lib, "listing ZOMBIE books", "zombie.list",
				    json_pack("{s:i}", "limit", batch), &res);
		if (r)
			return r;
		n = json_array_size(json_object_get(res, "books"));
		if (!n) {
			json_decref(res);
			snprintf(st->scrub, sizeof(st->scrub), "idle");
			st->pending = 0;
			return 0;
		}
		books = calloc(n, sizeof(*books));
		if (!books) {
			json_decref(res);
			return LFSVOL_EFAIL;
		}
		json_array_foreach(json_object_get(res, "books"), i, el) {
			books[i].ig = (uint32_t)json_integer_value(json_array_get(el, 0));
			books[i].book = (uint32_t)json_integer_value(json_array_get(el, 1));
		}
		snprintf(st->scrub, sizeof(st->scrub), "zeroing %zu books (%lld done so far)", n,
			 st->zeroed);
		state_write(ctx, st);
		r = lfs_books_zero(drv, books, n);
		free(books);
		if (r) {
			snprintf(st->scrub, sizeof(st->scrub), "zeroing failed: %s",
				 lfs_client_error(drv)[0] ? lfs_client_error(drv) : strerror(-r));
			json_decref(res);
			return lfsvol_drv_fail(drv, r, "zeroing ZOMBIE books");
		}
		done = json_pack("{s:O}", "books", json_object_get(res, "books"));
		json_decref(res);
		r = lfsvol_lib_call(lib, "reporting zeroed books", "zombie.zeroed", done, NULL);
		if (r)
			return r;
		st->zeroed += (long long)n;
		if (verbose)
			lfsvol_info("zeroed %zu books (%lld in all)", n, st->zeroed);
		state_write(ctx, st);
	}
	return 0;
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

static void check_pause(struct agent_state *st, int seconds)
{
	st->sweeping = false;
	json_decref(st->after);
	st->after = NULL;
	st->next_sweep = lfsvol_now_ms() + 1000LL * seconds;
}

/*
 * The child: read the books through the driver (a session of its own) and
 * write an int (0 or -errno) and then one byte per book (1: reads as zeroes)
 * to fd 3. Nothing else of the agent's stays open in it.
 */
static void check_child(int wfd, const struct lfs_book *books, size_t n)
{
	struct lfs_client *c = NULL;
	bool *zero = calloc(n, sizeof(*zero));
	int r = -ENOMEM;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (wfd != 3 && dup2(wfd, 3) < 0)
		_exit(1);
	closefrom(4);
	if (zero) {
		r = lfs_client_open(&c);
		if (!r)
			r = lfs_books_check_zero(c, books, n, zero);
	}
	if (write(3, &r, sizeof(r)) != sizeof(r) || (!r && write(3, zero, n) != (ssize_t)n))
		_exit(1);
	_exit(0);
}

/* The book is on a fabric device attached here (and within it). */
static bool book_readable(const struct lfs_fabric_info *fv, size_t nf, json_t *book)
{
	uint32_t ig = (uint32_t)json_integer_value(json_array_get(book, 0));
	json_int_t b = json_integer_value(json_array_get(book, 1));

	for (size_t i = 0; i < nf; i++)
		if (fv[i].ig == ig)
			return b < (json_int_t)fv[i].nr_books;
	return false;
}

/*
 * Start reading the next batch of the sweep, if one is due and none runs.
 * Books that cannot be read here are passed over, and the next sweep tries
 * them again: those of IGs not attached (yet), and those beyond the end of
 * the attached device (the librarian's geometry gives the IG more books than
 * the device holds). They are counted in checked_skipped.
 */
static void check_start(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			struct agent_state *st)
{
	uint64_t bs = lib ? lfsvol_lib_book_size(lib) : 0;
	struct lfs_fabric_info *fv = NULL;
	json_t *res = NULL, *list, *el, *batch;
	struct lfs_book *books;
	json_int_t limit;
	size_t n, i, nf = 0;
	int p[2], r;

	if (!ctx->conf->check_free || !lib || !bs || st->job_fd >= 0 ||
	    (!st->sweeping && lfsvol_now_ms() < st->next_sweep))
		return;
	if (!st->sweeping) {
		st->sweeping = true;
		st->checked_skipped = 0;
		json_decref(st->after);
		st->after = NULL;
	}
	limit = bs >= CHECK_BATCH_BYTES ? 1 : (json_int_t)(CHECK_BATCH_BYTES / bs);
	if (limit > LFS_BOOKS_PER_ATTR)
		limit = LFS_BOOKS_PER_ATTR;
	r = lv_call(lib, "free.unknown", st->after ? json_pack("{s:I,s:O}", "limit", limit, "after", st->after)
						    : json_pack("{s:I}", "limit", limit), &res);
	if (r) {
		snprintf(st->check, sizeof(st->check), "listing FREE books failed: %s", lv_errmsg(lib));
		check_pause(st, ctx->conf->check_interval);
		return;
	}
	list = json_object_get(res, "books");
	n = json_array_size(list);
	if (!n) {
		char skipped[128] = "";

		if (st->checked_skipped)
			snprintf(skipped, sizeof(skipped),
				 "; %lld passed over in this sweep (IG not attached here, or beyond the end of its device)",
				 st->checked_skipped);
		snprintf(st->check, sizeof(st->check),
			 "idle: every FREE book of this node was checked; %lld found zero, %lld not, since the agent started%s",
			 st->checked_zero, st->checked_other, skipped);
		json_decref(res);
		check_pause(st, ctx->conf->check_interval);
		return;
	}
	/* the sweep goes on after this batch, whatever becomes of it */
	json_decref(st->after);
	st->after = json_incref(json_array_get(list, n - 1));
	lfs_fabric_list(drv, &fv, &nf);
	batch = json_array();
	json_array_foreach(list, i, el)
		if (book_readable(fv, nf, el))
			json_array_append(batch, el);
	free(fv);
	st->checked_skipped += (long long)(json_array_size(list) - json_array_size(batch));
	n = json_array_size(batch);
	if (!n) {
		json_decref(batch);
		json_decref(res);
		return;	/* none attached here: the next batch at once */
	}
	books = calloc(n, sizeof(*books));
	if (!books || pipe2(p, O_CLOEXEC)) {
		free(books);
		json_decref(batch);
		json_decref(res);
		snprintf(st->check, sizeof(st->check), "cannot start a check: %s", strerror(errno));
		check_pause(st, ctx->conf->check_interval);
		return;
	}
	json_array_foreach(batch, i, el) {
		books[i].ig = (uint32_t)json_integer_value(json_array_get(el, 0));
		books[i].book = (uint32_t)json_integer_value(json_array_get(el, 1));
	}
	st->job_pid = fork();
	if (st->job_pid == 0)
		check_child(p[1], books, n);
	close(p[1]);
	free(books);
	if (st->job_pid < 0) {
		close(p[0]);
		st->job_pid = 0;
		json_decref(batch);
		json_decref(res);
		snprintf(st->check, sizeof(st->check), "cannot start a check: %s", strerror(errno));
		check_pause(st, ctx->conf->check_interval);
		return;
	}
	st->job_fd = p[0];
	st->job_books = batch;
	snprintf(st->job_token, sizeof(st->job_token), "%s",
		 json_string_value(json_object_get(res, "token")) ?: "");
	snprintf(st->check, sizeof(st->check), "reading %zu books from [%lld, %lld]", n,
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 0)),
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 1)));
	json_decref(res);
}

/* The child's result is in (or it died): report what read as zeroes. */
static void check_collect(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct agent_state *st)
{
	size_t n = json_array_size(st->job_books), got = 0;
	unsigned char *zero = calloc(n + sizeof(int), 1);
	json_t *ok = json_array(), *res = NULL, *el;
	ssize_t k;
	size_t i;
	int r = -EPIPE;

	while (zero && got < n + sizeof(int) &&
	       ((k = read(st->job_fd, zero + got, n + sizeof(int) - got)) > 0 || (k < 0 && errno == EINTR)))
		got += k > 0 ? (size_t)k : 0;
	close(st->job_fd);
	st->job_fd = -1;
	/* it wrote its result (or died): it has exited, or is about to */
	waitpid(st->job_pid, NULL, 0);
	st->job_pid = 0;
	if (got >= sizeof(int))
		memcpy(&r, zero, sizeof(int));
	if (!r && got < n + sizeof(int))
		r = -EPIPE;
	if (r) {
		snprintf(st->check, sizeof(st->check), "reading books failed: %s; next try in %d s",
			 r == -EPIPE ? "the reading process ended early" : strerror(-r),
			 ctx->conf->check_interval);
		check_pause(st, ctx->conf->check_interval);
		goto out;
	}
	json_array_foreach(st->job_books, i, el)
		if (zero[sizeof(int) + i])
			json_array_append(ok, el);
	if (!lib) {
		check_pause(st, 0);	/* the session was lost: again once it is back */
		goto out;
	}
	r = lv_call(lib, "free.checked", json_pack("{s:s,s:O}", "token", st->job_token, "books", ok), &res);
	if (r) {
		snprintf(st->check, sizeof(st->check), "reporting checked books failed: %s", lv_errmsg(lib));
		check_pause(st, ctx->conf->check_interval);
		goto out;
	}
	st->checked_zero += json_integer_value(json_object_get(res, "marked"));
	st->checked_other += (long long)n - json_integer_value(json_object_get(res, "marked"));
	json_decref(res);
out:
	json_decref(ok);
	json_decref(st->job_books);
	st->job_books = NULL;
	free(zero);
	state_write(ctx, st);
}

static void check_stop(struct agent_state *st)
{
	if (st->job_pid > 0) {
		kill(st->job_pid, SIGTERM);
		waitpid(st->job_pid, NULL, 0);
	}
	if (st->job_fd >= 0)
		close(st->job_fd);
	json_decref(st->job_books);
	json_decref(st->after);
}

static int heartbeat(struct lv_lib *lib, struct agent_state *st, int *interval)
{
	json_t *res = NULL;
	int r = lv_call(lib, "heartbeat", NULL, &res);

	if (r)
		return r;
	st->heartbeats++;
	st->last_heartbeat = time(NULL);
	st->pending = json_integer_value(json_object_get(res, "zombies"));
	if (json_integer_value(json_object_get(res, "heartbeat_interval")) > 0)
		*interval = (int)json_integer_value(json_object_get(res, "heartbeat_interval"));
	json_decref(res);
	return 0;
}

/* One pass; returns 0 if everything that could be done was done. */
static int agent_pass(struct lfsvol_ctx *ctx, struct lv_lib **lib, struct lfs_client *drv,
		      struct agent_state *st, int *interval, bool verbose)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r, failed = 0;

	if (!*lib) {
		r = lfsvol_lib_connect(ctx, lib);
		if (r) {
			snprintf(st->librarian, sizeof(st->librarian), "unreachable at %s",
				 ctx->conf->librarian);
			/* fabric devices can still be attached with a configured book size */
			if (ctx->conf->book_size)
				lfsvol_attach_fabrics(ctx, drv, ctx->conf->book_size, !verbose);
			return r;
		}
		snprintf(st->librarian, sizeof(st->librarian), "connected to %s", ctx->conf->librarian);
		st->next_sweep = 0;	/* the librarian may have new books, or forgotten some */
	}
	failed += lfsvol_attach_fabrics(ctx, drv, lfsvol_lib_book_size(*lib), !verbose) > 0;
	if (st->daemon) {
		uint64_t sig = fabric_signature(drv);

		if (sig != st->fabric_sig)
			st->next_sweep = 0;	/* memory attached (or gone): sweep now */
		st->fabric_sig = sig;
	}
	if (!lfs_shelf_list(drv, NULL, &kv, &kn)) {
		for (int i = 0; i < ctx->conf->nshelves; i++) {
			const struct lfsvol_shelf_conf *s = &ctx->conf->shelves[i];

			if (!s->auto_activate || lfsvol_find_active(kv, kn, s->name))
				continue;
			if (lfsvol_activate_one(ctx, *lib, drv, s->name, false, !verbose, NULL))
				failed++;
		}
		lfs_shelf_list_free(kv, kn);
	}
	r = heartbeat(*lib, st, interval);
	if (r) {
		lfsvol_err("heartbeat to the librarian failed: %s", lv_errmsg(*lib));
		snprintf(st->librarian, sizeof(st->librarian), "lost: %s", lv_errmsg(*lib));
		lv_close(*lib);
		*lib = NULL;
		state_write(ctx, st);
		return LFSVOL_ELIBRARIAN;
	}
	/* the heartbeat counts this node's ZOMBIE books: no list to ask for if none */
	if (st->pending) {
		r = scrub_pass(ctx, *lib, drv, st, verbose);
	} else {
		r = 0;
		snprintf(st->scrub, sizeof(st->scrub), "idle");
	}
	state_write(ctx, st);
	if (r)
		return r;
	return failed ? LFSVOL_EFAIL : 0;
}

int cmd_agent(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct agent_state st = { .scrub = "idle", .job_fd = -1 };
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	bool once = false;
	int c, r, lock, lfd = -1, interval = 10, backoff = 1, nclients = 0;
	/* agent.sock clients (commands' librarian sessions), served request by request */
	int clients[AGENT_CLIENTS];
	int64_t client_seen[AGENT_CLIENTS];
	int64_t end;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'o')
			return LFSVOL_EUSAGE;
		once = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s agent [--once]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	st.daemon = !once;
	r = lfsvol_need_root("agent");
	if (!r)
		r = lfsvol_need_conf(ctx);
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (r)
		return r;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* the agent must never wait on its own socket (nor --once on the daemon's lock holder) */
	ctx->no_agent = true;
	if (!once) {
		mkdir(ctx->conf->state_dir, 0755);
		lfd = lfsvol_agent_listen(ctx->conf->state_dir);
		if (lfd < 0)
			lfsvol_err("cannot listen on %s/agent.sock (%s); lfsvol will talk to the librarian directly",
				   ctx->conf->state_dir, strerror(-lfd));
	}
	for (;;) {
		lock = lock_state(ctx);
		if (lock < 0) {
			r = LFSVOL_ECONFIG;
			break;
		}
		/*
		 * A new driver session for every pass: lfs.ko may have been
		 * unloaded and loaded again since, and generic netlink then
		 * gives the family a new id. (While the module is absent the
		 * old session stays, and its requests fail with ENOENT.)
		 */
		if (!once) {
			struct lfs_client *fresh;

			if (!lfs_client_open(&fresh)) {
				lfs_client_close(drv);
				drv = fresh;
			}
		}
		r = agent_pass(ctx, &lib, drv, &st, &interval, !once);
		close(lock);
		if (once || stop)
			break;
		/* until the next pass: serve lfsvol on our session; a signal ends the wait */
		end = lfsvol_now_ms() + 1000LL * (lib ? interval : backoff);
		backoff = lib ? 1 : (backoff * 2 > interval ? interval : backoff * 2);
		while (!stop) {
			struct pollfd p[2 + AGENT_CLIENTS];
			int64_t now = lfsvol_now_ms(), left = end - now;
			int k;

			if (left <= 0)
				break;
			/* the next batch of books to read, while nothing else is due */
			check_start(ctx, lib, drv, &st);
			/* a client silent for as long as a reply may take is dropped */
			for (k = 0; k < nclients;) {
				if (now - client_seen[k] < AGENT_CLIENT_IDLE_MS) {
					k++;
					continue;
				}
				close(clients[k]);
				nclients--;
				clients[k] = clients[nclients];
				client_seen[k] = client_seen[nclients];
			}
			p[0] = (struct pollfd){ .fd = nclients < AGENT_CLIENTS ? lfd : -1, .events = POLLIN };
			p[1] = (struct pollfd){ .fd = st.job_fd, .events = POLLIN };
			for (k = 0; k < nclients; k++)
				p[2 + k] = (struct pollfd){ .fd = clients[k], .events = POLLIN };
			/* a sweep under way between batches, or due before the next pass */
			if (st.job_fd < 0 && ctx->conf->check_free && lib &&
			    (st.sweeping || st.next_sweep - now < left))
				left = st.sweeping || st.next_sweep < now ? 0 : st.next_sweep - now;
			if (poll(p, 2 + (nfds_t)nclients, (int)left) > 0) {
				int n = nclients;

				/* from the last: closing one moves the last into its place */
				for (k = n - 1; k >= 0; k--) {
					if (!p[2 + k].revents)
						continue;
					client_seen[k] = lfsvol_now_ms();
					if (lfsvol_agent_serve_one(clients[k], lib) == 0)
						continue;
					close(clients[k]);
					nclients--;
					clients[k] = clients[nclients];
					client_seen[k] = client_seen[nclients];
				}
				if (p[1].revents)
					check_collect(ctx, lib, &st);
				if (p[0].revents && nclients < AGENT_CLIENTS) {
					int fd = lfsvol_agent_accept(lfd);

					if (fd >= 0) {
						clients[nclients] = fd;
						client_seen[nclients++] = lfsvol_now_ms();
					}
				}
			}
		}
		if (stop)
			break;
	}
	check_stop(&st);
	while (nclients > 0)
		close(clients[--nclients]);
	if (lfd >= 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/agent.sock", ctx->conf->state_dir);
		unlink(path);
		close(lfd);
	}
	lv_close(lib);
	lfs_client_close(drv);
	return once ? r : 0;
}

/*
 * scrub --free: the librarian sends this node's FREE books of unknown content
 * (never used since their IG joined the fabric) to ZOMBIE in batches
 * (free.scrub), and they are zeroed like freed books.
 */
static int scrub_free(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
		      struct agent_state *st, long long *fresh)
{
	for (;;) {
		json_t *res = NULL;
		json_int_t n;
		bool more;
		int r;

		r = lfsvol_lib_call(lib, "sending never-scrubbed FREE books to be zeroed",
				    "free.scrub", json_pack("{s:i}", "limit", ctx->conf->scrub_batch),
				    &res);
		if (r)
			return r;
		n = json_integer_value(json_object_get(res, "books"));
		more = json_is_true(json_object_get(res, "more"));
		json_decref(res);
		*fresh += n;
		r = scrub_pass(ctx, lib, drv, st, true);
		if (r)
			return r;
		if (!more || n <= 0 || stop)
			return 0;
	}
}

int cmd_scrub(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "free", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	struct agent_state st = { .scrub = "idle" };
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	long long fresh = 0;
	bool free_too = false;
	int c, r, lock;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'f') {
			lfsvol_err("usage: %s scrub [--free]", lfsvol_prog);
			return LFSVOL_EUSAGE;
		}
		free_too = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s scrub [--free]: unexpected argument `%s'", lfsvol_prog,
			   argv[optind]);
		return LFSVOL_EUSAGE;
	}
	ctx->no_agent = true;	/* it takes the agent's lock: never wait on the agent */
	r = lfsvol_need_root("scrub");
	if (!r)
		r = lfsvol_need_conf(ctx);
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (r)
		return r;
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		goto out;
	lock = lock_state(ctx);
	if (lock < 0) {
		r = LFSVOL_ECONFIG;
		goto out;
	}
	snprintf(st.librarian, sizeof(st.librarian), "connected to %s", ctx->conf->librarian);
	lfsvol_attach_fabrics(ctx, drv, lfsvol_lib_book_size(lib), true);
	r = scrub_pass(ctx, lib, drv, &st, true);
	if (!r && free_too)
		r = scrub_free(ctx, lib, drv, &st, &fresh);
	close(lock);
	if (!r && free_too)
		lfsvol_info("scrub done: %lld book%s zeroed, %lld of them never scrubbed before",
			    st.zeroed, st.zeroed == 1 ? "" : "s", fresh);
	else if (!r)
		lfsvol_info("scrub done: %lld book%s zeroed", st.zeroed, st.zeroed == 1 ? "" : "s");
out:
	lv_close(lib);
	lfs_client_close(drv);
	return r;
}

int cmd_status(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct lfs_client *drv = NULL;
	struct lfs_fabric_info *fv = NULL;
	struct lfs_shelf_info *kv = NULL;
	size_t nf = 0, kn = 0;
	json_t *o = json_object(), *fab = json_array(), *sh = json_array(), *agent;
	char path[PATH_MAX], a[32];
	bool json = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (c != 'j')
			return LFSVOL_EUSAGE;
		json = true;
	}
	r = lfsvol_need_conf(ctx);
	if (r)
		goto out;
	if (!lfs_client_open(&drv)) {
		lfs_fabric_list(drv, &fv, &nf);
		lfs_shelf_list(drv, NULL, &kv, &kn);
		json_object_set_new(o, "driver", json_string("loaded"));
	} else {
		json_object_set_new(o, "driver", json_string("not loaded"));
	}
	for (size_t i = 0; i < nf; i++)
		json_array_append_new(fab, json_pack("{s:I,s:s,s:I,s:I,s:I,s:i}", "ig", (json_int_t)fv[i].ig,
			"path", fv[i].path, "book_size", (json_int_t)fv[i].book_size,
			"books", (json_int_t)fv[i].nr_books, "books_used", (json_int_t)fv[i].books_used,
			"numa_node", fv[i].numa_node));
	for (size_t i = 0; i < kn; i++)
		json_array_append_new(sh, json_pack("{s:s,s:s,s:I,s:I,s:b}", "name", kv[i].name,
			"disk", kv[i].disk, "books", (json_int_t)kv[i].nr_books,
			"size", (json_int_t)(kv[i].nr_books * kv[i].book_size), "open", kv[i].open > 0));
	json_object_set_new(o, "node", ctx->conf->node ? json_string(ctx->conf->node) : json_null());
	json_object_set_new(o, "fabric", fab);
	json_object_set_new(o, "active", sh);
	snprintf(path, sizeof(path), "%s/agent.json", ctx->conf->state_dir);
	agent = json_load_file(path, 0, NULL);
	json_object_set_new(o, "agent", agent ? agent : json_null());
	if (json) {
		/* like every --json output: an array of objects */
		json_t *arr = json_pack("[O]", o);
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		puts(s ? s : "[]");
		json_decref(arr);
		free(s);
		goto out;
	}
	printf("node %s, lfs.ko %s\n", ctx->conf->node ? ctx->conf->node : "(unnamed)",
	       json_string_value(json_object_get(o, "driver")));
	for (size_t i = 0; i < nf; i++)
		printf("fabric IG %u: %s, %u books of %s, %u used\n", fv[i].ig, fv[i].path,
		       fv[i].nr_books, lfsvol_fmt_bytes(fv[i].book_size, a, sizeof(a)), fv[i].books_used);
	for (size_t i = 0; i < kn; i++)
		printf("active: %s as /dev/%s, %u books%s\n", kv[i].name, kv[i].disk, kv[i].nr_books,
		       kv[i].open ? ", open" : "");
	if (agent) {
		printf("agent: librarian %s; last heartbeat %llds ago; scrub %s; %lld zeroed, %lld ZOMBIE books pending\n",
		       json_string_value(json_object_get(agent, "librarian")),
		       (long long)(time(NULL) - json_integer_value(json_object_get(agent, "last_heartbeat"))),
		       json_string_value(json_object_get(agent, "scrub")),
		       (long long)json_integer_value(json_object_get(agent, "zeroed")),
		       (long long)json_integer_value(json_object_get(agent, "zombies_pending")));
		if (json_string_value(json_object_get(agent, "check")))
			printf("agent: check of FREE books: %s\n",
			       json_string_value(json_object_get(agent, "check")));
	} else {
		printf("agent: no state in %s (not running yet?)\n", path);
	}
out:
	free(fv);
	lfs_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	json_decref(o);
	return r;
}
