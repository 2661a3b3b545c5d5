// SPDX-License-Identifier: GPL-2.0
/*
 * The offline tools' work on a catalogue (librarian check, librarian backup):
 * they open the database file themselves, read-only or as a copy, and may
 * run while a librarian serves it. The checks run on either store (a
 * PostgreSQL catalogue is checked in one read-only snapshot); a backup of
 * a PostgreSQL catalogue is pg_dump's (docs/HA.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	if (rc != SQLITE_DONE)
		return -EIO;
	if (ver < 3)
		return 0;
	if (prepare(db, "UPDATE igs SET zero = 0 WHERE zero <> 0", &st) != SQLITE_OK)
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
	  " (BOOK_FREE, BOOK_INUSE, BOOK_ZOMBIE, BOOK_OFFLINE, BOOK_BAD)",
	  1 },
	{ "INUSE book not on exactly one shelf",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE (state = BOOK_INUSE) <> (shelf IS NOT NULL)"
	  " OR (shelf IS NULL) <> (seq IS NULL)",
	  1 },
	{ "book on a shelf that does not exist",
	  "SELECT id >> 32, id & 4294967295, shelf FROM books b WHERE shelf IS NOT NULL AND"
	  " NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = b.shelf)",
	  1 },
	{ "book of an IG that does not exist or beyond its size",
	  "SELECT id >> 32, id & 4294967295, 0 FROM books b WHERE NOT EXISTS (SELECT 1 FROM igs g"
	  " WHERE g.ig = b.id >> 32 AND (b.id & 4294967295) < g.books)",
	  1 },
	{ "shelf whose book count disagrees (shelf id, recorded, actual)",
	  "SELECT * FROM (SELECT s.id, s.books, (SELECT count(*) FROM books b WHERE b.shelf = s.id) AS n"
	  " FROM shelves s) AS c WHERE n <> books",
	  1 },
	{ "shelf whose book sequence has holes (shelf id, books, max seq)",
	  "SELECT * FROM (SELECT s.id, s.books, (SELECT max(seq) FROM books b WHERE b.shelf = s.id) AS m"
	  " FROM shelves s) AS c WHERE books > 0 AND m <> books - 1",
	  1 },
	{ "IG whose free count disagrees (ig, recorded, actual)",
	  "SELECT * FROM (SELECT g.ig, g.free, (SELECT count(*) FROM books b WHERE b.state = BOOK_FREE AND b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295)"
	  " AS n FROM igs g) AS c WHERE n <> free",
	  1 },
	{ "IG whose book count disagrees (ig, recorded, actual)",
	  "SELECT * FROM (SELECT g.ig, g.books, (SELECT count(*) FROM books b WHERE b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295) AS n"
	  " FROM igs g) AS c WHERE n <> books",
	  1 },
	{ "attribute of a missing shelf (shelf id)",
	  "SELECT shelf, 0, 0 FROM attrs a WHERE NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = a.shelf)",
	  1 },
	{ "activation of a missing shelf (shelf id)",
	  "SELECT shelf, 0, 0 FROM activations a WHERE NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = a.shelf)",
	  1 },
	{ "shelf with an exclusive activation and another activation (shelf id)",
	  "SELECT shelf, count(*), 0 FROM activations GROUP BY shelf HAVING count(*) > 1"
	  " AND sum(CASE WHEN mode = 'rw' THEN 1 ELSE 0 END) > 0",
	  1 },
	{ "book with an invalid zeroed flag (ig, book, zeroed)",
	  "SELECT id >> 32, id & 4294967295, zeroed FROM books WHERE zeroed NOT IN (0, 1)", 2 },
	{ "ZOMBIE or OFFLINE book marked zeroed (ig, book, state)",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE zeroed <> 0 AND state IN (BOOK_ZOMBIE, BOOK_OFFLINE)",
	  2 },
	{ "IG whose count of known-zero free books disagrees (ig, recorded, actual)",
	  "SELECT * FROM (SELECT g.ig, g.zero, (SELECT count(*) FROM books b WHERE b.state = BOOK_FREE AND b.zeroed = 1 AND b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295)"
	  " AS n FROM igs g) AS c WHERE n <> zero",
	  3 },
	{ "access grant of a missing shelf (shelf id)",
	  "SELECT shelf, 0, 0 FROM access a WHERE NOT EXISTS (SELECT 1 FROM shelves s WHERE s.id = a.shelf)",
	  3 },
	{ "BAD book without a bad range, or marked zeroed (ig, book, zeroed)",
	  "SELECT id >> 32, id & 4294967295, zeroed FROM books b WHERE state = BOOK_BAD AND (zeroed <> 0"
	  " OR NOT EXISTS (SELECT 1 FROM bad x WHERE x.book = b.id))",
	  4 },
	{ "bad range of a missing book or of one neither BAD nor INUSE (ig, book, state)",
	  "SELECT DISTINCT x.book >> 32, x.book & 4294967295, coalesce(b.state, -1) FROM bad x"
	  " LEFT JOIN books b ON b.id = x.book WHERE b.state IS NULL OR b.state NOT IN (BOOK_BAD, BOOK_INUSE)",
	  4 },
	{ "bad range that is empty or negative (ig, book, offset)",
	  "SELECT book >> 32, book & 4294967295, off FROM bad WHERE off < 0 OR len <= 0", 4 },
};

/* PRAGMA integrity_check (quick_check): its complaints, or -1 if it cannot run. */
static int check_integrity(sqlite3 *db, FILE *rep, bool quick)
{
	sqlite3_stmt *st;
	int bad = 0;

	if (sqlite3_prepare_v2(db, quick ? "PRAGMA quick_check" : "PRAGMA integrity_check", -1, &st,
			       NULL) != SQLITE_OK) {
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
static int check_one(struct lib_store *s, FILE *rep, const char *what, const char *sql)
{
	struct lib_err e = { 0 };
	lib_st *st = lib_stmt(s, sql);
	int n = 0, rc;

	if (!st) {
		lib_sql_fail(s, &e);
		fprintf(rep, "cannot check '%s': %s\n", what, e.msg);
		return 1;
	}
	while ((rc = lib_step(st)) == LIB_ROW) {
		if (n++ < 10)
			fprintf(rep, "%s: %lld %lld %lld\n", what, (long long)lib_col_int64(st, 0),
				(long long)lib_col_int64(st, 1), (long long)lib_col_int64(st, 2));
	}
	if (rc != LIB_DONE) {
		lib_sql_fail(s, &e);
		fprintf(rep, "cannot check '%s': %s\n", what, e.msg);
		n++;
	}
	if (n > 10)
		fprintf(rep, "%s: ... %d in all\n", what, n);
	lib_reset(st);
	return n;
}

/* A SQLite handle the tools opened, as a store for the checks (its statements, not its db). */
static struct lib_store *wrap(sqlite3 *db)
{
	struct lib_store *s = calloc(1, sizeof(*s));

	if (s)
		s->db = db;
	return s;
}

static void unwrap(struct lib_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nst; i++)
		sqlite3_finalize(s->st[i].sq);
	free(s);
}

/* A wrapped handle's checks; 1 if it cannot be wrapped. */
static int check_db(sqlite3 *db, FILE *rep)
{
	struct lib_store *s = wrap(db);
	int bad;

	if (!s) {
		fprintf(rep, "out of memory\n");
		return 1;
	}
	bad = lib_store_check(s, rep, false);
	unwrap(s);
	return bad;
}

int lib_store_check(struct lib_store *s, FILE *rep, bool quick)
{
	/* PostgreSQL: its version was checked when it was opened */
	int64_t ver = s->db ? db_version(s->db) : s->version;
	int bad;

	if (ver < 0) {
		fprintf(rep, "cannot read the schema version: %s\n", sqlite3_errmsg(s->db));
		return 1;
	}
	if (ver < 1 || ver > LIB_SCHEMA_VERSION) {
		fprintf(rep,
			"catalogue schema version %lld is not supported (this librarian knows versions 1 to %d)\n",
			(long long)ver, LIB_SCHEMA_VERSION);
		return 1;
	}
	bad = s->db ? check_integrity(s->db, rep, quick) : 0;
	if (bad < 0)
		return 1;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (checks[i].version <= ver)
			bad += check_one(s, rep, checks[i].what, checks[i].sql);
	return bad;
}

/* One snapshot of a PostgreSQL catalogue, checked. */
static int check_pg(const char *uri, FILE *rep, char *msg, size_t len)
{
	struct lib_store *s = NULL;
	struct lib_err e = { 0 };
	int bad = lib_store_open(uri, NULL, false, &s, &e);

	if (bad == -EPROTO) { /* a schema version it does not know: a violation, as on SQLite */
		fprintf(rep, "%s\n", e.msg);
		return 1;
	}
	if (bad < 0) {
		snprintf(msg, len, "%s", e.msg);
		return -EIO;
	}
	if (lib_store_begin_read(s) < 0) {
		lib_sql_fail(s, &e);
		snprintf(msg, len, "%s", e.msg);
		lib_store_close(s);
		return -EIO;
	}
	bad = lib_store_check(s, rep, false);
	lib_store_rollback(s);
	lib_store_close(s);
	return bad;
}

int lib_store_check_file(const char *path, FILE *rep, char *msg, size_t len)
{
	sqlite3 *h = NULL;
	int bad;

	if (lib_store_is_pg(path))
		return check_pg(path, rep, msg, len);
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(msg, len, "%s: %s", path, h ? sqlite3_errmsg(h) : "cannot open");
		sqlite3_close(h);
		return -EIO;
	}
	sqlite3_busy_timeout(h, 5000);
	sqlite3_exec(h, "BEGIN", NULL, NULL, NULL); /* one consistent snapshot */
	bad = check_db(h, rep);
	sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(h);
	return bad;
}

