// SPDX-License-Identifier: GPL-2.0
/*
 * A catalogue opened: the SQLite file with its pragmas, or PostgreSQL
 * (store_pg.c), its schema made or migrated, a reading connection for the
 * lease thread, and closed again.
 *
 * books.zeroed is 1 when the book's content is known to be all zero bytes:
 * its node reported it zeroed (zombie.zeroed) or reading as zeroes
 * (free.checked) and nothing can have written it since it became FREE. Books
 * that become ZOMBIE or OFFLINE, books of new or grown IGs and the FREE books
 * of an IG that moved to another node have 0. An INUSE book keeps the value
 * it had when allocated.
 *
 * Only FREE books known zero are allocated: igs.zero counts them per IG
 * (beside igs.free, every FREE book) and the partial index books_zero holds
 * them, so a pick is still one index seek.
 *
 * Schema versions (PRAGMA user_version): 1, the first; 2 adds books.zeroed;
 * 3 adds igs.zero, shelves.tenant and the access table (lfs.access);
 * 4 adds the bad table (poisoned ranges of books, store_bad.c) and the
 * BOOK_BAD state. lib_store_open() migrates an older catalogue in one
 * transaction.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "store.h"
#include "store_known.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* A new catalogue: the schema of version 2, then the steps after it. */
static const char schema_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE nodes(name TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'online') WITHOUT ROWID;"
	"CREATE TABLE igs(ig INTEGER PRIMARY KEY, node TEXT NOT NULL, books INTEGER NOT NULL,"
	" free INTEGER NOT NULL);"
	"CREATE TABLE books(id INTEGER PRIMARY KEY, state INTEGER NOT NULL, shelf INTEGER,"
	" seq INTEGER, zeroed INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX books_free ON books(id) WHERE state = BOOK_FREE;"
	"CREATE INDEX books_zombie ON books(id) WHERE state = BOOK_ZOMBIE;"
	"CREATE UNIQUE INDEX books_shelf ON books(shelf, seq) WHERE shelf IS NOT NULL;"
	"CREATE TABLE shelves(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
	" uuid TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, ctime INTEGER NOT NULL,"
	" mtime INTEGER NOT NULL, books INTEGER NOT NULL DEFAULT 0, gen INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE attrs(shelf INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY(shelf, key)) WITHOUT ROWID;"
	"CREATE TABLE activations(shelf INTEGER NOT NULL, node TEXT NOT NULL, mode TEXT NOT NULL,"
	" since INTEGER NOT NULL, PRIMARY KEY(shelf, node)) WITHOUT ROWID;"
	"CREATE INDEX activations_node ON activations(node);"
	"PRAGMA user_version = 2;";

/*
 * 2 -> 3: igs.zero counts the FREE books known zero (only those are
 * allocated) and books_zero indexes them; a shelf's tenant (its owner's,
 * indexed with the name for shelf.list) and owner (indexed for quotas);
 * access lists (lfs.access) by shelf and by grantee.
 */
static const char upgrade_3_sql[] =
	"ALTER TABLE igs ADD COLUMN zero INTEGER NOT NULL DEFAULT 0;"
	"UPDATE igs SET zero = (SELECT count(*) FROM books WHERE state = BOOK_FREE AND zeroed = 1"
	" AND id BETWEEN igs.ig << 32 AND (igs.ig << 32) + 4294967295);"
	"CREATE INDEX books_zero ON books(id) WHERE state = BOOK_FREE AND zeroed = 1;"
	"ALTER TABLE shelves ADD COLUMN tenant TEXT NOT NULL DEFAULT '';"
	"CREATE INDEX shelves_tenant ON shelves(tenant, name, books);"
	"CREATE INDEX shelves_owner ON shelves(owner, books);"
	"CREATE TABLE access(shelf INTEGER NOT NULL, who TEXT NOT NULL, level INTEGER NOT NULL,"
	" PRIMARY KEY(shelf, who)) WITHOUT ROWID;"
	"CREATE INDEX access_who ON access(who, shelf);"
	"PRAGMA user_version = 3;";

