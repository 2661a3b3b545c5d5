// SPDX-License-Identifier: GPL-2.0
/* The shelves table: names, UUIDs, sizes and generations of shelves. */
#include <errno.h>
#include <stdio.h>

#include "store.h"

static int shelf_row(struct lib_store *s, sqlite3_stmt *st, struct lib_shelf *sh, struct lib_err *e)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		sh->id = sqlite3_column_int64(st, 0);
		sh->books = sqlite3_column_int64(st, 1);
		sh->gen = sqlite3_column_int64(st, 2);
		snprintf(sh->name, sizeof(sh->name), "%s",
			 (const char *)sqlite3_column_text(st, 3));
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : lib_sql_fail(s, e);
}

int lib_store_shelf_find(struct lib_store *s, const char *name, struct lib_shelf *sh,
			 struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT id, books, gen, name FROM shelves WHERE name = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	return shelf_row(s, st, sh, e);
}

int lib_store_shelf_find_uuid(struct lib_store *s, const char *uuid, struct lib_shelf *sh,
			      struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT id, books, gen, name FROM shelves WHERE uuid = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	return shelf_row(s, st, sh, e);
}

int lib_store_shelf_count(struct lib_store *s, const char *prefix, int64_t *n, struct lib_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (prefix) {
		st = lib_stmt(
			s, "SELECT count(*) FROM shelves WHERE substr(name, 1, length(?1)) = ?1");
		if (st)
			sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	} else {
		st = lib_stmt(s, "SELECT count(*) FROM shelves");
	}
	if (!st)
		return lib_sql_fail(s, e);
	rc = sqlite3_step(st);
	*n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_shelf_insert(struct lib_store *s, const char *name, const char *uuid,
			   const char *owner, int64_t now, int64_t *id, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "INSERT INTO shelves(name, uuid, owner, ctime, mtime)"
				       " VALUES (?1, ?2, ?3, ?4, ?4)");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	r = lib_stmt_run(s, st, e);
	if (r == 0)
		*id = sqlite3_last_insert_rowid(s->db);
	return r;
}

int lib_store_shelf_set_books(struct lib_store *s, int64_t id, int64_t books, int64_t now,
			      struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "UPDATE shelves SET books = ?2, mtime = ?3, gen = gen + 1"
				       " WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, books);
	sqlite3_bind_int64(st, 3, now);
	return lib_stmt_run(s, st, e);
}

int lib_store_shelf_rename(struct lib_store *s, int64_t id, const char *name, int64_t now,
			   struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "UPDATE shelves SET name = ?2, mtime = ?3, gen = gen + 1"
				       " WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	return lib_stmt_run(s, st, e);
}

int lib_store_shelf_delete(struct lib_store *s, int64_t id, struct lib_err *e)
{
	static const char *const sql[] = {
		"DELETE FROM attrs WHERE shelf = ?1",
		"DELETE FROM activations WHERE shelf = ?1",
		"DELETE FROM shelves WHERE id = ?1",
	};

	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		sqlite3_stmt *st = lib_stmt(s, sql[i]);
		int r;

		if (st)
			sqlite3_bind_int64(st, 1, id);
		r = lib_stmt_run(s, st, e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Hand the rows of st (the columns of lib_store_shelf_show) to fn. */
static int shelf_rows(struct lib_store *s, sqlite3_stmt *st, lib_shelf_fn *fn, void *arg,
		      struct lib_err *e)
{
	int rc = SQLITE_DONE, r = 0;

	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lib_shelf_row row = {
			.name = (const char *)sqlite3_column_text(st, 0),
			.uuid = (const char *)sqlite3_column_text(st, 1),
			.owner = (const char *)sqlite3_column_text(st, 2),
			.ctime = sqlite3_column_int64(st, 3),
			.mtime = sqlite3_column_int64(st, 4),
			.books = sqlite3_column_int64(st, 5),
			.gen = sqlite3_column_int64(st, 6),
			.policy = (const char *)sqlite3_column_text(st, 7),
			.activations = sqlite3_column_count(st) > 8 ?
					       (const char *)sqlite3_column_text(st, 8) :
					       NULL,
		};

		r = fn(arg, &row);
	}
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}

int lib_store_shelf_show(struct lib_store *s, int64_t id, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e)
{
	sqlite3_stmt *st =
		lib_stmt(s, "SELECT name, uuid, owner, ctime, mtime, books, gen,"
			    " (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy')"
			    " FROM shelves s WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, id);
	return shelf_rows(s, st, fn, arg, e);
}

int lib_store_shelf_list(struct lib_store *s, const char *prefix, int64_t offset, int64_t limit,
			 lib_shelf_fn *fn, void *arg, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(
		s, "SELECT s.name, s.uuid, s.owner, s.ctime, s.mtime, s.books, s.gen,"
		   " (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy'),"
		   " (SELECT group_concat(node || ':' || mode) FROM activations WHERE shelf = s.id)"
		   " FROM shelves s WHERE substr(s.name, 1, length(?1)) = ?1 ORDER BY s.name"
		   " LIMIT ?2 OFFSET ?3");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	return shelf_rows(s, st, fn, arg, e);
}
