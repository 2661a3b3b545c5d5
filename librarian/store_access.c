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
	lib_st *st = lib_stmt(s, "SELECT coalesce(max(level), 0) FROM access"
				 " WHERE shelf = ?1 AND who IN (?2, ?3)");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, who1 ? who1 : "");
	lib_bind_text(st, 3, who2 ? who2 : "");
	rc = lib_step(st);
	*level = rc == LIB_ROW ? lib_col_int64(st, 0) : 0;
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_access_put(struct lib_store *s, int64_t shelf, const char *who, int level,
			 struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "INSERT INTO access(shelf, who, level) VALUES (?1, ?2, ?3)"
				 " ON CONFLICT(shelf, who) DO UPDATE SET level = excluded.level");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, who);
	lib_bind_int64(st, 3, level);
	return lib_stmt_run(s, st, e);
}

int lib_store_access_clear(struct lib_store *s, int64_t shelf, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "DELETE FROM access WHERE shelf = ?1");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_changes(s);
}

int lib_store_access_each(struct lib_store *s, int64_t shelf, lib_grant_fn *fn, void *arg,
			  struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT who, level FROM access WHERE shelf = ?1 ORDER BY who");
	int rc = LIB_DONE, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	while (r == 0 && (rc = lib_step(st)) == LIB_ROW)
		r = fn(arg, lib_col_text(st, 0), lib_col_int64(st, 1));
	lib_reset(st);
	if (r == 0 && rc != LIB_DONE)
		return lib_sql_fail(s, e);
	return r;
}
