// SPDX-License-Identifier: GPL-2.0
/*
 * What the writing librarian knows of its catalogue without asking
 * (docs/HA.md, "Round trips"): the next shelf id and each IG's free and
 * known-zero counts. It is the only writer (the .lock file of SQLite, the
 * epoch of the leader row), so what it wrote is what is there; every write
 * of those counts goes through lib_store_ig_free_add(), which keeps them.
 * Anything that undoes or bypasses it forgets them (a rollback, an undone
 * request, a recount, the geometry, a lead taken), and the next use reads
 * them again. A count that is wrong all the same (a damaged catalogue)
 * fails the request that used it whole: its takes change fewer rows than
 * planned (store_books.c), and the request is undone, which forgets.
 */
#include <errno.h>
#include <stdlib.h>

#include "store_known.h"

void lib_store_ig_known_add(struct lib_store *s, uint32_t ig, int64_t dfree, int64_t dzero)
{
	int k = s->igs_known ? lib_config_find_ig(s->cfg, ig) : -1;

	if (k >= 0) {
		s->ig_free[k] += dfree;
		s->ig_zero[k] += dzero;
	}
}

/*
 * SQLite gives a row without an id max(id) + 1, and so does this. In
 * PostgreSQL the identity's sequence gives it to rows inserted without one
 * (by hand, by a tool): the librarian takes a block of LIB_SHELF_IDS from
 * the sequence at a time (one statement; a block is not given back on an
 * undo, which leaves a gap, as the sequence would).
 */
#define LIB_SHELF_IDS 64

static int next_shelf_read(struct lib_store *s, struct lib_err *e)
{
	lib_st *st = s->pg ? lib_stmt(s,
				      "SELECT setval(pg_get_serial_sequence('shelves', 'id'),"
				      " (SELECT greatest(coalesce(max(id), 0), (SELECT last_value"
				      " FROM shelves_id_seq)) FROM shelves) + ?1) - ?1 + 1") :
			     lib_stmt(s, "SELECT coalesce(max(id), 0) + 1 FROM shelves");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	if (s->pg)
		lib_bind_int64(st, 1, LIB_SHELF_IDS);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		s->next_shelf = lib_col_int64(st, 0);
		s->last_shelf = s->pg ? s->next_shelf + LIB_SHELF_IDS - 1 : INT64_MAX;
	}
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_next_shelf(struct lib_store *s, int64_t *id, struct lib_err *e)
{
	int r;

	if (!s->next_shelf || s->next_shelf > s->last_shelf) {
		r = next_shelf_read(s, e);
		if (r < 0)
			return r;
	}
	*id = s->next_shelf++;
	return 0;
}

void lib_store_known_free(struct lib_store *s)
{
	free(s->ig_free);
	free(s->ig_zero);
	free(s->ig_row);
}
