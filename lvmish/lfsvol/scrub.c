// SPDX-License-Identifier: GPL-2.0
/*
 * Zeroing this node's ZOMBIE books: zombie.list, the kernel's BOOK_ZERO,
 * then zombie.zeroed (the librarian makes them FREE). A book is reported
 * zeroed only after the kernel's zeroing and flush succeeded. The agent's
 * passes and `lfsvol scrub' run it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "kernel.h"
#include "lfsvol.h"
#include "session.h"

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

/* The books of the batch the kernel zeroed, as [[ig, book], ...]. */
static json_t *zeroed_list(const struct lfs_book *books, const bool *zeroed, size_t n)
{
	json_t *done = json_array();

	for (size_t i = 0; done && i < n; i++)
		if (zeroed[i])
			json_array_append_new(done, json_pack("[i,i]", books[i].ig, books[i].book));
	return done;
}

/*
 * Report the books zeroed: only those the kernel says it zeroed (it skips
 * a book a shelf here holds; reporting the whole listing would free it).
 */
static int scrub_report(struct lfsvol_lib *lib, json_t *done)
{
	if (!json_array_size(done)) {
		json_decref(done);
		return 0;
	}
	return lfsvol_lib_request(lib, "reporting zeroed books", "zombie.zeroed",
				  json_pack("{s:o}", "books", done), NULL);
}

/*
 * One batch: 1 if every book of one was zeroed, 0 if none is left or some
 * are held by shelves here (the next pass asks again), or a negative errno.
 */
static int scrub_batch(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, struct agent_state *st, bool verbose)
{
	json_t *res = NULL, *list, *done;
	struct lfs_book *books;
	bool *zeroed = NULL;
	size_t n, nz;
	int r;

	r = lfsvol_lib_request(lib, "listing ZOMBIE books", "zombie.list",
			       json_pack("{s:i}", "limit", conf->scrub_batch), &res);
	if (r)
		return r;
	list = json_object_get(res, "books");
	n = json_array_size(list);
	books = n ? books_of(list, n) : NULL;
	zeroed = n ? calloc(n, sizeof(*zeroed)) : NULL;
	json_decref(res);
	if (!n) {
		snprintf(st->scrub, sizeof(st->scrub), "idle");
		st->pending = 0;
		return 0;
	}
	if (!books || !zeroed) {
		free(books);
		free(zeroed);
		return lfsvol_fail(LFSVOL_EFAIL, -ENOMEM, "out of memory");
	}
	snprintf(st->scrub, sizeof(st->scrub), "zeroing %zu books (%lld done so far)", n,
		 st->zeroed);
	lfsvol_state_write(conf, st);
	r = lfs_books_zero(drv, books, n, zeroed);
	if (r) {
		snprintf(st->scrub, sizeof(st->scrub), "zeroing failed: %s",
			 lfs_client_error(drv)[0] ? lfs_client_error(drv) : strerror(-r));
		free(books);
		free(zeroed);
		return lfsvol_drv_fail(drv, r, "zeroing ZOMBIE books");
	}
	done = zeroed_list(books, zeroed, n);
	nz = json_array_size(done);
	free(books);
	free(zeroed);
	r = scrub_report(lib, done);
	if (r)
		return r;
	st->zeroed += (long long)nz;
	if (verbose)
		lfsvol_info("zeroed %zu books (%lld in all)%s", nz, st->zeroed,
			    nz < n ? "; the others are held by shelves here" : "");
	if (nz < n)
		snprintf(st->scrub, sizeof(st->scrub), "waiting: %zu books held by shelves here",
			 n - nz);
	lfsvol_state_write(conf, st);
	return nz < n ? 0 : 1;
}

int lfsvol_scrub_pass(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct lfs_client *drv, struct agent_state *st, bool verbose)
{
	for (int rounds = 0; !lfsvol_agent_stop && rounds < 1000000; rounds++) {
		int r = scrub_batch(conf, lib, drv, st, verbose);

		if (r < 0)
			return r;
		if (r == 0)
			return 0;
	}
	return 0;
}

/*
 * scrub --free: the librarian sends this node's FREE books of unknown content
 * (never used since their IG joined the fabric) to ZOMBIE in batches
 * (free.scrub), and they are zeroed like freed books.
 */
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

static int scrub(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
		 bool free_too)
{
	struct agent_state st = { .scrub = "idle" };
	long long fresh = 0;
	int lock, r;

	lock = lfsvol_state_lock(ctx->conf);
	if (lock < 0)
		return lock;
	snprintf(st.librarian, sizeof(st.librarian), "connected to %s", ctx->conf->librarian);
	lfsvol_attach_fabrics(ctx->conf, drv, lfsvol_lib_book_size(lib), true);
	r = lfsvol_scrub_pass(ctx->conf, lib, drv, &st, true);
	if (!r && free_too)
		r = scrub_free(ctx->conf, lib, drv, &st, &fresh);
	close(lock);
	if (!r && free_too)
		lfsvol_info("scrub done: %lld book%s zeroed, %lld of them never scrubbed before",
			    st.zeroed, st.zeroed == 1 ? "" : "s", fresh);
	else if (!r)
		lfsvol_info("scrub done: %lld book%s zeroed", st.zeroed, st.zeroed == 1 ? "" : "s");
	return r;
}

int cmd_scrub(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "free", no_argument, NULL, 'f' },
					      { NULL, 0, NULL, 0 } };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	bool free_too = false;
	int c, r;

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
	ctx->no_agent = true; /* it takes the agent's lock: never wait on the agent */
	r = lfsvol_need_root("scrub");
	if (!r)
		r = lfsvol_need_conf(ctx);
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r)
		r = scrub(ctx, lib, drv, free_too);
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}
