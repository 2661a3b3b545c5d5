// SPDX-License-Identifier: GPL-2.0
/*
 * The shelves table: names, UUIDs, owners and tenants, sizes and generations
 * of shelves. A listing by name prefix is a range of the name index (a
 * tenant's: of the tenant's index, merged with the shelves granted to the
 * caller), never a scan of every shelf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* A shelf and whether it is active anywhere (a seek in the activations' key). */
#define FIND_COLUMNS                           \
	"id, books, gen, name, owner, tenant," \
	" (SELECT count(*) FROM activations WHERE shelf = s.id)"

static void shelf_cols(lib_st *st, struct lib_shelf *sh)
{
	sh->id = lib_col_int64(st, 0);
	sh->books = lib_col_int64(st, 1);
	sh->gen = lib_col_int64(st, 2);
	snprintf(sh->name, sizeof(sh->name), "%s", lib_col_text(st, 3));
	snprintf(sh->owner, sizeof(sh->owner), "%s", lib_col_text(st, 4));
	snprintf(sh->tenant, sizeof(sh->tenant), "%s", lib_col_text(st, 5));
	sh->active = lib_col_int64(st, 6);
}

static int shelf_row(struct lib_store *s, lib_st *st, struct lib_shelf *sh, struct lib_err *e)
{
	int rc = lib_step(st);

	if (rc == LIB_ROW)
		shelf_cols(st, sh);
	lib_reset(st);
	if (rc == LIB_ROW)
		return 0;
	return rc == LIB_DONE ? -ENOENT : lib_sql_fail(s, e);
}

int lib_store_shelf_find(struct lib_store *s, const char *name, struct lib_shelf *sh,
			 struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT " FIND_COLUMNS " FROM shelves s WHERE name = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, name);
	return shelf_row(s, st, sh, e);
}

int lib_store_shelf_find_uuid(struct lib_store *s, const char *uuid, struct lib_shelf *sh,
			      struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT " FIND_COLUMNS " FROM shelves s WHERE uuid = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, uuid);
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
static void bind_filter(lib_st *st, const struct lib_shelf_filter *f, const char *lo,
			const char *hi)
{
	if (f) {
		lib_bind_text(st, 1, f->tenant);
		lib_bind_text(st, 2, f->node);
		lib_bind_text(st, 3, f->tag ? f->tag : "");
	}
	lib_bind_text(st, 4, lo);
	lib_bind_text(st, 5, hi);
}

int lib_store_shelf_count(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			  int64_t *n, struct lib_err *e)
{
	lib_st *st;
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
	rc = lib_step(st);
	*n = rc == LIB_ROW ? lib_col_int64(st, 0) : 0;
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_shelf_insert(struct lib_store *s, const struct lib_shelf *sh, const char *uuid,
			   int64_t now, int64_t max, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "INSERT INTO shelves(id, name, uuid, owner, tenant, ctime, mtime)"
				 " SELECT ?6, ?1, ?2, ?3, ?4, ?5, ?5 WHERE NOT EXISTS (SELECT 1"
				 " FROM shelves WHERE name = ?1) AND (SELECT count(*) FROM shelves)"
				 " < ?7");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, sh->name);
	lib_bind_text(st, 2, uuid);
	lib_bind_text(st, 3, sh->owner);
	lib_bind_text(st, 4, sh->tenant);
	lib_bind_int64(st, 5, now);
	lib_bind_int64(st, 6, sh->id);
	lib_bind_int64(st, 7, max);
	return lib_stmt_run_expect(s, st, 1, e);
}

/* Covering indexes (owner, books) and (tenant, name, books): no table lookups. */
int lib_store_usage(struct lib_store *s, bool tenant, const char *key, int64_t *shelves,
		    int64_t *books, struct lib_err *e)
{
	lib_st *st = tenant ? lib_stmt(s, "SELECT count(*), total(books) FROM shelves"
					  " WHERE tenant = ?1") :
			      lib_stmt(s, "SELECT count(*), total(books) FROM shelves"
					  " WHERE owner = ?1");
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, key);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		*shelves = lib_col_int64(st, 0);
		*books = lib_col_int64(st, 1);
	}
	lib_reset(st);
	return rc == LIB_ROW ? 0 : lib_sql_fail(s, e);
}

int lib_store_shelf_set_books(struct lib_store *s, int64_t id, int64_t books, int64_t now,
			      struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE shelves SET books = ?2, mtime = ?3, gen = gen + 1"
				 " WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	lib_bind_int64(st, 2, books);
	lib_bind_int64(st, 3, now);
	return lib_stmt_run_later(s, st, e);
}

