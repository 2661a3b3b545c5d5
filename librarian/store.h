/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalogue in SQLite or PostgreSQL (docs/HA.md): every SQL statement of the librarian is in a
 * store*.c file, next to the function that runs it. Functions return 0 (or
 * a count) or a negative errno; a database error fills the struct lib_err
 * with SQLite's message. "Not found" is -ENOENT (-ENODATA for attributes)
 * without a message: the caller knows what it was looking for.
 *
 * A book's id is (IG << 32) | index, so ordering by id is LZA order and an
 * IG's books are one id range. Book states are stored as enum
 * lib_book_state; SQL text names them (state = BOOK_FREE) and lib_stmt()
 * puts in their values, so a literal state never appears in a statement.
 */
#ifndef LIB_STORE_H
#define LIB_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "librarian.h"
#include "store_pg_io.h"
#include "store_sql.h"
#include "store_stmt.h"

#define LIB_STMT_CACHE 128
#define LIB_PAGE_SIZE 1024 /* of a new SQLite catalogue (store.c) */
#define LIB_SCHEMA_VERSION 4 /* PRAGMA user_version of the catalogue */

struct lib_store {
	sqlite3 *db; /* NULL for PostgreSQL */
	struct lib_pg *pg; /* the PostgreSQL connection (store_pg.c), or NULL */
	const struct lib_config *cfg;
	const char *sql[LIB_STMT_CACHE];
	lib_st st[LIB_STMT_CACHE];
	int nst;
	uint64_t rand_state;
	char *node_state; /* per config node: enum lib_node_state */
	int upgraded_from; /* schema version migrated from at open, 0 if none */
	int version; /* PostgreSQL: the schema version as opened (check does not upgrade) */
	char fabric_uuid[40]; /* meta fabric_uuid, made once per catalogue */
	struct lib_ckpt *ckpt; /* background checkpoints, daemon only */
	/*
	 * Tokens of free.unknown / free.checked (ops_books.c): every event
	 * that can change what a FREE book holds (a book of its IG allocated,
	 * its node going offline or online) stamps the IG with ++changes. A
	 * token is "instance-changes" at listing time; a report with it marks
	 * a book only if its IG has no later stamp. instance is random per
	 * process, so tokens do not survive a restart.
	 */
	uint64_t instance;
	uint8_t token_key[32]; /* random: tokens' MACs (ops_books.c) */
	uint64_t changes;
	uint64_t *ig_changed; /* per config IG */
	/*
	 * PostgreSQL with the leader row (store_leader.c): every commit (and,
	 * on the lease thread's reader, every read transaction) checks that
	 * epoch is still the row's and unexpired; 0 fails every check. SQLite:
	 * leader is false, nothing is checked.
	 */
	bool leader;
	int64_t epoch;
	/*
	 * > 0 while the catalogue is prepared (main.c, lib_serve_prepare):
	 * each commit first renews the row for that many ms, in the same
	 * transaction, if it still holds epoch (store.c).
	 */
	int prepare_ttl_ms;
	/*
	 * What the writer knows without asking (store_known.c): each config
	 * IG's free and known-zero counts (igs_known), the next shelf id (0:
	 * not known). A write that must change a number of rows and did not
	 * sets mismatch (SQLite; PostgreSQL keeps its own: lib_store_mismatch).
	 */
	int64_t *ig_free, *ig_zero;
	bool *ig_row;
	bool igs_known, mismatch;
	int64_t next_shelf, last_shelf; /* the ids this store may give (store_known.c) */
};

static inline int64_t lib_book_id(uint32_t ig, uint32_t idx)
{
	return ((int64_t)ig << 32) | idx;
}

static inline int64_t lib_ig_first(uint32_t ig)
{
	return lib_book_id(ig, 0);
}

static inline int64_t lib_ig_last(uint32_t ig)
{
	return lib_book_id(ig, 0xffffffffU);
}

/* Rows handed to a caller, one at a time; a nonzero return stops the walk. */
typedef int lib_id_fn(void *arg, int64_t id);
typedef int lib_count_fn(void *arg, int64_t key, int64_t n);

/* store.c: the connection, schema, statements and transactions. */
int lib_store_open(const char *path, const struct lib_config *cfg, bool create,
		   struct lib_store **out, struct lib_err *e);
void lib_store_close(struct lib_store *s);
int lib_store_open_reader(struct lib_store *main, struct lib_store **out, struct lib_err *e);
int lib_store_begin(struct lib_store *s);
int lib_store_begin_read(struct lib_store *s);
void lib_store_end_read(struct lib_store *s);
int lib_store_commit(struct lib_store *s);
void lib_store_rollback(struct lib_store *s);
/* Forget what the writer knew without asking (store_known.h): on any undo. */
void lib_store_forget(struct lib_store *s);
bool lib_store_in_transaction(struct lib_store *s);
/* One request inside the round's transaction: a savepoint, released or undone. */
int lib_store_savepoint(struct lib_store *s, struct lib_err *e);
int lib_store_release(struct lib_store *s, bool undo, struct lib_err *e);
int lib_sql_fail(struct lib_store *s, struct lib_err *e);
/* A cached statement for sql (compared by address); book state names expanded. */
lib_st *lib_stmt(struct lib_store *s, const char *sql);
/* Run st to its end (or first row) and reset it: 0 or -errno with e filled. */
int lib_stmt_run(struct lib_store *s, lib_st *st, struct lib_err *e);
/* Hand each row of st to fn: its first column, or its first two. */
int lib_stmt_ids(struct lib_store *s, lib_st *st, lib_id_fn *fn, void *arg, struct lib_err *e);
int lib_stmt_counts(struct lib_store *s, lib_st *st, lib_count_fn *fn, void *arg,
		    struct lib_err *e);

