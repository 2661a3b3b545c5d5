// SPDX-License-Identifier: GPL-2.0
/*
 * shelf.resize: to a number of books, or to a number of bytes (the books
 * that hold them, and lfs.size exactly). A grow takes books under the
 * shelf's policy (lib_shelf_grow) while no other node holds the shelf
 * exclusively: "shared" and "ro" holders see the growth at their next open.
 * A shrink turns the books of the tail into ZOMBIE books for their nodes to
 * zero while no other node holds the shelf at all, and lowers lfs.size to
 * the new capacity. All in the request's transaction: a failure changes
 * nothing. On PostgreSQL a grow is two round trips (the lookup, which reads
 * all the request needs, and the takes), a shrink two (the lookup and the
 * books it removes); the reply is built from what the request knows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"

struct resize {
	int64_t books;
	int64_t bytes; /* -1: sized in books */
	struct lib_shelf_full f; /* the shelf as looked up, then as changed */
	int64_t *added; /* the new books, in order (a grow) */
	int64_t now;
};

/* Exactly one of "books" or "bytes"; bytes need ceil(bytes / book_size) books. */
static int resize_args(struct req *rq, struct resize *rs)
{
	int64_t most = (int64_t)rq->c->total_books, bs = (int64_t)rq->c->book_size;
	bool books = json_object_get(rq->args, "books"), bytes = json_object_get(rq->args, "bytes");
	int r;

	rs->bytes = -1;
	if (books == bytes)
		return FAIL(
			rq, EINVAL,
			"shelf.resize needs exactly one of \"books\" (the new size in books) or \"bytes\" (in bytes)");
	if (books)
		r = lib_arg_int(rq, "books", 0, most, true, &rs->books);
	else if ((r = lib_arg_int(rq, "bytes", 0, lib_shelf_capacity(rq->c, most), true,
				  &rs->bytes)) == 0)
		rs->books = rs->bytes / bs + (rs->bytes % bs != 0);
	return r < 0 ? r : lib_check_shelf_books(rq, rs->books);
}

/* As lib_arg_shelf(), with everything the resize needs in the same read. */
static int resize_lookup(struct req *rq, struct resize *rs)
{
	const char *name = NULL;
	char b[200];
	int r;

	if ((r = lib_arg_str(rq, "name", true, &name)) < 0 ||
	    (r = lib_check_lookup_name(rq, name)) < 0)
		return r;
	r = lib_store_shelf_find_full(rq->s, name, &rs->f, &rq->err);
	if (r == -ENOENT)
		return FAIL(rq, ENOENT, "no shelf named '%s'", lib_shown(name, b, sizeof(b)));
	return r < 0 ? r : lib_require_access(rq, &rs->f.sh, ACC_SEE, "see");
}

/* lfs.size as the request leaves it: text (a byte count), written with the request. */
static int size_to(struct req *rq, struct resize *rs, int64_t bytes)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, bytes);
	free(rs->f.size);
	rs->f.size = strdup(text);
	return rs->f.size ? lib_size_put(rq, rs->f.sh.id, bytes) :
			    FAIL(rq, ENOMEM, "out of memory");
}

/* Books at position books and beyond become ZOMBIE; *delta lists them. */
static int shelf_shrink(struct req *rq, struct resize *rs, json_t **delta)
{
	struct lib_shelf *sh = &rs->f.sh;
	int64_t old = sh->books, books = rs->books, cap = lib_shelf_capacity(rq->c, books);
	int r = lib_require_unshared(rq, sh, "shrink");

	if (r < 0)
		return r;
	if (old - books <= LIB_BOOKS_LIMIT)
		*delta = json_pack("{s:o}", "removed",
				   lib_reply_map(rq, sh->id, books, old - books));
	r = lib_store_shelf_release(rq->s, sh->id, books, &rq->err);
	if (r == 0)
		r = lib_store_shelf_set_books(rq->s, sh->id, books, rs->now, &rq->err);
	if (r < 0)
		return r;
	sh->books = books;
	/* lfs.size above the new capacity comes down to it */
	if (rs->f.size && lib_size_over(rs->f.size, cap))
		return size_to(rq, rs, cap);
	return 0;
}

/* To books (not fewer than now), by the owner's quota; *delta lists the new books. */
static int shelf_grow(struct req *rq, struct resize *rs, int node, json_t **delta)
{
	const char *const placement[3] = { rs->f.policy, rs->f.igs, rs->f.partners };
	struct lib_shelf *sh = &rs->f.sh;
	int64_t old = sh->books, books = rs->books;
	int r;

	if ((r = lib_require_growable(rq, sh)) < 0 || books == old ||
	    (r = lib_quota_check(rq, sh->owner, sh->tenant, 0, books - old)) < 0 ||
	    (r = lib_shelf_grow(rq, sh, node, books - old, placement, &rs->added)) < 0)
		return r;
	if (books - old <= LIB_BOOKS_LIMIT)
		*delta = json_pack("{s:o}", "added", lib_books_array(rs->added, books - old));
	return 0;
}

/* The shelf's summary as the resize left it (read back if it is active, or with "limit"). */
static json_t *resize_reply(struct req *rq, struct resize *rs, int64_t old, int64_t limit)
{
	struct lib_shelf_full *f = &rs->f;
	bool changed = f->sh.books != old;
	struct lib_shelf_row row = {
		.name = f->sh.name,
		.uuid = f->uuid,
		.owner = f->sh.owner,
		.tenant = f->sh.tenant,
		.policy = f->policy,
		.access = f->access,
		.size = f->size,
		.ctime = f->ctime,
		.mtime = changed ? rs->now : f->mtime,
		.books = f->sh.books,
		.gen = f->sh.gen + changed,
	};

	if (limit >= 0 || f->sh.active)
		return limit >= 0 ? lib_reply_shelf_map(rq, f->sh.id, 0, limit) :
				    lib_reply_shelf(rq, f->sh.id);
	return lib_reply_shelf_known(rq, f->sh.id, &row, json_array());
}

int lib_op_shelf_resize(struct req *rq)
{
	struct resize rs = { .now = time(NULL) };
	json_t *delta = NULL;
	int64_t old, limit = -1;
	int node, r;

	if ((r = resize_lookup(rq, &rs)) < 0 || (r = lib_arg_same_shelf(rq, &rs.f.sh)) < 0 ||
	    (r = resize_args(rq, &rs)) < 0 || (r = lib_arg_node(rq, false, &node)) < 0 ||
	    (r = lib_arg_int(rq, "limit", 0, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_require_access(rq, &rs.f.sh, ACC_RW, "resize")) < 0)
		goto out;
	old = rs.f.sh.books;
	if (rs.books < old)
		r = shelf_shrink(rq, &rs, &delta);
	else
		r = shelf_grow(rq, &rs, node, &delta);
	if (r == 0 && rs.bytes >= 0)
		r = size_to(rq, &rs, rs.bytes);
	if (r < 0)
		goto out;
	/* with "limit": the new map from its start, as shelf.get shows it */
	rq->result = resize_reply(rq, &rs, old, limit);
	json_object_set_new(rq->result, "old_books", json_integer(old));
	if (delta)
		json_object_update(rq->result, delta);
out:
	json_decref(delta);
	free(rs.added);
	lib_shelf_full_free(&rs.f);
	return r;
}
