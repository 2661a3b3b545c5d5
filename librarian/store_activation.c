// SPDX-License-Identifier: GPL-2.0
/* The activations table: which node has which shelf active, in which mode. */
#include <stdio.h>

#include "store.h"

/* Hand the rows of st (node, mode, since[, shelf, uuid]) to fn. */
static int activation_rows(struct lib_store *s, sqlite3_stmt *st, lib_activation_fn *fn, void *arg,
			   struct lib_err *e)
{
	int rc = SQLITE_DONE, r = 0;

	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lib_activation a = {
			.node = (const char *)sqlite3_column_text(st, 0),
			.mode = (const char *)sqlite3_column_text(st, 1),
			.since = sqlite3_column_int64(st, 2),
			.shelf = sqlite3_column_count(st) > 3 ?
					 (const char *)sqlite3_column_text(st, 3) :
					 NULL,
			.uuid = sqlite3_column_count(st) > 4 ?
					(const char *)sqlite3_column_text(st, 4) :
					NULL,
		};

		r = fn(arg, &a);
	}
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}

int lib_store_activations_of_shelf(struct lib_store *s, int64_t shelf, lib_activation_fn *fn,
				   void *arg, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT node, mode, since FROM activations WHERE shelf = ?1"
				       " ORDER BY node");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	return activation_rows(s, st, fn, arg, e);
}

int lib_store_activations_of_node(struct lib_store *s, const char *node, lib_activation_fn *fn,
				  void *arg, struct lib_err *e)
{
	sqlite3_stmt *st =
		lib_stmt(s, "SELECT a.node, a.mode, a.since, s.name, s.uuid FROM activations a"
			    " JOIN shelves s ON s.id = a.shelf WHERE a.node = ?1"
			    " ORDER BY s.name");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	return activation_rows(s, st, fn, arg, e);
}

int lib_store_activation_others(struct lib_store *s, int64_t shelf, const char *node, char *holder,
				size_t hlen, char *mode, size_t mlen, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT node, mode FROM activations WHERE shelf = ?1"
				       " AND node <> ?2 ORDER BY node");
	int n = 0, rc;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, node ? node : "", -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!n++) {
			snprintf(holder, hlen, "%s", (const char *)sqlite3_column_text(st, 0));
			snprintf(mode, mlen, "%s", (const char *)sqlite3_column_text(st, 1));
		}
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? n : lib_sql_fail(s, e);
}

int lib_store_activation_put(struct lib_store *s, int64_t shelf, const char *node, const char *mode,
			     int64_t since, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s,
				    "INSERT OR REPLACE INTO activations(shelf, node, mode, since)"
				    " VALUES (?1, ?2, ?3, ?4)");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, mode, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, since);
	return lib_stmt_run(s, st, e);
}

int lib_store_activation_delete(struct lib_store *s, int64_t shelf, const char *node,
				struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "DELETE FROM activations WHERE shelf = ?1 AND node = ?2");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, node, -1, SQLITE_TRANSIENT);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : sqlite3_changes(s->db) > 0;
}

int lib_store_activations_end_node(struct lib_store *s, const char *node, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "DELETE FROM activations WHERE node = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	return lib_stmt_run(s, st, e);
}
