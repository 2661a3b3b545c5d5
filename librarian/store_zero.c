// SPDX-License-Identifier: GPL-2.0
/*
 * Zeroing: ZOMBIE books wait for their node to zero them (zombie.list,
 * zombie.zeroed); FREE books whose content is unknown (books.zeroed = 0) are
 * sent to be zeroed (free.scrub) or found zero by reading (free.unknown,
 * free.checked). See docs/LIBRARIAN.md, "Known-zero books".
 */
#include "store.h"

int lib_store_zombies(struct lib_store *s, uint32_t ig, int64_t limit, lib_id_fn *fn, void *arg,
		      struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT id FROM books WHERE state = BOOK_ZOMBIE"
				 " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	lib_bind_int64(st, 3, limit);
	return lib_stmt_ids(s, st, fn, arg, e);
}

struct zeroed {
	const int64_t *ids;
	const bool *offline;
};

static void bind_zeroed(lib_st *st, int i, void *arg)
{
	const struct zeroed *z = arg;

	lib_bind_int64(st, 1, z->ids[i]);
	lib_bind_int64(st, 2, z->offline[i] ? BOOK_OFFLINE : BOOK_FREE);
}

/*
 * Known zero from now on, while it stays FREE or is allocated. A book that
 * goes OFFLINE does not keep the flag: going back online clears it anyway.
 */
int lib_store_books_zeroed(struct lib_store *s, const int64_t *ids, const bool *offline, int n,
			   int *changed, struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s,
		"UPDATE books SET state = ?2, zeroed = CASE WHEN ?2 = BOOK_FREE THEN 1 ELSE 0 END"
		" WHERE id = ?1 AND state = BOOK_ZOMBIE");
	struct zeroed z = { ids, offline };

	return lib_stmt_run_many(s, st, n, bind_zeroed, &z, changed, e);
}

int lib_store_book_zeroed(struct lib_store *s, int64_t id, bool offline, struct lib_err *e)
{
	int changed = 0, r = lib_store_books_zeroed(s, &id, &offline, 1, &changed, e);

	return r < 0 ? r : changed > 0;
}

int lib_store_unknown(struct lib_store *s, uint32_t ig, int64_t from, int64_t limit, lib_id_fn *fn,
		      void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT id FROM books WHERE state = BOOK_FREE AND zeroed = 0"
				 " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, from > lib_ig_first(ig) ? from : lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	lib_bind_int64(st, 3, limit);
	return lib_stmt_ids(s, st, fn, arg, e);
}

int lib_store_book_checked(struct lib_store *s, int64_t id, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE books SET zeroed = 1 WHERE id = ?1"
				 " AND state = BOOK_FREE AND zeroed = 0");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_changes(s) > 0;
}

/* They leave FREE, so the IG's free count drops by as many. */
int64_t lib_store_scrub(struct lib_store *s, uint32_t ig, int64_t limit, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE books SET state = BOOK_ZOMBIE WHERE id IN"
				 " (SELECT id FROM books WHERE state = BOOK_FREE AND zeroed = 0"
				 " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3)");
	int64_t moved;
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	lib_bind_int64(st, 3, limit);
	r = lib_stmt_run(s, st, e);
	if (r < 0)
		return r;
	moved = lib_changes(s);
	if (moved && (r = lib_store_ig_free_add(s, ig, -moved, 0, e)) < 0)
		return r;
	return moved;
}

/*
 * IG's memory is not what the catalogue knew (a device replaced, volatile
 * memory that lost its contents; attach --init labelled it anew): if
 * forget, its FREE books are no longer known zero. The books it changed; *inuse, the IG's
 * books that shelves hold (their bytes were on the memory that is gone).
 */
int64_t lib_store_ig_forget_zero(struct lib_store *s, uint32_t ig, bool forget, int64_t *inuse,
				 struct lib_err *e)
{
	lib_st *st = lib_stmt(s,
			      "UPDATE books SET zeroed = 0 WHERE state = BOOK_FREE AND zeroed = 1"
			      " AND id BETWEEN ?1 AND ?2");
	lib_st *used = lib_stmt(s, "SELECT count(*) FROM books WHERE state = BOOK_INUSE"
				   " AND id BETWEEN ?1 AND ?2");
	int64_t n = 0;
	int r, rc;

	if (!st || !used)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	if (forget && (r = lib_stmt_run(s, st, e)) < 0)
		return r;
	if (forget)
		n = lib_changes(s);
	if (n && (r = lib_store_ig_free_add(s, ig, 0, -n, e)) < 0)
		return r;
	lib_bind_int64(used, 1, lib_ig_first(ig));
	lib_bind_int64(used, 2, lib_ig_last(ig));
	rc = lib_step(used);
	*inuse = rc == LIB_ROW ? lib_col_int64(used, 0) : 0;
	lib_reset(used);
	return rc == LIB_ROW ? n : lib_sql_fail(s, e);
}

int lib_store_has_unknown(struct lib_store *s, uint32_t ig, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT EXISTS (SELECT 1 FROM books WHERE state = BOOK_FREE"
				 " AND zeroed = 0 AND id BETWEEN ?1 AND ?2)");
	int rc, has = 0;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	rc = lib_step(st);
	if (rc == LIB_ROW)
		has = lib_col_int64(st, 0) != 0;
	lib_reset(st);
	return rc == LIB_ROW ? has : lib_sql_fail(s, e);
}