int lib_store_shelf_rename(struct lib_store *s, int64_t id, const char *name, int64_t now,
			   struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE shelves SET name = ?2, mtime = ?3, gen = gen + 1"
				 " WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	lib_bind_text(st, 2, name);
	lib_bind_int64(st, 3, now);
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
		lib_st *st = lib_stmt(s, sql[i]);
		int r;

		if (st)
			lib_bind_int64(st, 1, id);
		r = lib_stmt_run_later(s, st, e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Hand the rows of st (the columns of lib_store_shelf_show) to fn. */
static int shelf_rows(struct lib_store *s, lib_st *st, lib_shelf_fn *fn, void *arg,
		      struct lib_err *e)
{
	int rc = LIB_DONE, r = 0;

	while (r == 0 && (rc = lib_step(st)) == LIB_ROW) {
		struct lib_shelf_row row = {
			.name = lib_col_text(st, 0),
			.uuid = lib_col_text(st, 1),
			.owner = lib_col_text(st, 2),
			.ctime = lib_col_int64(st, 3),
			.mtime = lib_col_int64(st, 4),
			.books = lib_col_int64(st, 5),
			.gen = lib_col_int64(st, 6),
			.policy = lib_col_text(st, 7),
			.tenant = lib_col_text(st, 8),
			.access = lib_col_text(st, 9),
			.size = lib_col_text(st, 10),
			.activations = lib_col_count(st) > 11 ? lib_col_text(st, 11) : NULL,
		};

		r = fn(arg, &row);
	}
	lib_reset(st);
	if (r == 0 && rc != LIB_DONE)
		return lib_sql_fail(s, e);
	return r;
}

#define SHELF_COLUMNS                                                                     \
	"s.name, s.uuid, s.owner, s.ctime, s.mtime, s.books, s.gen,"                      \
	" (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy'), s.tenant," \
	" (SELECT group_concat(who || ':' || level) FROM (SELECT who, level FROM access"  \
	" WHERE shelf = s.id ORDER BY who) AS g),"                                        \
	" (SELECT value FROM attrs WHERE shelf = s.id AND key = '" LIB_ATTR_SIZE "')"

int lib_store_shelf_show(struct lib_store *s, int64_t id, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT " SHELF_COLUMNS " FROM shelves s WHERE id = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, id);
	return shelf_rows(s, st, fn, arg, e);
}

static char *text_dup(lib_st *st, int i)
{
	const char *t = lib_col_text(st, i);

	return t ? strdup(t) : NULL;
}

void lib_shelf_full_free(struct lib_shelf_full *f)
{
	free(f->policy);
	free(f->access);
	free(f->size);
	free(f->igs);
	free(f->partners);
	memset(f, 0, sizeof(*f));
}

int lib_store_shelf_find_full(struct lib_store *s, const char *name, struct lib_shelf_full *f,
			      struct lib_err *e)
{
	lib_st *st = lib_stmt(s,
			      "SELECT " FIND_COLUMNS ", " SHELF_COLUMNS ", (SELECT value FROM attrs"
			      " WHERE shelf = s.id AND key = 'lfs.igs'), (SELECT value FROM attrs"
			      " WHERE shelf = s.id AND key = 'lfs.anti_affinity') FROM shelves s"
			      " WHERE name = ?1");
	int rc;

	memset(f, 0, sizeof(*f));
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, name);
	rc = lib_step(st);
	if (rc == LIB_ROW) {
		/* columns 0-6: FIND_COLUMNS; 7-17: SHELF_COLUMNS; then lfs.igs, partners */
		shelf_cols(st, &f->sh);
		snprintf(f->uuid, sizeof(f->uuid), "%s", lib_col_text(st, 8) ?: "");
		f->ctime = lib_col_int64(st, 10);
		f->mtime = lib_col_int64(st, 11);
		f->policy = text_dup(st, 14);
		f->access = text_dup(st, 16);
		f->size = text_dup(st, 17);
		f->igs = text_dup(st, 18);
		f->partners = text_dup(st, 19);
	}
	lib_reset(st);
	if (rc == LIB_ROW)
		return 0;
	return rc == LIB_DONE ? -ENOENT : lib_sql_fail(s, e);
}

#define LIST_COLUMNS                                                                 \
	SHELF_COLUMNS ", (SELECT group_concat(node || ':' || mode) FROM activations" \
		      " WHERE shelf = s.id)"

int lib_store_shelf_list(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			 int64_t offset, int64_t limit, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e)
{
	char hi[LIB_OLD_NAME_MAX + 2];
	lib_st *st;

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
	lib_bind_int64(st, 6, limit);
	lib_bind_int64(st, 7, offset);
	return shelf_rows(s, st, fn, arg, e);
}
