// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue's connection: schema and its migration, the statement cache,
 * transactions. The tables' statements are in store_<table>.c.
 *
 * Free and zombie books have partial indexes, so picking N free books from
 * an IG is a range scan of N index entries, whatever the size of the
 * catalogue. SQLite uses a partial index only for a query that names the
 * same state as a constant, which is why statements name book states
 * (BOOK_FREE) and lib_stmt() writes their values in, rather than binding them.
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
 * 3 adds igs.zero, shelves.tenant and the access table (lfs.access).
 * lib_store_open() migrates an older catalogue in one transaction.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "store.h"

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

/* The names statements use for enum lib_book_state. */
static const struct {
	const char *name;
	enum lib_book_state state;
} book_states[] = {
	{ "BOOK_FREE", BOOK_FREE },
	{ "BOOK_INUSE", BOOK_INUSE },
	{ "BOOK_ZOMBIE", BOOK_ZOMBIE },
	{ "BOOK_OFFLINE", BOOK_OFFLINE },
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The value of the book state named by the identifier at p (n bytes), or -1. */
static int book_state_value(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof(book_states) / sizeof(book_states[0]); i++)
		if (strlen(book_states[i].name) == n && !memcmp(p, book_states[i].name, n))
			return book_states[i].state;
	return -1;
}

char *lib_sql_expand(const char *sql)
{
	size_t len = 2 * strlen(sql) + 1, o = 0;
	char *out = malloc(len);
	const char *p = sql;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = 0;
		int v;

		if (*p == '\'') {
			/* a string literal is copied as it is, up to its closing quote */
			const char *q = strchr(p + 1, '\'');

			n = q ? (size_t)(q - p) + 1 : strlen(p);
		} else if (ident_char(*p)) {
			while (ident_char(p[n]))
				n++;
			v = book_state_value(p, n);
			if (v >= 0) {
				o += snprintf(out + o, len - o, "%d", v);
				p += n;
				continue;
			}
		} else {
			n = 1;
		}
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = 0;
	return out;
}

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
	if (!s->db)
		return lib_pg_fail(s, e);
	int rc = sqlite3_errcode(s->db);
	int err = (rc == SQLITE_FULL) ? ENOSPC : (rc == SQLITE_BUSY) ? EBUSY : EIO;

	return lib_fail(e, err, "database error: %s", sqlite3_errmsg(s->db));
}

lib_st *lib_stmt(struct lib_store *s, const char *sql)
{
	lib_st st = { 0 }, *out;
	char *text;
	int i, rc;

	for (i = 0; i < s->nst; i++) {
		if (s->sql[i] == sql) {
			if (s->st[i].sq) {
				sqlite3_reset(s->st[i].sq);
				sqlite3_clear_bindings(s->st[i].sq);
			} else {
				lib_pg_reset(s->st[i].pg);
			}
			return &s->st[i];
		}
	}
	if (s->pg) {
		st.pg = lib_pg_prepare(s, sql);
		if (!st.pg)
			return NULL;
	} else {
		text = lib_sql_expand(sql);
		if (!text)
			return NULL;
		rc = sqlite3_prepare_v3(s->db, text, -1, SQLITE_PREPARE_PERSISTENT, &st.sq, NULL);
		free(text);
		if (rc != SQLITE_OK)
			return NULL;
	}
	if (s->nst < LIB_STMT_CACHE) {
		s->sql[s->nst] = sql;
		s->st[s->nst] = st;
		return &s->st[s->nst++];
	}
	/* else: leaks one statement per call; the cache is sized for every call site */
	out = malloc(sizeof(*out));
	if (out)
		*out = st;
	return out;
}

int lib_stmt_run(struct lib_store *s, lib_st *st, struct lib_err *e)
{
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	rc = lib_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		/* the message before the reset: PostgreSQL's is in the result */
		int r = lib_sql_fail(s, e);

		lib_reset(st);
		return r;
	}
	lib_reset(st);
	return 0;
}

int lib_stmt_run_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind, void *arg,
		      int *changes, struct lib_err *e)
{
	int r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	if (st->pg && lib_pg_run_many(st, n, bind, arg, changes, NULL) < 0)
		return lib_sql_fail(s, e);
	if (st->pg)
		return 0;
	for (int i = 0; i < n && r == 0; i++) {
		lib_reset(st);
		bind(st, i, arg);
		r = lib_stmt_run(s, st, e);
		changes[i] = r == 0 ? lib_changes(s) : 0;
	}
	return r;
}

int lib_stmt_run_later(struct lib_store *s, lib_st *st, struct lib_err *e)
{
	if (!st || !st->pg)
		return lib_stmt_run(s, st, e);
	return lib_pg_defer(st) < 0 ? lib_sql_fail(s, e) : 0;
}

int lib_stmt_query_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind,
			lib_run_row_fn *row, void *arg)
{
	int rc = LIB_DONE, r = 0;

	if (!st)
		return -EIO;
	if (st->pg)
		return lib_pg_run_many(st, n, bind, arg, NULL, row);
	for (int i = 0; i < n && r == 0; i++) {
		lib_reset(st);
		bind(st, i, arg);
		while (r == 0 && (rc = lib_step(st)) == LIB_ROW)
			r = row(arg, i, lib_col_int64(st, 0));
		if (r == 0 && rc != LIB_DONE)
			r = -EIO;
	}
	lib_reset(st);
	return r;
}

