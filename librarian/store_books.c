// SPDX-License-Identifier: GPL-2.0
/*
 * The books of shelves and of IGs: a shelf's map, allocation's picks, the
 * per-IG counts (igs.free, kept equal to the IG's FREE books, and igs.zero,
 * to those of them known zero: the only ones allocated).
 */
#include <errno.h>

#include "store.h"
#include "store_known.h"

int lib_store_counts(struct lib_store *s, struct lib_counts *out, struct lib_err *e)
{
	lib_st *st = lib_stmt(s,
			      "SELECT (SELECT total(free) FROM igs), (SELECT total(zero) FROM igs),"
			      " (SELECT count(*) FROM books WHERE state = BOOK_ZOMBIE),"
			      " (SELECT total(books) FROM shelves), (SELECT count(*) FROM shelves),"
			      " (SELECT count(*) FROM activations),"
			      " (SELECT count(*) FROM books WHERE state = BOOK_BAD)");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		out->free = lib_col_int64(st, 0);
		out->zero = lib_col_int64(st, 1);
		out->zombie = lib_col_int64(st, 2);
		out->inuse = lib_col_int64(st, 3);
		out->shelves = lib_col_int64(st, 4);
		out->activations = lib_col_int64(st, 5);
		out->bad = lib_col_int64(st, 6);
	}
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_shelf_books(struct lib_store *s, int64_t shelf, int64_t offset, int64_t limit,
			  lib_id_fn *fn, void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT id FROM books WHERE shelf = ?1 AND seq >= ?2"
				 " ORDER BY seq LIMIT ?3");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_int64(st, 2, offset);
	lib_bind_int64(st, 3, limit);
	return lib_stmt_ids(s, st, fn, arg, e);
}

int lib_store_shelf_igs(struct lib_store *s, int64_t shelf, lib_count_fn *fn, void *arg,
			struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT id >> 32, count(*) FROM books WHERE shelf = ?1"
				 " GROUP BY 1 ORDER BY 1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	return lib_stmt_counts(s, st, fn, arg, e);
}

/*
 * The shelf may have written them: they are no longer known to be zero. A
 * book with a bad range goes BAD, not ZOMBIE: it is never zeroed or reused.
 */
int lib_store_shelf_release(struct lib_store *s, int64_t shelf, int64_t keep, struct lib_err *e)
{
	lib_st *st =
		lib_stmt(s, "UPDATE books SET state = CASE WHEN EXISTS (SELECT 1 FROM bad"
			    " WHERE bad.book = books.id) THEN BOOK_BAD ELSE BOOK_ZOMBIE END,"
			    " shelf = NULL, seq = NULL, zeroed = 0 WHERE shelf = ?1 AND seq >= ?2");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_int64(st, 2, keep);
	return lib_stmt_run_later(s, st, e);
}

struct take {
	struct lib_take *q;
	int64_t shelf;
};

static void bind_take(lib_st *st, int i, void *arg)
{
	const struct take *t = arg;
	const struct lib_take *q = &t->q[i];

	lib_bind_int64(st, 1, t->shelf);
	lib_bind_int64(st, 2, q->seq);
	lib_bind_int64(st, 3, q->lo1);
	lib_bind_int64(st, 4, q->hi1);
	lib_bind_int64(st, 5, q->lo2);
	lib_bind_int64(st, 6, q->hi2);
}

static int take_row(void *arg, int i, int64_t id)
{
	struct take *t = arg;

	t->q[i].id = id;
	t->q[i].got = true;
	return 0;
}

/*
 * The pick (the FREE known-zero book nearest to the cursor, else from the
 * IG's other end: a seek in the free-book index each) and the take (it must
 * still be FREE, known zero and unowned) in one statement.
 */
#define TAKE(DESC)                                                                         \
	"UPDATE books SET state = BOOK_INUSE, shelf = ?1, seq = ?2 WHERE id = coalesce("   \
	"(SELECT id FROM books WHERE state = BOOK_FREE AND zeroed = 1 AND id BETWEEN ?3"   \
	" AND ?4 ORDER BY id" DESC " LIMIT 1), (SELECT id FROM books WHERE state ="        \
	" BOOK_FREE AND zeroed = 1 AND id BETWEEN ?5 AND ?6 ORDER BY id" DESC " LIMIT 1))" \
	" AND state = BOOK_FREE AND zeroed = 1 AND shelf IS NULL RETURNING id"

