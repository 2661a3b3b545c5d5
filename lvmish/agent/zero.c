// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent's zeroing of this node's ZOMBIE books: zombie.list, the
 * kernel's BOOK_ZERO, then zombie.zeroed (the librarian makes them FREE and
 * known zero). A book is reported zeroed only after the kernel's zeroing
 * and flush succeeded, and only if the kernel says it zeroed it (it skips a
 * book a shelf here holds).
 *
 * The agent daemon zeroes in a child process (job.c), one book at a time,
 * and reports what it zeroed every few seconds while the child goes on;
 * `agent --once' and `lfsvol scrub' without a running agent zero in their
 * own process (lfsvol_agent_scrub). Either way progress is books done of
 * total, rate and time left.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "lfsagent.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "session.h"

#define REPORT_EVERY_MS 2000 /* zeroed books told to the librarian at least this often */
#define SAY_EVERY_MS 2000 /* progress lines of a scrub in this process */

static struct lfs_book *books_of(json_t *list, size_t n)
{
	struct lfs_book *books = calloc(n ? n : 1, sizeof(*books));
	size_t i;
	json_t *el;

	if (!books)
		return NULL;
	json_array_foreach(list, i, el) {
		books[i].ig = (uint32_t)json_integer_value(json_array_get(el, 0));
		books[i].book = (uint32_t)json_integer_value(json_array_get(el, 1));
	}
	return books;
}

/* zombie.zeroed for the books marked zeroed; they become REPORTED. */
static int report_zeroed(struct lfsvol_lib *lib, const struct lfs_book *books, uint8_t *result,
			 size_t n)
{
	json_t *done = json_array();
	int r = 0;

	for (size_t i = 0; done && i < n; i++)
		if (result[i] == LFSVOL_BOOK_ZEROED)
			json_array_append_new(done, json_pack("[i,i]", books[i].ig, books[i].book));
	if (json_array_size(done))
		r = lfsvol_lib_call(lib, "zombie.zeroed", json_pack("{s:O}", "books", done), NULL);
	for (size_t i = 0; !r && i < n; i++)
		if (result[i] == LFSVOL_BOOK_ZEROED)
			result[i] = LFSVOL_BOOK_REPORTED;
	json_decref(done);
	return r;
}

/* This node's ZOMBIE books, at most limit; NULL with *n 0 if none, or -errno. */
static int list_zombies(const struct lfsvol_conf *conf, struct lfsvol_lib *lib, int limit,
			struct lfs_book **books, size_t *n)
{
	json_t *res = NULL;
	int r;

	*books = NULL;
	*n = 0;
	r = lfsvol_lib_call(lib, "zombie.list", json_pack("{s:i}", "limit", limit), &res);
	if (r)
		return r;
	*n = json_array_size(json_object_get(res, "books"));
	if (*n)
		*books = books_of(json_object_get(res, "books"), *n);
	json_decref(res);
	(void)conf;
	return *n && !*books ? -ENOMEM : 0;
}

/* Does a bad range of fabric f cover any byte of book (of bs bytes)? */
static bool book_bad(const struct lfs_fabric_info *f, uint32_t book, uint64_t bs)
{
	uint64_t start = (uint64_t)book * bs, end = start + bs;

	for (uint32_t i = 0; i < f->nr_bad && i < LFS_BAD_MAX; i++) {
		uint64_t s = (uint64_t)f->bad[i].book * bs + f->bad[i].offset;

		if (s < end && s + f->bad[i].length > start)
			return true;
	}
	return false;
}

/*
 * Leave out of books[0..n) the ones holding memory lfs.ko reports bad (its
 * fabrics' bad ranges, docs/CXL.md "Poison"): BOOK_ZERO refuses them, and
 * they stay ZOMBIE, never FREE. Returns how many are left, *nbad how many
 * were left out. A node that cannot tell keeps them all (BOOK_ZERO still
 * refuses each, job.h's LFSVOL_BOOK_BAD).
 */
static size_t drop_bad(struct lfs_client *drv, struct lfs_book *books, size_t n, uint64_t bs,
		       size_t *nbad)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0, k = 0;

	*nbad = 0;
	if (!drv || !bs || lfsnl_fabric_list(drv, &fv, &nf))
		return n;
	for (size_t i = 0; i < n; i++) {
		bool bad = false;

		for (size_t j = 0; j < nf && !bad; j++)
			bad = fv[j].ig == books[i].ig && book_bad(&fv[j], books[i].book, bs);
		if (!bad)
			books[k++] = books[i];
	}
	free(fv);
	*nbad = n - k;
	return k;
}