/*
 * All pages in one step: one read transaction, so one consistent snapshot
 * while the librarian keeps writing (WAL readers do not block it).
 */
static int copy_db(sqlite3 *from, sqlite3 *to, const char *src, char *msg, size_t len)
{
	sqlite3_backup *b = sqlite3_backup_init(to, "main", from, "main");
	int rc;

	if (!b) {
		snprintf(msg, len, "%s", sqlite3_errmsg(to));
		return -EIO;
	}
	rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		snprintf(msg, len, "copying %s: %s", src, sqlite3_errmsg(to));
		return -EIO;
	}
	return 0;
}

/* The copy in tmp: forget known-zero FREE books, check it, close it. */
static int make_copy(const char *src, const char *tmp, FILE *rep, char *msg, size_t len)
{
	sqlite3 *from = NULL, *to = NULL;
	int r = -EIO, bad;

	if (sqlite3_open_v2(src, &from, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(msg, len, "%s: %s", src, from ? sqlite3_errmsg(from) : "cannot open");
		goto out;
	}
	sqlite3_busy_timeout(from, 5000);
	unlink(tmp);
	if (sqlite3_open_v2(tmp, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(msg, len, "%s: %s", tmp, to ? sqlite3_errmsg(to) : "cannot create");
		goto out;
	}
	if (copy_db(from, to, src, msg, len) < 0)
		goto out;
	if (lib_store_forget_zeroed(to) < 0) {
		snprintf(msg, len, "%s: %s", tmp, sqlite3_errmsg(to));
		goto out;
	}
	bad = check_db(to, rep);
	if (bad) {
		snprintf(msg, len, "the copy has %d consistency violations; not kept", bad);
		goto out;
	}
	r = 0;
out:
	sqlite3_close(to);
	sqlite3_close(from);
	return r;
}

int lib_store_backup(const char *src, const char *dest, FILE *rep, char *msg, size_t len)
{
	char tmp[4096];
	int fd, r;

	if (lib_store_is_pg(src)) {
		snprintf(msg, len,
			 "the catalogue is in PostgreSQL: back it up with pg_dump (docs/HA.md)");
		return -EOPNOTSUPP;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dest, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(msg, len, "destination path too long");
		return -ENAMETOOLONG;
	}
	r = make_copy(src, tmp, rep, msg, len);
	if (r == 0) {
		fd = open(tmp, O_RDONLY);
		if (fd < 0 || fsync(fd) < 0) {
			r = -errno;
			snprintf(msg, len, "%s: %s", tmp, strerror(errno));
		}
		if (fd >= 0)
			close(fd);
	}
	if (r == 0 && rename(tmp, dest) < 0) {
		r = -errno;
		snprintf(msg, len, "rename to %s: %s", dest, strerror(errno));
	}
	if (r < 0)
		unlink(tmp);
	return r;
}
