// SPDX-License-Identifier: GPL-2.0
/*
 * The running agent's sweep of this node's FREE books of unknown content
 * (agent.check_free): free.unknown lists a batch (256 MiB of books, at
 * least one) and a token; a child process (job.c) reads each book with the
 * kernel's BOOK_CHECK and, on a device that carries the label of the
 * librarian's fabric, zeroes those that do not read as zeroes
 * (BOOK_ZERO), while the agent keeps serving; free.checked reports the
 * books that read as zeroes and free.zeroed those zeroed, with the token,
 * and the librarian marks them known zero unless something could have
 * changed them since the listing (docs/PROTOCOL.md). Only a labelled device
 * is ever written: a wrong device map is refused by the label check at
 * attach, so zeroing never-used memory cannot wipe another device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "kernel.h"
#include "msg.h"
#include "session.h"

/* bytes of books read by one batch (at least one book) */
#define CHECK_BATCH_BYTES (256ULL << 20)

static void check_pause(struct agent_state *st, int seconds)
{
	st->sweeping = false;
	json_decref(st->after);
	st->after = NULL;
	st->next_sweep = lfsvol_now_ms() + 1000LL * seconds;
	st->sweep.what[0] = '\0';
}

static void check_failed(const struct lfsvol_conf *conf, struct agent_state *st, const char *what,
			 const char *why)
{
	snprintf(st->check, sizeof(st->check), "%s: %s", what, why);
	check_pause(st, conf->check_interval);
}

/* The fabric device of a book here, if the book lies within it. */
static const struct lfs_fabric_info *book_device(const struct lfs_fabric_info *fv, size_t nf,
						 json_t *book)
{
	uint32_t ig = (uint32_t)json_integer_value(json_array_get(book, 0));
	json_int_t b = json_integer_value(json_array_get(book, 1));

	for (size_t i = 0; i < nf; i++)
		if (fv[i].ig == ig)
			return b < (json_int_t)fv[i].nr_books ? &fv[i] : NULL;
	return NULL;
}

/*
 * The listed books that can be read here, with what the child does to
 * each: read it, and zero it if its device carries the fabric's label.
 * Those that cannot be read are passed over, and the next sweep tries them
 * again: books of IGs not attached (yet), and books beyond the end of the
 * attached device (the librarian's geometry gives the IG more books than
 * the device holds). They are counted in checked_skipped.
 */
static json_t *readable(struct lfs_client *drv, const struct lfsvol_fabric_id *id, json_t *list,
			struct agent_state *st, uint8_t *flags)
{
	struct lfs_fabric_info *fv = NULL;
	json_t *batch = json_array(), *el;
	size_t i, nf = 0;

	lfsnl_fabric_list(drv, &fv, &nf);
	json_array_foreach(list, i, el) {
		const struct lfs_fabric_info *f = book_device(fv, nf, el);

		if (!f)
			continue;
		flags[json_array_size(batch)] =
			LFSVOL_JOB_CHECK |
			(id->has_uuid && f->labelled &&
					 !memcmp(f->fabric_uuid, id->uuid, LFS_UUID_LEN) ?
				 LFSVOL_JOB_ZERO :
				 0);
		json_array_append(batch, el);
	}
	free(fv);
	st->checked_skipped += (long long)(json_array_size(list) - json_array_size(batch));
	return batch;
}

static void sweep_done(const struct lfsvol_conf *conf, struct agent_state *st)
{
	char skipped[128] = "";

	if (st->checked_skipped)
		snprintf(
			skipped, sizeof(skipped),
			"; %lld passed over in this sweep (IG not attached here, or beyond the end of its device)",
			st->checked_skipped);
	snprintf(
		st->check, sizeof(st->check),
		"idle: every FREE book of this node was checked; %lld found zero, %lld zeroed, %lld not, since the agent started%s",
		st->checked_zero, st->zeroed_free, st->checked_other, skipped);
	check_pause(st, conf->check_interval);
}

/* The next batch of the sweep (free.unknown after the last one); NULL: none, or failed. */
static json_t *list_batch(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			  struct agent_state *st, uint64_t book_size)
{
	json_int_t limit =
		book_size >= CHECK_BATCH_BYTES ? 1 : (json_int_t)(CHECK_BATCH_BYTES / book_size);
	json_t *res = NULL;
	int r;

	if (limit > LFS_BOOKS_PER_ATTR)
		limit = LFS_BOOKS_PER_ATTR;
	r = lfsvol_lib_call(lib, "free.unknown",
			    st->after ? json_pack("{s:I,s:O}", "limit", limit, "after", st->after) :
					json_pack("{s:I}", "limit", limit),
			    &res);
	if (r) {
		check_failed(conf, st, "listing FREE books failed", lfsvol_lib_errmsg(lib));
		return NULL;
	}
	if (!json_array_size(json_object_get(res, "books"))) {
		sweep_done(conf, st);
		json_decref(res);
		return NULL;
	}
	return res;
}

/* FREE books of unknown content on this node, from the geometry (for the progress). */
static long long unknown_total(const struct lfsvol_conf *conf, struct lfsvol_lib *lib)
{
	json_t *geo = NULL, *rack, *enc, *node, *ig;
	size_t ri, ei, ni, gi;
	long long n = 0;

	if (lfsvol_lib_call(lib, "geometry", NULL, &geo))
		return 0;
	json_array_foreach(json_object_get(geo, "racks"), ri, rack)
		json_array_foreach(json_object_get(rack, "enclosures"), ei, enc)
			json_array_foreach(json_object_get(enc, "nodes"), ni, node) {
				if (strcmp(json_string_value(json_object_get(node, "name")) ?: "",
					   conf->node ?: ""))
					continue;
				json_array_foreach(json_object_get(node, "igs"), gi, ig)
					n += json_integer_value(json_object_get(ig, "free")) -
					     json_integer_value(json_object_get(ig, "zero"));
			}
	json_decref(geo);
	return n;
}