/* In this process: one batch, book by book. 1 if all of it was zeroed, 0 if not, or -errno. */
static int scrub_batch(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, struct agent_state *st, bool verbose, int64_t *said)
{
	uint64_t bs = lfsvol_lib_book_size(lib);
	struct lfs_book *books;
	uint8_t *result;
	size_t n, nz = 0, nbad = 0, left;
	char line[256];
	int r = list_zombies(conf, lib, conf->scrub_batch, &books, &n);

	if (r || !n)
		return r ? lfsvol_lib_fail(lib, "listing ZOMBIE books", r) : 0;
	n = drop_bad(drv, books, n, bs, &left);
	result = calloc(n ? n : 1, 1);
	for (size_t i = 0; result && i < n && !lfsvol_agent_stop && !r; i++) {
		bool z = false;

		r = lfsnl_books_zero(drv, &books[i], 1, &z);
		result[i] = z ? LFSVOL_BOOK_ZEROED : LFSVOL_BOOK_UNTOUCHED;
		if (r == -EIO) { /* bad memory: left ZOMBIE (job.h) */
			lfsvol_err("book %u:%u not zeroed: %s", books[i].ig, books[i].book,
				   lfs_client_error(drv));
			result[i] = LFSVOL_BOOK_BAD;
			nbad++;
			r = 0;
		}
		nz += z;
		lfsvol_progress_add(&st->zeroing, 1, z ? bs : 0);
		if (verbose && lfsvol_now_ms() - *said >= SAY_EVERY_MS) {
			lfsvol_progress_text(&st->zeroing, bs, line, sizeof(line));
			lfsvol_info("zeroing: %s", line);
			fflush(stdout); /* seen as it goes, in a log too */
			*said = lfsvol_now_ms();
		}
	}
	if (r)
		r = lfsvol_drv_fail(drv, r, "zeroing ZOMBIE books");
	else if (!result)
		r = lfsvol_fail(LFSVOL_EFAIL, -ENOMEM, "out of memory");
	if (result && report_zeroed(lib, books, result, n) && !r)
		r = lfsvol_lib_fail(lib, "reporting zeroed books", -EIO);
	st->zeroed += (long long)nz;
	if (!r && (nz < n || left))
		snprintf(
			st->scrub, sizeof(st->scrub),
			"waiting: %zu books held by shelves here, %zu holding bad memory (lfsctl fabric): left ZOMBIE",
			n - nz - nbad, nbad + left);
	free(books);
	free(result);
	/* bad books come back in every list: a batch with some ends the pass */
	return r ? r : nz == n && !left && !lfsvol_agent_stop;
}

/* How many ZOMBIE books this node has (for the total of the progress). */
static long long count_zombies(struct lfsvol_lib *lib)
{
	json_t *res = NULL;
	long long n = 0;

	if (!lfsvol_lib_call(lib, "zombie.list", json_pack("{s:i}", "limit", 65536), &res))
		n = (long long)json_array_size(json_object_get(res, "books"));
	json_decref(res);
	return n;
}

int lfsvol_scrub_pass(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct lfs_client *drv, struct agent_state *st, bool verbose)
{
	int64_t said = lfsvol_now_ms();
	int r = 0;

	lfsvol_progress_start(&st->zeroing, "ZOMBIE books", count_zombies(lib));
	snprintf(st->scrub, sizeof(st->scrub), "idle");
	for (int rounds = 0; !lfsvol_agent_stop && rounds < 1000000; rounds++) {
		r = scrub_batch(conf, lib, drv, st, verbose, &said);
		lfsvol_state_write(conf, st);
		if (r <= 0)
			break;
	}
	st->pending = 0;
	st->zeroing.what[0] = '\0';
	lfsvol_state_write(conf, st);
	return r < 0 ? r : 0;
}

/* The run of zeroing ends: nothing more, or it stopped (agent.scrub waits for this). */
static void run_end(struct agent_state *st, const char *fmt, const char *why)
{
	snprintf(st->scrub, sizeof(st->scrub), fmt, why);
	st->zeroing.what[0] = '\0';
	st->pending = 0;
	st->runs++;
	st->recent_zeroed[st->runs % AGENT_RECENT_RUNS] = st->run_zeroed;
	st->run_zeroed = 0;
}

/* zero_start's drop_bad(), with a session of its own; none left: the run ends. */
static size_t without_bad(struct lfs_book *books, size_t n, uint64_t bs, struct agent_state *st)
{
	struct lfs_client *drv = NULL;
	char why[128];
	size_t nbad = 0;

	if (!lfs_client_open(&drv))
		n = drop_bad(drv, books, n, bs, &nbad);
	lfs_client_close(drv);
	if (!n) {
		snprintf(why, sizeof(why),
			 "%zu ZOMBIE books holding bad memory (lfsctl fabric): left ZOMBIE", nbad);
		run_end(st, "waiting: %s", why);
	}
	return n;
}

