// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue in SQLite: schema, geometry synchronisation with the config,
 * transactions and the offline consistency check.
 *
 * A book's id is (IG << 32) | index, so ordering by id is LZA order and an IG's
 * books are one id range. Free and zombie books have partial indexes, so
 * picking N free books from an IG is a range scan of N index entries, whatever
 * the size of the catalogue.
 *
 * books.zeroed is 1 when the book's content is known to be all zero bytes:
 * its node reported it zeroed (zombie.zeroed) and nothing can have written it
 * since it became FREE. Books that become ZOMBIE or OFFLINE, books of new or
 * grown IGs and the FREE books of an IG that moved to another node have 0.
 * An INUSE book keeps the value it had when allocated.
 *
 * Schema versions (PRAGMA user_version): 1, the first; 2 adds books.zeroed.
 * lib_store_open() migrates an older catalogue in one transaction.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "librarian.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char schema_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE nodes(name TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'online') WITHOUT ROWID;"
	"CREATE TABLE igs(ig INTEGER PRIMARY KEY, node TEXT NOT NULL, books INTEGER NOT NULL,"
	" free INTEGER NOT NULL);"
	"CREATE TABLE books(id INTEGER PRIMARY KEY, state INTEGER NOT NULL, shelf INTEGER,"
	" seq INTEGER, zeroed INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX books_free ON books(id) WHERE state = 0;"
	"CREATE INDEX books_zombie ON books(id) WHERE state = 2;"
	"CREATE UNIQUE INDEX books_shelf ON books(shelf, seq) WHERE shelf IS NOT NULL;"
	"CREATE TABLE shelves(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
	" uuid TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, ctime INTEGER NOT NULL,"
	" mtime INTEGER NOT NULL, books INTEGER NOT NULL DEFAULT 0, gen INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE attrs(shelf INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY(shelf, key)) WITHOUT ROWID;"
	"CREATE TABLE activations(shelf INTEGER NOT NULL, node TEXT NOT NULL, mode TEXT NOT NULL,"
	" since INTEGER NOT NULL, PRIMARY KEY(shelf, node)) WITHOUT ROWID;"
	"CREATE INDEX activations_node ON activations(node);";

