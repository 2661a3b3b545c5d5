// SPDX-License-Identifier: GPL-2.0
/*
 * The shelves table: names, UUIDs, owners and tenants, sizes and generations
 * of shelves. A listing by name prefix is a range of the name index (a
 * tenant's: of the tenant's index, merged with the shelves granted to the
 * caller), never a scan of every shelf.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
		snprintf(sh->owner, sizeof(sh->owner), "%s",
			 (const char *)sqlite3_column_text(st, 4));
		snprintf(sh->tenant, sizeof(sh->tenant), "%s",
			 (const char *)sqlite3_column_text(st, 5));
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : lib_sql_fail(s, e);
}

int lib_store_shelf_find(struct lib_store *s, const char *name, struct lib_shelf *sh,
			 struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT id, books, gen, name, owner, tenant FROM shelves"
				       " WHERE name = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	return shelf_row(s, st, sh, e);
}

int lib_store_shelf_find_uuid(struct lib_store *s, const char *uuid, struct lib_shelf *sh,
			      struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT id, books, gen, name, owner, tenant FROM shelves"
				       " WHERE uuid = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	return shelf_row(s, st, sh, e);
}

/*
 * The names starting with prefix are [prefix, prefix with its last byte
 * raised). Names are printable ASCII (lookups refuse anything else), so the
 * empty prefix is [ "", "\x7f" ); a prefix with another byte matches nothing.
 */
static bool name_range(const char *prefix, char *hi, size_t len)
{
	size_t n = prefix ? strlen(prefix) : 0;

	for (size_t i = 0; i < n; i++)
		if (prefix[i] < 0x20 || prefix[i] > 0x7e)
			return false;
	if (n + 1 > len)
		return false;
	if (!n) {
		strcpy(hi, "\x7f");
		return true;
	}
	memcpy(hi, prefix, n + 1);
	hi[n - 1]++;
	return true;
}

/* ?1 tenant, ?2 node, ?3 tag, ?4 low, ?5 high */
static void bind_filter(sqlite3_stmt *st, const struct lib_shelf_filter *f, const char *lo,
			const char *hi)
{
	if (f) {
		sqlite3_bind_text(st, 1, f->tenant, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, f->node, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, f->tag ? f->tag : "", -1, SQLITE_STATIC);
	}
	sqlite3_bind_text(st, 4, lo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, hi, -1, SQLITE_STATIC);
}

int lib_store_shelf_count(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			  int64_t *n, struct lib_err *e)
{
	sqlite3_stmt *st;
	char hi[LIB_OLD_NAME_MAX + 2];
	int rc;

	*n = 0;
	if (!name_range(prefix, hi, sizeof(hi)))
		return 0;
	if (!f && !prefix)
		st = lib_stmt(s, "SELECT count(*) FROM shelves");
	else if (f)
		st = lib_stmt(s, "SELECT (SELECT count(*) FROM shelves WHERE tenant = ?1"
				 " AND name >= ?4 AND name < ?5) + (SELECT count(*) FROM shelves"
				 " WHERE tenant <> ?1 AND name >= ?4 AND name < ?5 AND id IN"
				 " (SELECT shelf FROM access WHERE who IN (?2, ?3)))");
	else
		st = lib_stmt(s, "SELECT count(*) FROM shelves WHERE name >= ?4 AND name < ?5");
	if (!st)
		return lib_sql_fail(s, e);
	if (f || prefix)
		bind_filter(st, f, prefix ? prefix : "", hi);
	rc = sqlite3_step(st);
	*n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_shelf_insert(struct lib_store *s, const char *name, const char *uuid,
			   const char *owner, const char *tenant, int64_t now, int64_t *id,
			   struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s,
				    "INSERT INTO shelves(name, uuid, owner, tenant, ctime, mtime)"
				    " VALUES (?1, ?2, ?3, ?4, ?5, ?5)");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, now);
	r = lib_stmt_run(s, st, e);
	if (r == 0)
		*id = sqlite3_last_insert_rowid(s->db);
	return r;
}

/* Covering indexes (owner, books) and (tenant, name, books): no table lookups. */
int lib_store_usage(struct lib_store *s, bool tenant, const char *key, int64_t *shelves,
		    int64_t *books, struct lib_err *e)
{
	sqlite3_stmt *st = tenant ? lib_stmt(s, "SELECT count(*), total(books) FROM shelves"
						" WHERE tenant = ?1") :
				    lib_stmt(s, "SELECT count(*), total(books) FROM shelves"
						" WHERE owner = ?1");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*shelves = sqlite3_column_int64(st, 0);
		*books = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lib_sql_fail(s, e);
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
		"DELETE FROM access WHERE shelf = ?1",
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
			.tenant = (const char *)sqlite3_column_text(st, 8),
			.access = (const char *)sqlite3_column_text(st, 9),
			.size = (const char *)sqlite3_column_text(st, 10),
			.activations = sqlite3_column_count(st) > 11 ?
					       (const char *)sqlite3_column_text(st, 11) :
					       NULL,
		};

		r = fn(arg, &row);
	}
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}

#define SHELF_COLUMNS                                                                     \
	"s.name, s.uuid, s.owner, s.ctime, s.mtime, s.books, s.gen,"                      \
	" (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy'), s.tenant," \
	" (SELECT group_concat(who || ':' || level) FROM (SELECT who, level FROM access"  \
	" WHERE shelf = s.id ORDER BY who)),"                                             \
	" (SELECT value FROM attrs WHERE shelf = s.id AND key = '" LIB_ATTR_SIZE "')"

int lib_store_shelf_show(struct lib_store *s, int64_t id, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "SELECT " SHELF_COLUMNS " FROM shelves s WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, id);
	return shelf_rows(s, st, fn, arg, e);
}

#define LIST_COLUMNS                                                                 \
	SHELF_COLUMNS ", (SELECT group_concat(node || ':' || mode) FROM activations" \
		      " WHERE shelf = s.id)"

int lib_store_shelf_list(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			 int64_t offset, int64_t limit, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e)
{
	char hi[LIB_OLD_NAME_MAX + 2];
	sqlite3_stmt *st;

	if (!name_range(prefix, hi, sizeof(hi)))
		return 0;
	/* a tenant's shelves and those granted from other tenants, merged by name */
	if (f)
		st = lib_stmt(s, "SELECT " LIST_COLUMNS " FROM shelves s WHERE s.tenant = ?1"
				 " AND s.name >= ?4 AND s.name < ?5 UNION ALL SELECT " LIST_COLUMNS
				 " FROM shelves s WHERE s.tenant <> ?1 AND s.name >= ?4"
				 " AND s.name < ?5 AND s.id IN (SELECT shelf FROM access"
				 " WHERE who IN (?2, ?3)) ORDER BY 1 LIMIT ?6 OFFSET ?7");
	else
		st = lib_stmt(s, "SELECT " LIST_COLUMNS " FROM shelves s WHERE s.name >= ?4"
				 " AND s.name < ?5 ORDER BY s.name LIMIT ?6 OFFSET ?7");
	if (!st)
		return lib_sql_fail(s, e);
	bind_filter(st, f, prefix ? prefix : "", hi);
	sqlite3_bind_int64(st, 6, limit);
	sqlite3_bind_int64(st, 7, offset);
	return shelf_rows(s, st, fn, arg, e);
}