/* The daemon: start the next batch in a child, if this node has ZOMBIE books. */
int lfsvol_zero_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct agent_state *st, struct lfsvol_job *job)
{
	uint64_t bs = lib ? lfsvol_lib_book_size(lib) : 0;
	struct lfs_book *books;
	uint8_t *flags;
	size_t n;
	int r;

	if (st->pending <= 0)
		return 0;
	if (!lib || !bs) {
		run_end(st, "waiting: %s", "no librarian session");
		return 0;
	}
	r = list_zombies(conf, lib, conf->scrub_batch, &books, &n);
	if (r || !n) {
		run_end(st, r ? "listing ZOMBIE books failed: %s" : "idle%s",
			r ? lfsvol_lib_errmsg(lib) : "");
		return 0;
	}
	n = without_bad(books, n, bs, st);
	if (!n) {
		free(books);
		return 0;
	}
	flags = malloc(n);
	if (flags)
		memset(flags, LFSVOL_JOB_ZERO, n);
	r = flags ? lfsvol_job_start(job, books, flags, n, bs) : -ENOMEM;
	free(books);
	free(flags);
	if (r) {
		run_end(st, "cannot start zeroing: %s", strerror(-r));
		return 0;
	}
	if (!st->zeroing.what[0])
		lfsvol_progress_start(&st->zeroing, "ZOMBIE books", st->pending);
	snprintf(st->scrub, sizeof(st->scrub), "zeroing a batch of %zu books", n);
	return 1;
}

/* The batch has ended: the run goes on with the next batch unless it stopped. */
static void zero_end(struct agent_state *st, struct lfsvol_job *job)
{
	char why[160];
	size_t held = job->done - job->zeroed - job->bad;

	if (job->status) {
		run_end(st, "zeroing failed: %s; next try at the next pass",
			strerror(-job->status));
	} else if (held || (job->bad && !job->zeroed)) {
		/* bad books come back in every list: a batch of nothing else ends the run */
		snprintf(
			why, sizeof(why),
			"%zu books held by shelves here, %zu holding bad memory (lfsctl fabric): left ZOMBIE",
			held, job->bad);
		run_end(st, "waiting: %s", why);
	} else {
		st->pending -= (long long)job->zeroed;
		if (st->pending < 1)
			st->pending = 1; /* list again: the run ends when none is left */
	}
}

int lfsvol_zero_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			struct agent_state *st, struct lfsvol_job *job)
{
	size_t before = job->done, zeroed = job->zeroed;
	int finished = lfsvol_job_read(job);
	int64_t now = lfsvol_now_ms();

	lfsvol_progress_add(&st->zeroing, (long long)(job->done - before),
			    (job->zeroed - zeroed) * job->book_size);
	st->zeroed += (long long)(job->zeroed - zeroed);
	st->run_zeroed += (long long)(job->zeroed - zeroed);
	if (lib && (finished || now - job->reported_ms >= REPORT_EVERY_MS)) {
		if (report_zeroed(lib, job->books, job->result, job->n))
			snprintf(st->scrub, sizeof(st->scrub), "reporting zeroed books failed: %s",
				 lfsvol_lib_errmsg(lib));
		job->reported_ms = now;
	}
	if (finished) {
		zero_end(st, job);
		lfsvol_job_free(job);
	}
	lfsvol_state_write(conf, st);
	return finished;
}

/* scrub --free: FREE books of unknown content go ZOMBIE (free.scrub), then are zeroed. */
static int scrub_free(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct lfs_client *drv, struct agent_state *st, long long *fresh)
{
	for (;;) {
		json_t *res = NULL;
		json_int_t n;
		bool more;
		int r;

		r = lfsvol_lib_request(lib, "sending never-scrubbed FREE books to be zeroed",
				       "free.scrub", json_pack("{s:i}", "limit", conf->scrub_batch),
				       &res);
		if (r)
			return r;
		n = json_integer_value(json_object_get(res, "books"));
		more = json_is_true(json_object_get(res, "more"));
		json_decref(res);
		*fresh += n;
		r = lfsvol_scrub_pass(conf, lib, drv, st, true);
		if (r)
			return r;
		if (!more || n <= 0 || lfsvol_agent_stop)
			return 0;
	}
}

/* No agent runs: zero in this process, under the agent's lock (lfsagent.h). */
int lfsvol_agent_scrub(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, bool free_too, long long *zeroed, long long *fresh)
{
	struct agent_state st = { .scrub = "idle" };
	struct lfsvol_fabric_id id;
	int lock, r;

	*zeroed = 0;
	*fresh = 0;
	lock = lfsvol_state_lock(conf, false);
	if (lock < 0)
		return lock;
	snprintf(st.librarian, sizeof(st.librarian), "connected to %s", conf->librarian);
	if (!lfsvol_fabric_id_get(lib, 0, &id))
		lfsvol_attach_fabrics(conf, drv, &id, true);
	r = lfsvol_scrub_pass(conf, lib, drv, &st, true);
	if (!r && free_too)
		r = scrub_free(conf, lib, drv, &st, fresh);
	close(lock);
	*zeroed = st.zeroed;
	return r;
}
