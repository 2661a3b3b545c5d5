// SPDX-License-Identifier: GPL-2.0
/*
 * shelf.resize: to a number of books, or to a number of bytes (the books
 * that hold them, and lfs.size exactly). A grow takes books under the
 * shelf's policy (lib_shelf_grow) while no other node holds the shelf
 * exclusively: "shared" and "ro" holders see the growth at their next open.
 * A shrink turns the books of the tail into ZOMBIE books for their nodes to
 * zero while no other node holds the shelf at all, and lowers lfs.size to
 * the new capacity. All in the request's transaction: a failure changes
 * nothing.
 */
#include <errno.h>
#include <time.h>

#include "ops.h"

struct resize {
	int64_t books;
	int64_t bytes; /* -1: sized in books */
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

/* Books at position books and beyond become ZOMBIE; *delta lists them. */
static int shelf_shrink(struct req *rq, struct lib_shelf *sh, int64_t books, json_t **delta)
{
	int64_t old = sh->books, r = lib_require_unshared(rq, sh, "shrink");

	if (r < 0)
		return r;
	if (old - books <= LIB_BOOKS_LIMIT)
		*delta = json_pack("{s:o}", "removed",
				   lib_reply_map(rq, sh->id, books, old - books));
	r = lib_store_shelf_release(rq->s, sh->id, books, &rq->err);
	if (r >= 0)
		r = lib_store_shelf_set_books(rq->s, sh->id, books, time(NULL), &rq->err);
	if (r >= 0) {
		sh->books = books;
		r = lib_size_clamp(rq, sh);
	}
	return r < 0 ? r : 0;
}

/* To books (not fewer than now), by the owner's quota; *delta lists the new books. */
static int shelf_grow(struct req *rq, struct lib_shelf *sh, int node, int64_t books, json_t **delta)
{
	int64_t old = sh->books;
	int r;

	if ((r = lib_require_growable(rq, sh)) < 0 || books == old ||
	    (r = lib_quota_check(rq, sh->owner, sh->tenant, 0, books - old)) < 0 ||
	    (r = lib_shelf_grow(rq, sh, node, books - old)) < 0)
		return r;
	if (books - old <= LIB_BOOKS_LIMIT)
		*delta = json_pack("{s:o}", "added", lib_reply_map(rq, sh->id, old, books - old));
	return 0;
}

int lib_op_shelf_resize(struct req *rq)
{
	struct lib_shelf sh;
	struct resize rs;
	json_t *delta = NULL;
	int64_t old, limit = -1;
	int node, r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = resize_args(rq, &rs)) < 0 || (r = lib_arg_node(rq, false, &node)) < 0 ||
	    (r = lib_arg_int(rq, "limit", 0, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_require_access(rq, &sh, ACC_RW, "resize")) < 0)
		return r;
	old = sh.books;
	if (rs.books < old)
		r = shelf_shrink(rq, &sh, rs.books, &delta);
	else
		r = shelf_grow(rq, &sh, node, rs.books, &delta);
	if (r == 0 && rs.bytes >= 0)
		r = lib_size_put(rq, sh.id, rs.bytes);
	if (r < 0) {
		json_decref(delta);
		return r;
	}
	/* with "limit": the new map from its start, as shelf.get shows it */
	rq->result = limit >= 0 ? lib_reply_shelf_map(rq, sh.id, 0, limit) :
				  lib_reply_shelf(rq, sh.id);
	json_object_set_new(rq->result, "old_books", json_integer(old));
	if (delta)
		json_object_update(rq->result, delta);
	json_decref(delta);
	return 0;
}