int lib_stmt_ids(struct lib_store *s, lib_st *st, lib_id_fn *fn, void *arg, struct lib_err *e)
{
	int rc = SQLITE_DONE, r = 0;

	while (r == 0 && (rc = lib_step(st)) == SQLITE_ROW)
		r = fn(arg, lib_col_int64(st, 0));
	lib_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}

int lib_stmt_counts(struct lib_store *s, lib_st *st, lib_count_fn *fn, void *arg, struct lib_err *e)
{
	int rc = SQLITE_DONE, r = 0;

	while (r == 0 && (rc = lib_step(st)) == SQLITE_ROW)
		r = fn(arg, lib_col_int64(st, 0), lib_col_int64(st, 1));
	lib_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		return lib_sql_fail(s, e);
	return r;
}

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

/*
 * SQL of a transaction's control on either store: 0 or -EIO. On SQLite a
 * single statement is a cached prepared one: sqlite3_exec() would parse it
 * again each time, and every request runs four of them (BEGIN, SAVEPOINT,
 * RELEASE, COMMIT; docs/bench-librarian.md).
 */
static int control(struct lib_store *s, const char *sql)
{
	lib_st *st;
	int rc;

	if (s->pg)
		return lib_pg_exec(s, sql);
	if (strchr(sql, ';') || !(st = lib_stmt(s, sql)))
		return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
	rc = sqlite3_step(st->sq);
	sqlite3_reset(st->sq);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -EIO;
}

int lib_store_begin(struct lib_store *s)
{
	return control(s, s->pg ? "BEGIN" : "BEGIN IMMEDIATE");
}

/*
 * A read transaction: one snapshot of the last commit (WAL), blocking no
 * writer. With the leader row, the snapshot's first read is the check of
 * the epoch, in the same round trip as the BEGIN (store_leader.c).
 */
int lib_store_begin_read(struct lib_store *s)
{
	char sql[160];

	if (s->pg && s->leader) {
		snprintf(sql, sizeof(sql),
			 "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;"
			 " SELECT lfs_leader_check(%lld, false)",
			 (long long)s->epoch);
		return control(s, sql);
	}
	if (s->pg)
		return control(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
	return control(s, "BEGIN DEFERRED");
}

/* The end of a read transaction (nothing to check: it wrote nothing). */
void lib_store_end_read(struct lib_store *s)
{
	control(s, "COMMIT");
}

/*
 * With the leader row, the check of the epoch and the COMMIT go in one round
 * trip: a failed check aborts the transaction (the caller rolls it back).
 */
int lib_store_commit(struct lib_store *s)
{
	char sql[96];

	if (!s->pg || !s->leader)
		return control(s, "COMMIT");
	snprintf(sql, sizeof(sql), "SELECT lfs_leader_check(%lld, true); COMMIT",
		 (long long)s->epoch);
	return control(s, sql);
}

void lib_store_rollback(struct lib_store *s)
{
	if (lib_store_in_transaction(s))
		control(s, "ROLLBACK");
}

bool lib_store_in_transaction(struct lib_store *s)
{
	return s->pg ? lib_pg_in_transaction(s) : !sqlite3_get_autocommit(s->db);
}

int lib_store_savepoint(struct lib_store *s, struct lib_err *e)
{
	if (control(s, "SAVEPOINT req") < 0)
		return lib_sql_fail(s, e);
	return 0;
}

int lib_store_release(struct lib_store *s, bool undo, struct lib_err *e)
{
	if (undo)
		return control(s, "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req");
	if (control(s, "RELEASE SAVEPOINT req") < 0) {
		/* PostgreSQL: a write that waited for the RELEASE failed; the request is undone */
		int r = lib_sql_fail(s, e);

		if (s->pg)
			control(s, "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req");
		return r;
	}
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
	if (r == 0)
		r = exec(s, upgrade_3_sql, e);
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
		else if (!(r = exec(s, schema_sql, e)))
			r = exec(s, upgrade_3_sql, e);
	} else if (ver == 1 || ver == 2) {
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
		r = lib_pg_open(s, lib_pg_conninfo(main), false, true, e);
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
	free(s);
}

void lib_store_db_stats(struct lib_store *s, struct lib_db_stats *out)
{
	int hi;

	memset(out, 0, sizeof(*out));
	if (!s->db) {
		out->round_trips = lib_pg_round_trips(s);
		return;
	}
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_HIT, &out->cache_hit, &hi, 0);
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &out->cache_miss, &hi, 0);
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_WRITE, &out->cache_write, &hi, 0);
	for (int i = 0; i < s->nst; i++)
		out->vm_steps += sqlite3_stmt_status(s->st[i].sq, SQLITE_STMTSTATUS_VM_STEP, 0);
}

int lib_store_stmt_stats(struct lib_store *s, lib_stmt_stat_fn *fn, void *arg)
{
	int r = 0;

	for (int i = 0; i < s->nst && r == 0; i++)
		if (s->st[i].sq)
			r = fn(arg, s->sql[i],
			       sqlite3_stmt_status(s->st[i].sq, SQLITE_STMTSTATUS_RUN, 0),
			       sqlite3_stmt_status(s->st[i].sq, SQLITE_STMTSTATUS_VM_STEP, 0));
	return r;
}

/* What a FREE book of config IG k holds may have changed (see lib_store). */
void lib_store_ig_changed(struct lib_store *s, int k)
{
	if (s->ig_changed && k >= 0 && k < s->cfg->nigs)
		s->ig_changed[k] = ++s->changes;
}