uint64_t lib_random(struct lib_store *s)
{
	/* xorshift64*, seeded from OpenSSL: allocation randomness, not secrets */
	uint64_t x = s->rand_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rand_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

int lib_sql_fail(struct lib_store *s, struct lib_err *e)
{
	int rc = sqlite3_errcode(s->db);
	int err = (rc == SQLITE_FULL) ? ENOSPC : (rc == SQLITE_BUSY) ? EBUSY : EIO;

	return lib_fail(e, err, "database error: %s", sqlite3_errmsg(s->db));
}

sqlite3_stmt *lib_stmt(struct lib_store *s, const char *sql)
{
	sqlite3_stmt *st;
	int i;

	for (i = 0; i < s->nst; i++) {
		if (s->sql[i] == sql) {
			sqlite3_reset(s->st[i]);
			sqlite3_clear_bindings(s->st[i]);
			return s->st[i];
		}
	}
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		return NULL;
	if (s->nst < LIB_STMT_CACHE) {
		s->sql[s->nst] = sql;
		s->st[s->nst++] = st;
	}
	/* else: leaks one statement per call; the cache is sized for every call site */
	return st;
}

static int exec(struct lib_store *s, const char *sql, struct lib_err *e)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		lib_fail(e, EIO, "database error: %s (in: %.60s)", msg ? msg : "?", sql);
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int lib_store_begin(struct lib_store *s)
{
	return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

int lib_store_commit(struct lib_store *s)
{
	return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

void lib_store_rollback(struct lib_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int64_t query_int(struct lib_store *s, const char *sql, int64_t a, int64_t b, int64_t dflt)
{
	sqlite3_stmt *st = lib_stmt(s, sql);
	int64_t v = dflt;

	if (!st)
		return dflt;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static int step_done(struct lib_store *s, sqlite3_stmt *st, struct lib_err *e)
{
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return lib_sql_fail(s, e);
	return 0;
}

static int insert_books(struct lib_store *s, uint32_t ig, uint64_t from, uint64_t to, int state,
			struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s,
		"WITH RECURSIVE c(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ?2)"
		" INSERT INTO books(id, state) SELECT (?3 << 32) + x, ?4 FROM c");

	if (from >= to)
		return 0;
	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	sqlite3_bind_int64(st, 3, ig);
	sqlite3_bind_int(st, 4, state);
	return step_done(s, st, e);
}

static int refresh_free(struct lib_store *s, uint32_t ig, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s,
		"UPDATE igs SET free = (SELECT count(*) FROM books WHERE state = 0"
		" AND id BETWEEN (?1 << 32) AND (?1 << 32) + 4294967295) WHERE ig = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, ig);
	return step_done(s, st, e);
}

/* Books of an IG that are INUSE or ZOMBIE, at or beyond index 'from'. */
static int64_t busy_books(struct lib_store *s, uint32_t ig, uint64_t from)
{
	return query_int(s, "SELECT count(*) FROM books WHERE id BETWEEN ?1 AND ?2"
			 " AND state IN (1, 2)",
			 lib_book_id(ig, 0) + (int64_t)from, lib_book_id(ig, 0xffffffffU), -1);
}

static int sync_nodes(struct lib_store *s, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	sqlite3_stmt *st;
	int r;

	/* nodes gone from the config must not hold activations */
	st = lib_stmt(s, "SELECT a.node, sh.name FROM activations a JOIN shelves sh"
		      " ON sh.id = a.shelf");
	if (!st)
		return lib_sql_fail(s, e);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(st, 0);

		if (lib_config_find_node(c, node) < 0) {
			r = lib_fail(e, EBUSY,
				     "%s: node '%s' was removed from the fabric but holds an activation of shelf '%s'; deactivate it first",
				     c->path, node, (const char *)sqlite3_column_text(st, 1));
			sqlite3_reset(st);
			return r;
		}
	}
	sqlite3_reset(st);
	for (int i = 0; i < c->nnodes; i++) {
		st = lib_stmt(s, "INSERT OR IGNORE INTO nodes(name) VALUES (?1)");
		if (!st)
			return lib_sql_fail(s, e);
		sqlite3_bind_text(st, 1, c->nodes[i].name, -1, SQLITE_STATIC);
		r = step_done(s, st, e);
		if (r < 0)
			return r;
		st = lib_stmt(s, "SELECT state FROM nodes WHERE name = ?1");
		sqlite3_bind_text(st, 1, c->nodes[i].name, -1, SQLITE_STATIC);
		s->node_offline[i] = sqlite3_step(st) == SQLITE_ROW &&
				     !strcmp((const char *)sqlite3_column_text(st, 0), "offline");
		sqlite3_reset(st);
	}
	return 0;
}

int lib_store_sync_geometry(struct lib_store *s, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	sqlite3_stmt *st;
	int64_t bs;
	int r;

	if (lib_store_begin(s) < 0)
		return lib_sql_fail(s, e);
	bs = query_int(s, "SELECT value FROM meta WHERE key = 'book_size'", 0, 0, 0);
	if (bs && (uint64_t)bs != c->book_size) {
		r = lib_fail(e, EINVAL,
			     "%s: book_size %llu differs from the catalogue's %lld; the book size of an existing catalogue cannot change",
			     c->path, (unsigned long long)c->book_size, (long long)bs);
		goto fail;
	}
	st = lib_stmt(s, "INSERT OR REPLACE INTO meta(key, value) VALUES ('book_size', ?1)");
	if (!st)
		goto sqlfail;
	sqlite3_bind_int64(st, 1, c->book_size);
	r = step_done(s, st, e);
	if (r < 0)
		goto fail;
	r = sync_nodes(s, e);
	if (r < 0)
		goto fail;

	/* IGs in the catalogue: keep, resize or drop */
	{
		int64_t *old = NULL;
		int nold = 0, cap = 0;

		st = lib_stmt(s, "SELECT ig, books FROM igs");
		if (!st)
			goto sqlfail;
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (nold + 2 > cap) {
				int64_t *n;

				cap = cap ? cap * 2 : 64;
				n = realloc(old, cap * sizeof(*old));
				if (!n) {
					free(old);
					sqlite3_reset(st);
					r = lib_fail(e, ENOMEM, "out of memory");
					goto fail;
				}
				old = n;
			}
			old[nold++] = sqlite3_column_int64(st, 0);
			old[nold++] = sqlite3_column_int64(st, 1);
		}
		sqlite3_reset(st);
		for (int i = 0; i < nold; i += 2) {
			uint32_t ig = old[i];
			uint64_t have = old[i + 1];
			int k = lib_config_find_ig(c, ig);
			uint64_t want = k < 0 ? 0 : c->igs[k].books;
			int64_t busy;

			if (want == have)
				continue;
			if (want < have) {
				busy = busy_books(s, ig, want);
				if (busy) {
					r = lib_fail(e, EBUSY,
						     k < 0 ? "%s: IG %u was removed from the fabric but %lld of its books are allocated or waiting to be zeroed; refusing to start" :
						     "%s: IG %u shrinks to %llu books but %lld books beyond that are allocated or waiting to be zeroed; refusing to start",
						     c->path, ig, (unsigned long long)want, (long long)busy);
					if (k < 0)
						r = lib_fail(e, EBUSY,
							     "%s: IG %u was removed from the fabric but %lld of its books are allocated or waiting to be zeroed; refusing to start",
							     c->path, ig, (long long)busy);
					free(old);
					goto fail;
				}
				st = lib_stmt(s, "DELETE FROM books WHERE id BETWEEN ?1 AND ?2");
				sqlite3_bind_int64(st, 1, lib_book_id(ig, 0) + (int64_t)want);
				sqlite3_bind_int64(st, 2, lib_book_id(ig, 0xffffffffU));
				r = step_done(s, st, e);
			} else {
				int node = c->igs[k].node;

				r = insert_books(s, ig, have, want,
						 s->node_offline[node] ? BOOK_OFFLINE : BOOK_FREE, e);
			}
			if (r < 0) {
				free(old);
				goto fail;
			}
			if (k < 0) {
				st = lib_stmt(s, "DELETE FROM igs WHERE ig = ?1");
				sqlite3_bind_int64(st, 1, ig);
			} else {
				st = lib_stmt(s, "UPDATE igs SET books = ?2 WHERE ig = ?1");
				sqlite3_bind_int64(st, 1, ig);
				sqlite3_bind_int64(st, 2, want);
			}
			r = step_done(s, st, e);
			if (r == 0 && k >= 0)
				r = refresh_free(s, ig, e);
			if (r < 0) {
				free(old);
				goto fail;
			}
		}
		free(old);
	}
	/* new IGs, and node assignment of all */
	for (int i = 0; i < c->nigs; i++) {
		const struct lib_ig *g = &c->igs[i];
		int state = s->node_offline[g->node] ? BOOK_OFFLINE : BOOK_FREE;
		bool existing = false;

		if (query_int(s, "SELECT count(*) FROM igs WHERE ig = ?1", g->ig, 0, 0) == 0) {
			r = insert_books(s, g->ig, 0, g->books, state, e);
			if (r < 0)
				goto fail;
			st = lib_stmt(s, "INSERT INTO igs(ig, node, books, free) VALUES (?1, ?2, ?3, ?4)");
			if (!st)
				goto sqlfail;
			sqlite3_bind_int64(st, 1, g->ig);
			sqlite3_bind_text(st, 2, c->nodes[g->node].name, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, g->books);
			sqlite3_bind_int64(st, 4, state == BOOK_FREE ? (int64_t)g->books : 0);
		} else {
			existing = true;
			st = lib_stmt(s, "UPDATE igs SET node = ?2 WHERE ig = ?1 AND node <> ?2");
			if (!st)
				goto sqlfail;
			sqlite3_bind_int64(st, 1, g->ig);
			sqlite3_bind_text(st, 2, c->nodes[g->node].name, -1, SQLITE_STATIC);
		}
		r = step_done(s, st, e);
		if (r < 0)
			goto fail;
		if (existing && sqlite3_changes(s->db)) {
			/* a module moved to another node: its free books are not known zero */
			st = lib_stmt(s, "UPDATE books SET zeroed = 0 WHERE state = 0"
				      " AND id BETWEEN ?1 AND ?2 AND zeroed <> 0");
			if (!st)
				goto sqlfail;
			sqlite3_bind_int64(st, 1, lib_book_id(g->ig, 0));
			sqlite3_bind_int64(st, 2, lib_book_id(g->ig, 0xffffffffU));
			r = step_done(s, st, e);
			if (r < 0)
				goto fail;
		}
	}
	if (lib_store_commit(s) < 0)
		goto sqlfail;
	return 0;
sqlfail:
	r = lib_sql_fail(s, e);
fail:
	lib_store_rollback(s);
	return r;
}

int lib_store_open(const char *path, const struct lib_config *cfg, bool create,
		   struct lib_store **out, struct lib_err *e)
{
	struct lib_store *s;
	int64_t ver;
	int r, flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;

	s = calloc(1, sizeof(*s));
	if (!s)
		return lib_fail(e, ENOMEM, "out of memory");
	s->cfg = cfg;
	if (cfg) {
		s->node_offline = calloc(cfg->nnodes + 1, 1);
		s->ig_changed = calloc(cfg->nigs + 1, sizeof(*s->ig_changed));
		if (!s->node_offline || !s->ig_changed) {
			free(s->node_offline);
			free(s->ig_changed);
			free(s);
			return lib_fail(e, ENOMEM, "out of memory");
		}
	}
	if (RAND_bytes((unsigned char *)&s->rand_state, sizeof(s->rand_state)) != 1 ||
	    !s->rand_state)
		s->rand_state = (uint64_t)time(NULL) | 1;
	if (RAND_bytes((unsigned char *)&s->instance, sizeof(s->instance)) != 1 || !s->instance)
		s->instance = lib_random(s) | 1;
	if (create)
		flags |= SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(path, &s->db, flags, lib_wal_vfs()) != SQLITE_OK) {
		r = lib_fail(e, errno == ENOENT ? ENOENT : EIO, "%s: cannot open database: %s",
			     path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 0);
	sqlite3_busy_timeout(s->db, 5000);
	r = exec(s, "PRAGMA journal_mode = WAL", e);
	if (r < 0)
		goto fail;
	r = exec(s, cfg && !cfg->sync_full ? "PRAGMA synchronous = NORMAL" :
		 "PRAGMA synchronous = FULL", e);
	if (r < 0)
		goto fail;
	/*
	 * SQLite's auto-checkpoint on this connection (the tools' default; the
	 * daemon moves checkpoints to a thread, lib_store_checkpointer()).
	 */
	r = exec(s, "PRAGMA cache_size = -40960; PRAGMA temp_store = MEMORY;"
		 " PRAGMA wal_autocheckpoint = 256;", e);
	if (r < 0)
		goto fail;
	/* create or migrate in one transaction: a catalogue is wholly one version */
	r = exec(s, "BEGIN IMMEDIATE", e);
	if (r < 0)
		goto fail;
	ver = query_int(s, "PRAGMA user_version", 0, 0, -1);
	if (ver == 0) {
		if (!create) {
			r = lib_fail(e, ENOENT, "%s: not a librarian catalogue (empty)", path);
			goto rollback;
		}
		r = exec(s, schema_sql, e);
		if (!r)
			r = exec(s, "PRAGMA user_version = " STR(LIB_SCHEMA_VERSION), e);
	} else if (ver == 1) {
		/* 1 -> 2: no book's content is known yet */
		r = exec(s, "ALTER TABLE books ADD COLUMN zeroed INTEGER NOT NULL DEFAULT 0;"
			 " PRAGMA user_version = 2", e);
		s->upgraded_from = 1;
	} else if (ver > LIB_SCHEMA_VERSION) {
		r = lib_fail(e, EPROTO,
			     "%s: catalogue schema version %lld is newer than this librarian's (%d): it was written by a newer librarian; run that one (the catalogue was not changed)",
			     path, (long long)ver, LIB_SCHEMA_VERSION);
	} else if (ver != LIB_SCHEMA_VERSION) {
		r = lib_fail(e, EPROTO,
			     "%s: catalogue schema version %lld is not supported (this librarian knows versions 1 to %d)",
			     path, (long long)ver, LIB_SCHEMA_VERSION);
	}
	if (r < 0)
		goto rollback;
	r = exec(s, "COMMIT", e);
	if (r < 0)
		goto rollback;
	*out = s;
	return 0;
rollback:
	lib_store_rollback(s);
fail:
	lib_store_close(s);
	return r;
}

/*
 * Background checkpoints (daemon only). A checkpoint copies the WAL's pages
 * into the database file and syncs it: with a million books the pages a few
 * hundred requests touch are scattered, and done on the request path every
 * few requests (SQLite's auto-checkpoint) this was the largest cost of a
 * request and all of its tail latency. Here a thread with its own connection
 * runs PASSIVE checkpoints, which never block the serving connection; after
 * a complete one, the next write transaction starts the WAL over from its
 * beginning. Under a steady stream of writes the thread's checkpoint is
 * never complete (frames arrive while it syncs), so once the WAL reaches
 * CKPT_INLINE_FRAMES the serving connection, which no write can overtake,
 * copies what the thread has not yet copied: a small remainder, which
 * bounds the WAL.
 */
#define CKPT_FRAMES 4000	/* wake the thread at this many WAL frames */
#define CKPT_INLINE_FRAMES 12000	/* ~48 MiB: finish on the request path */

struct lib_ckpt {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	sqlite3 *db;
	bool want, stop;
};

static void *ckpt_main(void *arg)
{
	struct lib_ckpt *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->want && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stop)
			break;
		c->want = false;
		pthread_mutex_unlock(&c->lock);
		sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int ckpt_wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct lib_ckpt *c = arg;

	if (frames >= CKPT_INLINE_FRAMES) {
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	} else if (frames >= CKPT_FRAMES) {
		pthread_mutex_lock(&c->lock);
		c->want = true;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
	}
	return SQLITE_OK;
}

static void ckpt_free(struct lib_ckpt *c)
{
	sqlite3_close(c->db);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int lib_store_checkpointer(struct lib_store *s, bool on, struct lib_err *e)
{
	struct lib_ckpt *c = s->ckpt;
	const char *path;
	int r;

	if (!on) {
		if (!c)
			return 0;
		sqlite3_wal_autocheckpoint(s->db, 256);	/* replaces the hook */
		pthread_mutex_lock(&c->lock);
		c->stop = true;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
		ckpt_free(c);
		s->ckpt = NULL;
		return 0;
	}
	if (c)
		return 0;
	/*
	 * With synchronous = FULL every commit already waits for an fsync of
	 * the WAL, and a checkpoint's fsync of the database running beside it
	 * delays those further (measured: 623 -> 304 cycles/s at 40,000 books):
	 * there the request path keeps SQLite's auto-checkpoint.
	 */
	if (!s->cfg || s->cfg->sync_full)
		return 0;
	path = sqlite3_db_filename(s->db, "main");
	c = calloc(1, sizeof(*c));
	if (!c)
		return lib_fail(e, ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    lib_wal_vfs()) != SQLITE_OK ||
	    sqlite3_exec(c->db, s->cfg && !s->cfg->sync_full ? "PRAGMA synchronous = NORMAL" :
			 "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK) {
		r = lib_fail(e, EIO, "%s: cannot open a checkpoint connection: %s", path,
			     c->db ? sqlite3_errmsg(c->db) : "out of memory");
		ckpt_free(c);
		return r;
	}
	r = pthread_create(&c->thread, NULL, ckpt_main, c);
	if (r) {
		ckpt_free(c);
		return lib_fail(e, r, "cannot start the checkpoint thread: %s", strerror(r));
	}
	s->ckpt = c;
	sqlite3_wal_hook(s->db, ckpt_wal_hook, c);
	return 0;
}

void lib_store_close(struct lib_store *s)
{
	if (!s)
		return;
	lib_store_checkpointer(s, false, NULL);
	for (int i = 0; i < s->nst; i++)
		sqlite3_finalize(s->st[i]);
	if (s->db)
		sqlite3_close(s->db);
	free(s->node_offline);
	free(s->ig_changed);
	free(s);
}

/* What a FREE book of config IG k holds may have changed (see lib_store). */
void lib_store_ig_changed(struct lib_store *s, int k)
{
	if (s->ig_changed && k >= 0 && k < s->cfg->nigs)
		s->ig_changed[k] = ++s->changes;
}

/*
 * For a backup copy: a catalogue restored from it can be older than the
 * fabric, and a book FREE in the copy may have been allocated and written
 * after the copy was taken. The copy forgets which FREE books were known zero
 * (INUSE books' flags are never read again: they are cleared when freed).
 */
int lib_store_forget_zeroed(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t ver = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (ver < 2)
		return ver < 0 ? -EIO : 0;
	return sqlite3_exec(db, "UPDATE books SET zeroed = 0 WHERE state = 0 AND zeroed <> 0",
			    NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
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
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE state NOT IN (0, 1, 2, 3)", 1 },
	{ "INUSE book not on exactly one shelf",
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE (state = 1) <> (shelf IS NOT NULL)"
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
	  "SELECT g.ig, g.free, (SELECT count(*) FROM books b WHERE b.state = 0 AND b.id BETWEEN g.ig << 32 AND (g.ig << 32) + 4294967295)"
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
	  "SELECT id >> 32, id & 4294967295, state FROM books WHERE zeroed <> 0 AND state IN (2, 3)",
	  2 },
};

int lib_store_check(sqlite3 *db, FILE *rep)
{
	sqlite3_stmt *st;
	int64_t ver = -1;
	int bad = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			ver = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (ver < 0) {
		fprintf(rep, "cannot read the schema version: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	if (ver < 1 || ver > LIB_SCHEMA_VERSION) {
		fprintf(rep, "catalogue schema version %lld is not supported (this librarian knows versions 1 to %d)\n",
			(long long)ver, LIB_SCHEMA_VERSION);
		return 1;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);

			if (strcmp(t, "ok")) {
				fprintf(rep, "integrity: %s\n", t);
				bad++;
			}
		}
		sqlite3_finalize(st);
	} else {
		fprintf(rep, "cannot run integrity_check: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int n = 0;

		if (checks[i].version > ver)
			continue;
		if (sqlite3_prepare_v2(db, checks[i].sql, -1, &st, NULL) != SQLITE_OK) {
			fprintf(rep, "cannot check '%s': %s\n", checks[i].what, sqlite3_errmsg(db));
			bad++;
			continue;
		}
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (n++ < 10)
				fprintf(rep, "%s: %lld %lld %lld\n", checks[i].what,
					(long long)sqlite3_column_int64(st, 0),
					(long long)sqlite3_column_int64(st, 1),
					(long long)sqlite3_column_int64(st, 2));
		}
		if (n > 10)
			fprintf(rep, "%s: ... %d in all\n", checks[i].what, n);
		bad += n;
		sqlite3_finalize(st);
	}
	return bad;
}