/* 3 -> 4: bad ranges; no book of an older catalogue is known bad. */
static const char upgrade_4_sql[] =
	"CREATE TABLE bad(book INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL,"
	" node TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY(book, off, len)) WITHOUT ROWID;"
	"CREATE INDEX books_bad ON books(id) WHERE state = BOOK_BAD;"
	"PRAGMA user_version = 4;";

static int exec(struct lib_store *s, const char *sql, struct lib_err *e)
{
	char *msg = NULL, *text = lib_sql_expand(sql);

	if (!text)
		return lib_fail(e, ENOMEM, "out of memory");
	if (sqlite3_exec(s->db, text, NULL, NULL, &msg) != SQLITE_OK) {
		lib_fail(e, EIO, "database error: %s (in: %.60s)", msg ? msg : "?", sql);
		sqlite3_free(msg);
		free(text);
		return -EIO;
	}
	free(text);
	return 0;
}

static int64_t user_version(struct lib_store *s)
{
	lib_st *st = lib_stmt(s, "PRAGMA user_version");
	int64_t v = -1;

	if (st && lib_step(st) == SQLITE_ROW)
		v = lib_col_int64(st, 0);
	if (st)
		lib_reset(st);
	return v;
}

/* An older schema brought to this version, one step at a time. */
static int store_upgrade(struct lib_store *s, int64_t ver, struct lib_err *e)
{
	int r = 0;

	s->upgraded_from = ver;
	if (ver == 1)
		/* 1 -> 2: no book's content is known yet */
		r = exec(s,
			 "ALTER TABLE books ADD COLUMN zeroed INTEGER NOT NULL DEFAULT 0;"
			 " PRAGMA user_version = 2",
			 e);
	if (r == 0 && ver < 3)
		r = exec(s, upgrade_3_sql, e);
	if (r == 0)
		r = exec(s, upgrade_4_sql, e);
	return r;
}

/* Create the schema, or migrate an older one, in one transaction. */
static int store_schema(struct lib_store *s, const char *path, bool create, struct lib_err *e)
{
	int64_t ver;
	int r = exec(s, "BEGIN IMMEDIATE", e);

	if (r < 0)
		return r;
	ver = user_version(s);
	if (ver == 0) {
		if (!create)
			r = lib_fail(e, ENOENT, "%s: not a librarian catalogue (empty)", path);
		else if (!(r = exec(s, schema_sql, e)) && !(r = exec(s, upgrade_3_sql, e)))
			r = exec(s, upgrade_4_sql, e);
	} else if (ver >= 1 && ver <= 3) {
		r = store_upgrade(s, ver, e);
	} else if (ver > LIB_SCHEMA_VERSION) {
		r = lib_fail(
			e, EPROTO,
			"%s: catalogue schema version %lld is newer than this librarian's (%d): it was written by a newer librarian; run that one (the catalogue was not changed)",
			path, (long long)ver, LIB_SCHEMA_VERSION);
	} else if (ver != LIB_SCHEMA_VERSION) {
		r = lib_fail(
			e, EPROTO,
			"%s: catalogue schema version %lld is not supported (this librarian knows versions 1 to %d)",
			path, (long long)ver, LIB_SCHEMA_VERSION);
	}
	if (r == 0)
		r = exec(s, "COMMIT", e);
	if (r < 0)
		lib_store_rollback(s);
	return r;
}

/*
 * A new catalogue has 1 KiB pages (an existing one keeps its size): a request
 * changes 15 to 30 pages, each a whole page in the WAL, checksummed, copied
 * into the kernel and, with synchronous = full, flushed to the disk; the rows
 * are small, so 1 KiB pages write a quarter of the bytes of 4 KiB ones for
 * the same number of pages (docs/bench-librarian.md).
 */
static int store_pragmas(struct lib_store *s, struct lib_err *e)
{
	int r = exec(s, "PRAGMA page_size = " STR(LIB_PAGE_SIZE), e);

	if (r == 0)
		r = exec(s, "PRAGMA journal_mode = WAL", e);

	if (r == 0)
		r = exec(s,
			 s->cfg && !s->cfg->sync_full ? "PRAGMA synchronous = NORMAL" :
							"PRAGMA synchronous = FULL",
			 e);
	/*
	 * SQLite's auto-checkpoint on this connection (the tools' default; the
	 * daemon moves checkpoints to a thread, lib_store_checkpointer()).
	 */
	if (r == 0)
		r = exec(s,
			 "PRAGMA cache_size = -40960; PRAGMA temp_store = MEMORY;"
			 " PRAGMA wal_autocheckpoint = 256;",
			 e);
	return r;
}

