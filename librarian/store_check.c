// SPDX-License-Identifier: GPL-2.0
/*
 * The offline tools' work on a catalogue (librarian check, librarian backup):
 * they open the database file themselves, read-only or as a copy, without a
 * struct lib_store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* The catalogue's schema version, or -1. */
static int64_t db_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t ver = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return ver;
}

/* sql with book state names expanded, prepared on db. */
static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	char *text = lib_sql_expand(sql);
	int rc;

	if (!text)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(db, text, -1, st, NULL);
	free(text);
	return rc;
}

/*
 * For a backup copy: a catalogue restored from it can be older than the
 * fabric, and a book FREE in the copy may have been allocated and written
 * after the copy was taken. The copy forgets which FREE books were known zero
 * (INUSE books' flags are never read again: they are cleared when freed).
 */
int lib_store_forget_zeroed(sqlite3 *db)
{
	int64_t ver = db_version(db);
	sqlite3_stmt *st;
	int rc;

	if (ver < 2)
		return ver < 0 ? -EIO : 0;
	if (prepare(db, "UPDATE books SET zeroed = 0 WHERE state = BOOK_FREE AND zeroed <> 0",
		    &st) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/*
 * Each query lists violations; the check prints them and counts them. A query
 * runs on catalogues of its schema version or later.
 */
static const struct {
	const char *what;
	const char *sql;
	int version;
} checks[] = {
	{ "book with an invalid state",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE state NOT IN"
	  " (BOOK_FREE, BOOK_INUSE, BOOK_ZOMBIE, BOOK_OFFLINE)", 1 },
	{ "INUSE book not on exactly one shelf",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE (state = BOOK_INUSE) <> (shelf IS NOT NULL)"
	  " OR (shelf IS NULL) <> (seq IS NULL)", 1 },
	{ "book on a shelf that does not exist",
	  "SELECT id >> 32, id & 4294967295, shelf FROM books b WHERE shelf IS NOT NULL AND"
	  " NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = b.shelf)", 1 },
	{ "book of an IG that does not exist or beyond its size",
	  "SELECT id >> 32, id & 4294967295, 0 FROM books b WHERE NOT EXISTS (SELECT 1 FROM igs g"
	  " WHERE g.ig = b.id >> 32 AND (b.id & 4294967295) < g.books)", 1 },
	{ "shelf whose book count disagrees (shelf id, recorded, actual)",
	  "SELECT s.id, s.books, (SELECT count(*) FROM books b WHERE b.shelf = s.id) AS n FROM shelves s"
	  " WHERE n <> s.books", 1 },
	{ "shelf whose book sequence has holes (shelf id, books, max seq)",
	  "SELECT s.id, s.books, (SELECT max(seq) FROM books b WHERE b.shelf = s.id) AS m FROM shelves s"
	  " WHERE s.books > 0 AND m <> s.books - 1", 1 },
	{ "IG whose free count disagrees (ig, recorded, actual)",
	  "SELECT g.ig, g.free, (SELECT count(*) FROM books b WHERE b.state = BOOK_FREE AND b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295)"
	  " AS n FROM igs g WHERE n <> g.free", 1 },
	{ "IG whose book count disagrees (ig, recorded, actual)",
	  "SELECT g.ig, g.books, (SELECT count(*) FROM books b WHERE b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295) AS n"
	  " FROM igs g WHERE n <> g.books", 1 },
	{ "attribute of a missing shelf (shelf id)",
	  "SELECT shelf, 0, 0 FROM attrs a WHERE NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = a.shelf)", 1 },
	{ "activation of a missing shelf (shelf id)",
	  "SELECT shelf, 0, 0 FROM activations a WHERE NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = a.shelf)", 1 },
	{ "shelf with an exclusive activation and another activation (shelf id)",
	  "SELECT shelf, count(*), 0 FROM activations GROUP BY shelf HAVING count(*) > 1"
	  " AND sum(mode = 'rw') > 0", 1 },
	{ "book with an invalid zeroed flag (ig, book, zeroed)",
	  "SELECT id >> 32, id & 4294967295, zeroed FROM books WHERE zeroed NOT IN (0, 1)", 2 },
	{ "ZOMBIE or OFFLINE book marked zeroed (ig, book, state)",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE zeroed <> 0 AND state IN (BOOK_ZOMBIE, BOOK_OFFLINE)",
	  2 },
};

/* PRAGMA integrity_check: its complaints, or -1 if it cannot run. */
static int check_integrity(sqlite3 *db, FILE *rep)
{
	sqlite3_stmt *st;
	int bad = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK) {
		fprintf(rep, "cannot run integrity_check: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (strcmp(t, "ok")) {
			fprintf(rep, "integrity: %s\n", t);
			bad++;
		}
	}
	sqlite3_finalize(st);
	return bad;
}

/* One query of checks[]: the violations it finds, the first ten printed. */
static int check_one(sqlite3 *db, FILE *rep, const char *what, const char *sql)
{
	sqlite3_stmt *st;
	int n = 0;

	if (prepare(db, sql, &st) != SQLITE_OK) {
		fprintf(rep, "cannot check '%s': %s\n", what, sqlite3_errmsg(db));
		return 1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n++ < 10)
			fprintf(rep, "%s: %lld %lld %lld\n", what,
				(long long)sqlite3_column_int64(st, 0),
				(long long)sqlite3_column_int64(st, 1),
				(long long)sqlite3_column_int64(st, 2));
	}
	if (n > 10)
		fprintf(rep, "%s: ... %d in all\n", what, n);
	sqlite3_finalize(st);
	return n;
}

int lib_store_check(sqlite3 *db, FILE *rep)
{
	int64_t ver = db_version(db);
	int bad;

	if (ver < 0) {
		fprintf(rep, "cannot read the schema version: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	if (ver < 1 || ver > LIB_SCHEMA_VERSION) {
		fprintf(rep, "catalogue schema version %lld is not supported (this librarian knows versions 1 to %d)\n",
			(long long)ver, LIB_SCHEMA_VERSION);
		return 1;
	}
	bad = check_integrity(db, rep);
	if (bad < 0)
		return 1;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (checks[i].version <= ver)
			bad += check_one(db, rep, checks[i].what, checks[i].sql);
	return bad;
}
