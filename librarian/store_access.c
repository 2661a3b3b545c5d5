// SPDX-License-Identifier: GPL-2.0
/*
 * The access table: what a shelf's access list (lfs.access) grants, one row
 * per grantee (a node's name, or "@" and a tenant's), with its level (enum
 * lib_access). Indexed by grantee too, for listings of granted shelves.
 */
#include "store.h"

int lib_store_access_level(struct lib_store *s, int64_t shelf, const char *who1, const char *who2,
			   int *level, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT ifnull(max(level), 0) FROM access"
				       " WHERE shelf = ?1 AND who IN (?2, ?3)");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, who1 ? who1 : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, who2 ? who2 : "", -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*level = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_access_put(struct lib_store *s, int64_t shelf, const char *who, int level,
			 struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "INSERT OR REPLACE INTO access(shelf, who, level)"
				       " VALUES (?1, ?2, ?3)");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, who, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, level);
	return lib_stmt_run(s, st, e);
}

int lib_store_access_clear(struct lib_store *s, int64_t shelf, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "DELETE FROM access WHERE shelf = ?1");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : sqlite3_changes(s->db);
}

int lib_store_access_each(struct lib_store *s, int64_t shelf, lib_grant_fn *fn, void *arg,
			  struct lib_err *e)
{
	sqlite3_stmt *st =
		lib_stmt(s, "SELECT who, level FROM access WHERE shelf = ?1 ORDER BY who");
	int rc = SQLITE_DONE, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = fn(arg, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1));
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}