static struct lib_store *store_alloc(const struct lib_config *cfg)
{
	struct lib_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = cfg;
	if (cfg) {
		s->node_state = calloc(cfg->nnodes + 1, 1);
		s->ig_changed = calloc(cfg->nigs + 1, sizeof(*s->ig_changed));
		if (!s->node_state || !s->ig_changed) {
			free(s->node_state);
			free(s->ig_changed);
			free(s);
			return NULL;
		}
	}
	if (RAND_bytes((unsigned char *)&s->rand_state, sizeof(s->rand_state)) != 1 ||
	    !s->rand_state)
		s->rand_state = (uint64_t)time(NULL) | 1;
	if (RAND_bytes((unsigned char *)&s->instance, sizeof(s->instance)) != 1 || !s->instance)
		s->instance = lib_random(s) | 1;
	if (RAND_bytes(s->token_key, sizeof(s->token_key)) != 1) {
		lib_store_close(s);
		return NULL;
	}
	return s;
}

int lib_store_open(const char *path, const struct lib_config *cfg, bool create,
		   struct lib_store **out, struct lib_err *e)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	struct lib_store *s = store_alloc(cfg);
	int r;

	if (!s)
		return lib_fail(e, ENOMEM, "out of memory");
	if (lib_store_is_pg(path)) {
		r = lib_pg_open(s, path, create, false, e);
		if (r < 0)
			goto fail;
		*out = s;
		return 0;
	}
	if (sqlite3_open_v2(path, &s->db, flags, lib_wal_vfs()) != SQLITE_OK) {
		r = lib_fail(e, errno == ENOENT ? ENOENT : EIO, "%s: cannot open database: %s",
			     path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 0);
	sqlite3_busy_timeout(s->db, 5000);
	r = store_pragmas(s, e);
	if (r == 0)
		r = store_schema(s, path, create, e);
	if (r < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	lib_store_close(s);
	return r;
}

/*
 * A second connection to the catalogue that only reads (PRAGMA query_only),
 * for the lease thread: WAL lets it read the last commit while the event
 * loop writes. Its node_state[] is the thread's own copy.
 */
int lib_store_open_reader(struct lib_store *main, struct lib_store **out, struct lib_err *e)
{
	const char *path = main->db ? sqlite3_db_filename(main->db, "main") : NULL;
	struct lib_store *s;
	int r;

	if (main->pg) {
		s = store_alloc(main->cfg);
		if (!s)
			return lib_fail(e, ENOMEM, "out of memory");
		r = lib_pg_open(s, lib_pg_conninfo(main->pg), false, true, e);
		if (r < 0) {
			lib_store_close(s);
			return r;
		}
		*out = s;
		return 0;
	}
	if (!path || !*path)
		return lib_fail(e, EOPNOTSUPP, "the catalogue is not a file");
	s = store_alloc(main->cfg);
	if (!s)
		return lib_fail(e, ENOMEM, "out of memory");
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    lib_wal_vfs()) != SQLITE_OK ||
	    sqlite3_exec(s->db, "PRAGMA query_only = 1; PRAGMA cache_size = -8192", NULL, NULL,
			 NULL) != SQLITE_OK) {
		lib_fail(e, EIO, "%s: cannot open a reading connection: %s", path,
			 s->db ? sqlite3_errmsg(s->db) : "out of memory");
		lib_store_close(s);
		return -EIO;
	}
	sqlite3_extended_result_codes(s->db, 0);
	sqlite3_busy_timeout(s->db, 1000);
	*out = s;
	return 0;
}

void lib_store_close(struct lib_store *s)
{
	if (!s)
		return;
	lib_store_checkpointer(s, false, NULL);
	for (int i = 0; i < s->nst; i++) {
		if (s->st[i].sq)
			sqlite3_finalize(s->st[i].sq);
		else
			lib_pg_finalize(s->st[i].pg);
	}
	if (s->db)
		sqlite3_close(s->db);
	lib_pg_close(s);
	free(s->node_state);
	free(s->ig_changed);
	lib_store_known_free(s);
	free(s);
}
