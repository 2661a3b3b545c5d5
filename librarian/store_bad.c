// SPDX-License-Identifier: GPL-2.0
/*
 * Bad books: ranges of poisoned memory that nodes reported (book.bad), kept
 * in the bad table until an admin clears the book (book.clear). A book with
 * a bad range is BOOK_BAD while it is on no shelf, so it is never
 * allocated and never counted free; a shelf's book stays INUSE, and goes
 * BAD instead of ZOMBIE when the shelf lets it go (store_books.c).
 * docs/LIBRARIAN.md, "Bad books".
 */
#include <errno.h>

#include "store.h"

/* 1 if the row is new, 0 if the range was known (a node reports it again). */
static int step_one(struct lib_store *s, lib_st *st, struct lib_err *e)
{
	int rc = lib_step(st), r;

	if (rc == LIB_ROW || rc == LIB_DONE) {
		lib_reset(st);
		return rc == LIB_ROW;
	}
	r = lib_sql_fail(s, e);
	lib_reset(st);
	return r;
}

int lib_store_bad_add(struct lib_store *s, const struct lib_bad *b, struct lib_err *e)
{
	lib_st *st = lib_stmt(s,
			      "INSERT INTO bad(book, off, len, node, since)"
			      " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING RETURNING book");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, b->book);
	lib_bind_int64(st, 2, b->off);
	lib_bind_int64(st, 3, b->len);
	lib_bind_text(st, 4, b->node);
	lib_bind_int64(st, 5, b->since);
	return step_one(s, st, e);
}

int lib_store_book_state(struct lib_store *s, int64_t id, int *state, int *zeroed,
			 struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT state, zeroed FROM books WHERE id = ?1");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		*state = (int)lib_col_int64(st, 0);
		*zeroed = (int)lib_col_int64(st, 1);
	}
	lib_reset(st);
	if (rc == LIB_DONE)
		return -ENOENT;
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_book_set_bad(struct lib_store *s, int64_t id, struct lib_err *e)
{
	lib_st *st = lib_stmt(s,
			      "UPDATE books SET state = BOOK_BAD, zeroed = 0 WHERE id = ?1"
			      " AND state IN (BOOK_FREE, BOOK_ZOMBIE, BOOK_OFFLINE) RETURNING id");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	return step_one(s, st, e);
}

int lib_store_bad_clear(struct lib_store *s, int64_t id, struct lib_err *e)
{
	lib_st *del = lib_stmt(s, "DELETE FROM bad WHERE book = ?1");
	lib_st *st = lib_stmt(s, "UPDATE books SET state = BOOK_ZOMBIE, zeroed = 0"
				 " WHERE id = ?1 AND state = BOOK_BAD RETURNING id");
	int r;

	if (!del || !st)
		return lib_sql_fail(s, e);
	lib_bind_int64(del, 1, id);
	r = lib_stmt_run(s, del, e);
	if (r < 0)
		return r;
	lib_bind_int64(st, 1, id);
	return step_one(s, st, e);
}

int lib_store_bad_each(struct lib_store *s, int64_t lo, int64_t hi, int64_t shelf, int64_t limit,
		       lib_bad_fn *fn, void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s, "SELECT x.book, x.off, x.len, x.node, x.since, b.state, b.shelf, b.seq, s.name"
		   " FROM bad x JOIN books b ON b.id = x.book LEFT JOIN shelves s ON s.id = b.shelf"
		   " WHERE x.book BETWEEN ?1 AND ?2 AND (?3 < 0 OR b.shelf = ?3)"
		   " ORDER BY x.book, x.off, x.len LIMIT ?4");
	int rc = LIB_DONE, r = 0, n = 0;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lo);
	lib_bind_int64(st, 2, hi);
	lib_bind_int64(st, 3, shelf);
	lib_bind_int64(st, 4, limit);
	while (r == 0 && (rc = lib_step(st)) == LIB_ROW) {
		struct lib_bad b = {
			.book = lib_col_int64(st, 0),
			.off = lib_col_int64(st, 1),
			.len = lib_col_int64(st, 2),
			.node = lib_col_text(st, 3),
			.since = lib_col_int64(st, 4),
			.state = (int)lib_col_int64(st, 5),
			.shelf = lib_col_null(st, 6) ? -1 : lib_col_int64(st, 6),
			.seq = lib_col_null(st, 7) ? -1 : lib_col_int64(st, 7),
			.shelf_name = lib_col_text(st, 8),
		};

		n++;
		r = fn ? fn(arg, &b) : 0;
	}
	if (r == 0 && rc != LIB_DONE)
		r = lib_sql_fail(s, e);
	lib_reset(st);
	return r < 0 || fn ? r : n;
}