static int sweep_begin(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct agent_state *st)
{
	if (st->sweeping)
		return 0;
	st->sweeping = true;
	st->checked_skipped = 0;
	json_decref(st->after);
	st->after = NULL;
	lfsvol_progress_start(&st->sweep, "never-used books", unknown_total(conf, lib));
	return 0;
}

/* Start the child on a batch: 1 if it runs. */
static int batch_start(const struct lfsvol_conf *conf, struct agent_state *st,
		       struct lfsvol_job *job, json_t *batch, const uint8_t *flags, uint64_t bs)
{
	size_t i, n = json_array_size(batch);
	struct lfs_book *books = calloc(n, sizeof(*books));
	json_t *el;
	int r;

	json_array_foreach(batch, i, el) {
		books[i].ig = (uint32_t)json_integer_value(json_array_get(el, 0));
		books[i].book = (uint32_t)json_integer_value(json_array_get(el, 1));
	}
	r = books ? lfsvol_job_start(job, books, flags, n, bs) : -ENOMEM;
	free(books);
	if (r) {
		check_failed(conf, st, "cannot start a check", strerror(-r));
		return 0;
	}
	snprintf(st->check, sizeof(st->check), "reading %zu books from [%lld, %lld]", n,
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 0)),
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 1)));
	return 1;
}

int lfsvol_check_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, struct agent_state *st, struct lfsvol_job *job)
{
	struct lfsvol_fabric_id id;
	json_t *res, *list, *batch;
	uint8_t *flags;
	int r = 0;

	if (!conf->check_free || !lib || lfsvol_fabric_id_get(lib, 0, &id) ||
	    (!st->sweeping && lfsvol_now_ms() < st->next_sweep))
		return 0;
	sweep_begin(conf, lib, st);
	res = list_batch(conf, lib, st, id.book_size);
	if (!res)
		return 0;
	list = json_object_get(res, "books");
	/* the sweep goes on after this batch, whatever becomes of it */
	json_decref(st->after);
	st->after = json_incref(json_array_get(list, json_array_size(list) - 1));
	flags = calloc(json_array_size(list), 1);
	batch = flags ? readable(drv, &id, list, st, flags) : json_array();
	if (json_array_size(batch))
		r = batch_start(conf, st, job, batch, flags, id.book_size);
	free(flags);
	if (r) {
		st->sweep_books = json_incref(batch);
		snprintf(st->sweep_token, sizeof(st->sweep_token), "%s",
			 json_string_value(json_object_get(res, "token")) ?: "");
	}
	json_decref(batch); /* none attached here: the next batch at the next turn */
	json_decref(res);
	return r;
}

/* free.checked or free.zeroed with the books of that result; how many were marked. */
static long long report(struct lfsvol_lib *lib, struct agent_state *st, const char *op,
			const struct lfsvol_job *job, int which)
{
	json_t *books = json_array(), *res = NULL, *el;
	long long marked;
	size_t i;

	json_array_foreach(st->sweep_books, i, el)
		if (i < job->n && job->result[i] == which)
			json_array_append(books, el);
	if (!json_array_size(books)) {
		json_decref(books);
		return 0;
	}
	if (lfsvol_lib_call(lib, op,
			    json_pack("{s:s,s:o}", "token", st->sweep_token, "books", books), &res))
		return -1;
	marked = json_integer_value(json_object_get(res, "marked"));
	json_decref(res);
	return marked;
}

static void report_batch(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			 struct agent_state *st, const struct lfsvol_job *job)
{
	long long zero = report(lib, st, "free.checked", job, LFSVOL_BOOK_ZERO);
	long long zeroed = zero < 0 ? -1 : report(lib, st, "free.zeroed", job, LFSVOL_BOOK_ZEROED);

	if (zero < 0 || zeroed < 0) {
		check_failed(conf, st, "reporting checked books failed", lfsvol_lib_errmsg(lib));
		return;
	}
	st->checked_zero += zero;
	st->zeroed_free += zeroed;
	st->checked_other += (long long)job->n - zero - zeroed;
}

int lfsvol_check_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			 struct agent_state *st, struct lfsvol_job *job)
{
	size_t before = job->done;
	int finished = lfsvol_job_read(job);
	char why[128];

	lfsvol_progress_add(&st->sweep, (long long)(job->done - before),
			    (job->done - before) * job->book_size);
	if (!finished)
		return 0;
	if (job->status) {
		snprintf(why, sizeof(why), "%s; next try in %d s",
			 job->status == -EPIPE ? "the reading process ended early" :
						 strerror(-job->status),
			 conf->check_interval);
		check_failed(conf, st, "reading books failed", why);
	} else if (!lib) {
		check_pause(st, 0); /* the session was lost: again once it is back */
	} else {
		report_batch(conf, lib, st, job);
	}
	json_decref(st->sweep_books);
	st->sweep_books = NULL;
	lfsvol_job_free(job);
	lfsvol_state_write(conf, st);
	return 1;
}

void lfsvol_check_stop(struct agent_state *st)
{
	json_decref(st->sweep_books);
	json_decref(st->after);
	st->sweep_books = st->after = NULL;
}
