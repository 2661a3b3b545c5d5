// SPDX-License-Identifier: GPL-2.0
/* The attrs table: a shelf's attributes, the system's lfs.* keys and the user's. */
#include <errno.h>
#include <stdio.h>

#include "store.h"

int lib_store_attr_get(struct lib_store *s, int64_t shelf, const char *key, char *buf, size_t len,
		       struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT value FROM attrs WHERE shelf = ?1 AND key = ?2");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENODATA : lib_sql_fail(s, e);
}

int lib_store_attr_put(struct lib_store *s, int64_t shelf, const char *key, const char *value,
		       struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "INSERT OR REPLACE INTO attrs(shelf, key, value)"
				       " VALUES (?1, ?2, ?3)");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
	return lib_stmt_run(s, st, e);
}

int lib_store_attr_delete(struct lib_store *s, int64_t shelf, const char *key, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "DELETE FROM attrs WHERE shelf = ?1 AND key = ?2");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	r = lib_stmt_run(s, st, e);
	if (r < 0)
		return r;
	return sqlite3_changes(s->db) ? 0 : -ENODATA;
}

int lib_store_attr_user_count(struct lib_store *s, int64_t shelf, const char *key, int *n,
			      bool *has, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT count(*), sum(key = ?2) FROM attrs"
				       " WHERE shelf = ?1 AND key NOT LIKE 'lfs.%'");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*n = sqlite3_column_int(st, 0);
		*has = sqlite3_column_int(st, 1) != 0;
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_attr_each(struct lib_store *s, int64_t shelf, lib_attr_fn *fn, void *arg,
			struct lib_err *e)
{
	sqlite3_stmt *st =
		lib_stmt(s, "SELECT key, value FROM attrs WHERE shelf = ?1 ORDER BY key");
	int rc = SQLITE_DONE, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, shelf);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = fn(arg, (const char *)sqlite3_column_text(st, 0),
		       (const char *)sqlite3_column_text(st, 1));
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}
