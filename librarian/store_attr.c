// SPDX-License-Identifier: GPL-2.0
/* The attrs table: a shelf's attributes, the system's lfs.* keys and the user's. */
#include <errno.h>
#include <stdio.h>

#include <string.h>

#include "store.h"

int lib_store_attr_get(struct lib_store *s, int64_t shelf, const char *key, char *buf, size_t len,
		       struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT value FROM attrs WHERE shelf = ?1 AND key = ?2");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, key);
	rc = lib_step(st);
	if (rc == LIB_ROW)
		snprintf(buf, len, "%s", lib_col_text(st, 0));
	lib_reset(st);
	if (rc == LIB_ROW)
		return 0;
	return rc == LIB_DONE ? -ENODATA : lib_sql_fail(s, e);
}

int lib_store_attr_get3(struct lib_store *s, int64_t shelf, const char *const key[3], char *val[3],
			size_t len, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT key, value FROM attrs WHERE shelf = ?1"
				 " AND key IN (?2, ?3, ?4)");
	int rc, found = 0;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	for (int k = 0; k < 3; k++) {
		lib_bind_text(st, k + 2, key[k]);
		val[k][0] = 0;
	}
	while ((rc = lib_step(st)) == LIB_ROW)
		for (int k = 0; k < 3; k++)
			if (!strcmp(lib_col_text(st, 0) ?: "", key[k])) {
				snprintf(val[k], len, "%s", lib_col_text(st, 1) ?: "");
				found |= 1 << k;
			}
	lib_reset(st);
	return rc == LIB_DONE ? found : lib_sql_fail(s, e);
}

int lib_store_attr_put(struct lib_store *s, int64_t shelf, const char *key, const char *value,
		       struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "INSERT INTO attrs(shelf, key, value) VALUES (?1, ?2, ?3)"
				 " ON CONFLICT(shelf, key) DO UPDATE SET value = excluded.value");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, key);
	lib_bind_text(st, 3, value);
	return lib_stmt_run_later(s, st, e);
}

int lib_store_attr_delete(struct lib_store *s, int64_t shelf, const char *key, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "DELETE FROM attrs WHERE shelf = ?1 AND key = ?2");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, key);
	r = lib_stmt_run(s, st, e);
	if (r < 0)
		return r;
	return lib_changes(s) ? 0 : -ENODATA;
}

int lib_store_attr_user_count(struct lib_store *s, int64_t shelf, const char *key, int *n,
			      bool *has, struct lib_err *e)
{
	lib_st *st =
		lib_stmt(s, "SELECT count(*), sum(CASE WHEN key = ?2 THEN 1 ELSE 0 END) FROM attrs"
			    " WHERE shelf = ?1 AND key NOT LIKE 'lfs.%'");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	lib_bind_text(st, 2, key);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		*n = lib_col_int64(st, 0);
		*has = lib_col_int64(st, 1) != 0;
	}
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_attr_each(struct lib_store *s, int64_t shelf, lib_attr_fn *fn, void *arg,
			struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT key, value FROM attrs WHERE shelf = ?1 ORDER BY key");
	int rc = LIB_DONE, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, shelf);
	while (r == 0 && (rc = lib_step(st)) == LIB_ROW)
		r = fn(arg, lib_col_text(st, 0), lib_col_text(st, 1));
	lib_reset(st);
	if (r == 0 && rc != LIB_DONE)
		return lib_sql_fail(s, e);
	return r;
}
