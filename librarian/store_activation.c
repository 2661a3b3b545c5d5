// SPDX-License-Identifier: GPL-2.0
/* The activations table: which node has which shelf active, in which mode. */
#include <stdio.h>

#include "store.h"

/* Hand the rows of st (node, mode, since[, shelf, uuid]) to fn. */
static int activation_rows(struct lib_store *s, lib_st *st, lib_activation_fn *fn, void *arg,
			   struct lib_err *e)
{
	int rc = LIB_DONE, r = 0;

	while (r == 0 && (rc = lib_step(st)) == LIB_ROW) {
		struct lib_activation a = {
			.node = lib_col_text(st, 0),
			.mode = lib_col_text(st, 1),
			.since = lib_col_int64(st, 2),
			.shelf = lib_col_count(st) > 3 ? lib_col_text(st, 3) : NULL,
			.uuid = lib_col_count(st) > 4 ? lib_col_text(st, 4) : NULL,
		};

		r = fn(arg, &a);
	}
	lib_reset(st);
	if (r == 0 && rc != LIB_DONE)
		return lib_sql_fail(s, e);
	return r;
}

int lib_store_activations_of_shelf(struct lib_store *s, int64_t shelf, lib_activation_fn *fn,
				   void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT node, mode, since FROM activations WHERE shelf = ?1"
				 " ORDER BY node");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	return activation_rows(s, st, fn, arg, e);
}

int lib_store_activations_of_node(struct lib_store *s, const char *node, lib_activation_fn *fn,
				  void *arg, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT a.node, a.mode, a.since, s.name, s.uuid FROM activations a"
				 " JOIN shelves s ON s.id = a.shelf WHERE a.node = ?1"
				 " ORDER BY s.name");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, node);
	return activation_rows(s, st, fn, arg, e);
}

int lib_store_activation_others(struct lib_store *s, int64_t shelf, const char *node, char *holder,
				size_t hlen, char *mode, size_t mlen, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT node, mode FROM activations WHERE shelf = ?1"
				 " AND node <> ?2 ORDER BY node");
	int n = 0, rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, node ? node : "");
	while ((rc = lib_step(st)) == LIB_ROW) {
		if (!n++) {
			snprintf(holder, hlen, "%s", lib_col_text(st, 0));
			snprintf(mode, mlen, "%s", lib_col_text(st, 1));
		}
	}
	lib_reset(st);
	return rc == LIB_DONE ? n : lib_sql_fail(s, e);
}

int lib_store_activation_put(struct lib_store *s, int64_t shelf, const char *node, const char *mode,
			     int64_t since, struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s, "INSERT INTO activations(shelf, node, mode, since) VALUES (?1, ?2, ?3, ?4)"
		   " ON CONFLICT(shelf, node) DO UPDATE SET mode = excluded.mode,"
		   " since = excluded.since");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, node);
	lib_bind_text(st, 3, mode);
	lib_bind_int64(st, 4, since);
	return lib_stmt_run(s, st, e);
}

int lib_store_activation_delete(struct lib_store *s, int64_t shelf, const char *node,
				struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "DELETE FROM activations WHERE shelf = ?1 AND node = ?2");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, node);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_changes(s) > 0;
}

int lib_store_activations_end_node(struct lib_store *s, const char *node, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "DELETE FROM activations WHERE node = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, node);
	return lib_stmt_run(s, st, e);
}