int lib_store_books_take(struct lib_store *s, struct lib_take *q, int64_t n, int64_t shelf,
			 bool desc, struct lib_err *e)
{
	lib_st *st = desc ? lib_stmt(s, TAKE(" DESC")) : lib_stmt(s, TAKE(""));
	struct take t = { q, shelf };

	if (!n)
		return 0;
	for (int64_t i = 0; i < n; i++)
		q[i].got = false;
	if (lib_stmt_query_many(s, st, n, bind_take, take_row, &t) < 0)
		return lib_sql_fail(s, e);
	for (int64_t i = 0; i < n; i++)
		if (!q[i].got) {
			lib_store_forget(s);
			return lib_fail(
				e, EIO,
				"catalogue inconsistent: IG %lld has fewer free books known zero than its count says; nothing was allocated (run librarian check)",
				(long long)(q[i].lo1 >> 32));
		}
	return 0;
}

int lib_store_igs_each(struct lib_store *s, lib_ig_fn *fn, void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT ig, free, zero FROM igs");
	int rc = LIB_DONE, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	while (r == 0 && (rc = lib_step(st)) == LIB_ROW)
		r = fn(arg, lib_col_int64(st, 0), lib_col_int64(st, 1), lib_col_int64(st, 2));
	lib_reset(st);
	if (r == 0 && rc != LIB_DONE)
		return lib_sql_fail(s, e);
	return r;
}

int lib_store_ig_free_add(struct lib_store *s, uint32_t ig, int64_t dfree, int64_t dzero,
			  struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE igs SET free = free + ?2, zero = zero + ?3"
				 " WHERE ig = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, ig);
	lib_bind_int64(st, 2, dfree);
	lib_bind_int64(st, 3, dzero);
	lib_store_ig_known_add(s, ig, dfree, dzero);
	return lib_stmt_run_later(s, st, e);
}

/* igs.free and igs.zero counted again from the books (IG changes, online). */
int lib_store_ig_recount(struct lib_store *s, uint32_t ig, struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s,
		"UPDATE igs SET free = (SELECT count(*) FROM books WHERE state = BOOK_FREE"
		" AND id BETWEEN ?2 AND ?3), zero = (SELECT count(*) FROM books"
		" WHERE state = BOOK_FREE AND zeroed = 1 AND id BETWEEN ?2 AND ?3) WHERE ig = ?1");

	lib_store_forget(s);
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, ig);
	lib_bind_int64(st, 2, lib_ig_first(ig));
	lib_bind_int64(st, 3, lib_ig_last(ig));
	return lib_stmt_run(s, st, e);
}

int64_t lib_store_ig_count(struct lib_store *s, uint32_t ig, enum lib_book_state state,
			   struct lib_err *e)
{
	/* one statement per state: each uses the state's partial index */
	static const char *const sql[] = {
		[BOOK_FREE] = "SELECT count(*) FROM books WHERE state = BOOK_FREE"
			      " AND id BETWEEN ?1 AND ?2",
		[BOOK_ZOMBIE] = "SELECT count(*) FROM books WHERE state = BOOK_ZOMBIE"
				" AND id BETWEEN ?1 AND ?2",
	};
	lib_st *st;
	int64_t n = 0;
	int rc;

	if ((size_t)state >= sizeof(sql) / sizeof(sql[0]) || !sql[state])
		return lib_fail(e, EINVAL, "books of IG %u counted in an unindexed state %d", ig,
				state);
	st = lib_stmt(s, sql[state]);
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	rc = lib_step(st);
	if (rc == LIB_ROW)
		n = lib_col_int64(st, 0);
	lib_reset(st);
	return rc == LIB_ROW ? n : lib_sql_fail(s, e);
}

static int keep_ig(void *arg, int64_t ig, int64_t free, int64_t zero)
{
	struct lib_store *s = arg;
	int k = lib_config_find_ig(s->cfg, ig);

	if (k >= 0) {
		s->ig_free[k] = free;
		s->ig_zero[k] = zero;
		s->ig_row[k] = true;
	}
	return 0;
}

int lib_store_igs_known(struct lib_store *s, lib_ig_fn *fn, void *arg, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	int r = 0;

	if (!s->ig_free) {
		s->ig_free = calloc(c->nigs + 1, sizeof(*s->ig_free));
		s->ig_zero = calloc(c->nigs + 1, sizeof(*s->ig_zero));
		s->ig_row = calloc(c->nigs + 1, sizeof(*s->ig_row));
		if (!s->ig_free || !s->ig_zero || !s->ig_row)
			return lib_fail(e, ENOMEM, "out of memory");
	}
	if (!s->igs_known) {
		for (int k = 0; k < c->nigs; k++)
			s->ig_row[k] = false;
		r = lib_store_igs_each(s, keep_ig, s, e);
		if (r < 0)
			return r;
		s->igs_known = true;
	}
	for (int k = 0; k < c->nigs && r == 0; k++)
		if (s->ig_row[k])
			r = fn(arg, c->igs[k].ig, s->ig_free[k], s->ig_zero[k]);
	return r;
}