/*
 * st run n times, bound by bind() each time, in order; the rows each run
 * changed in changes[i]. SQLite: one after the other. PostgreSQL: in one
 * round trip (pipeline mode, per PG_PIPE_CHUNK runs). 0, or -errno with e
 * filled at the first run that failed (the runs after it did nothing).
 */
int lib_stmt_run_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind, void *arg,
		      int *changes, struct lib_err *e);
/*
 * A write whose result nobody reads (no rows, no count of changes): run now
 * on SQLite; on PostgreSQL sent with the next statement that is read, or
 * with the request's RELEASE (lib_store_release), whose round trip reports
 * its error: the request fails as if this statement had.
 */
int lib_stmt_run_later(struct lib_store *s, lib_st *st, struct lib_err *e);
/*
 * lib_stmt_run_later() for a write that must change want rows. SQLite: run
 * now, -EIO if it did not. PostgreSQL: the round trip that sends it fails
 * if it did not (the next read, lib_store_flush(), or the request's RELEASE,
 * which flushes such writes first). lib_store_mismatch() tells that failure
 * from others.
 */
int lib_stmt_run_expect(struct lib_store *s, lib_st *st, int want, struct lib_err *e);
bool lib_store_mismatch(struct lib_store *s);
/*
 * PostgreSQL: if a waiting write must change a number of rows, the writes
 * waiting sent now, in one round trip: 0 or -errno with e filled.
 */
int lib_store_flush(struct lib_store *s, struct lib_err *e);

/* A query run n times (bound by bind()) in one round trip; each row handed to row(). */
int lib_stmt_query_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind,
			lib_run_row_fn *row, void *arg);

/* store_pg.c: a catalogue in PostgreSQL (store_pg_io.h, store_pg_stmt.h: its statements). */
bool lib_store_is_pg(const char *path); /* a libpq URI: postgresql:// or postgres:// */
int lib_pg_open(struct lib_store *s, const char *conninfo, bool create, bool reader,
		struct lib_err *e);
void lib_pg_close(struct lib_store *s);

/* Rows the last INSERT, UPDATE or DELETE changed. */
static inline int lib_changes(struct lib_store *s)
{
	return s->db ? sqlite3_changes(s->db) : lib_pg_changes(s->pg);
}
uint64_t lib_random(struct lib_store *s);
void lib_store_ig_changed(struct lib_store *s, int k);

/* The serving connection's work since start: load-independent cost measures. */
struct lib_db_stats {
	int cache_hit, cache_miss, cache_write; /* page reads from cache, missed; pages written */
	int64_t vm_steps; /* virtual-machine steps of the cached statements */
	int64_t round_trips; /* PostgreSQL: round trips to the server, 0 on SQLite */
};
void lib_store_db_stats(struct lib_store *s, struct lib_db_stats *out);
/* Per cached statement (SQLite): its text, times run, VM steps; a nonzero return stops. */
typedef int lib_stmt_stat_fn(void *arg, const char *sql, int64_t runs, int64_t steps);
int lib_store_stmt_stats(struct lib_store *s, lib_stmt_stat_fn *fn, void *arg);

/* walvfs.c: the VFS that writes a commit's WAL frames in one call. */
#define LIB_WAL_VFS "lfs-wal"
const char *lib_wal_vfs(void);
void lib_wal_vfs_stats(unsigned long long *writes, unsigned long long *calls);

/* store_ckpt.c: background checkpoints (daemon only). */
int lib_store_checkpointer(struct lib_store *s, bool on, struct lib_err *e);
void lib_store_checkpoint_final(struct lib_store *s);

/* store_geometry.c: make the catalogue match the configured fabric. */
int lib_store_sync_geometry(struct lib_store *s, struct lib_err *e);

/* store_tools.c: the offline tools (check, backup). */
/* The violations found (listed in report); quick: PRAGMA quick_check, not integrity_check. */
int lib_store_check(struct lib_store *s, FILE *report, bool quick);
int lib_store_forget_zeroed(sqlite3 *db);
/* The violations found (listed in report), or -errno with msg. */
int lib_store_check_file(const char *path, FILE *report, char *msg, size_t len);
/* A checked copy of src in dest (via a temporary file), or -errno with msg. */
int lib_store_backup(const char *src, const char *dest, FILE *report, char *msg, size_t len);

/* The catalogue's tables, one store_*.c file each. */
#include "store_tables.h"

#endif
