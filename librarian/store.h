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
#include "store_pg_pipe.h"
#include "store_sql.h"

#define LIB_STMT_CACHE 128
#define LIB_PAGE_SIZE 1024 /* of a new SQLite catalogue (store.c) */
#define LIB_SCHEMA_VERSION 3 /* PRAGMA user_version of the catalogue */

/*
 * A prepared statement of either store. The store*.c files use only the
 * lib_bind_*, lib_step, lib_col_* and lib_reset calls below, so each
 * catalogue rule has one SQL text for both (in the dialect they share;
 * store_pg_stmt.c translates the few differences when it prepares one).
 */
typedef struct lib_st {
	sqlite3_stmt *sq; /* SQLite's, or NULL */
	struct lib_pgst *pg; /* PostgreSQL's (store_pg.c) */
} lib_st;

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

/* store_leader.c: the leader row (PostgreSQL). */
struct lib_leader_row {
	int64_t epoch;
	char holder[LFS_NODE_NAME_MAX + 1];
	char addresses[256];
	int64_t live_ms; /* until it expires (database clock), 0 if expired */
};
extern const char lib_pg_leader_sql[];
/* 1 and s->epoch set if taken (expired, or restart and the row names us), 0 if not. */
int lib_store_leader_take(struct lib_store *s, const char *name, const char *addresses, int ttl_ms,
			  bool restart, struct lib_leader_row *row, struct lib_err *e);
/* 1 if renewed, 0 if s->epoch is no longer the row's (deposed). */
int lib_store_leader_renew(struct lib_store *s, int ttl_ms, struct lib_err *e);
int lib_store_leader_read(struct lib_store *s, struct lib_leader_row *row, struct lib_err *e);
int lib_store_leader_release(struct lib_store *s, struct lib_err *e);

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
/* A query run n times (bound by bind()) in one round trip; each row handed to row(). */
int lib_stmt_query_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind,
			lib_run_row_fn *row, void *arg);

/* store_pg.c: a catalogue in PostgreSQL (store_pg_pipe.h, store_pg_stmt.h: its statements). */
bool lib_store_is_pg(const char *path); /* a libpq URI: postgresql:// or postgres:// */
int lib_pg_open(struct lib_store *s, const char *conninfo, bool create, bool reader,
		struct lib_err *e);
void lib_pg_close(struct lib_store *s);

static inline void lib_bind_int64(lib_st *st, int i, int64_t v)
{
	if (st->sq)
		sqlite3_bind_int64(st->sq, i, v);
	else
		lib_pg_bind_int64(st->pg, i, v);
}

/* The text is copied (PostgreSQL) or must live until the statement is reset (SQLite). */
static inline void lib_bind_text(lib_st *st, int i, const char *v)
{
	if (st->sq)
		sqlite3_bind_text(st->sq, i, v, -1, SQLITE_STATIC);
	else
		lib_pg_bind_text(st->pg, i, v);
}

/* LIB_ROW, LIB_DONE or another value: an error (lib_sql_fail() names it). */
static inline int lib_step(lib_st *st)
{
	return st->sq ? sqlite3_step(st->sq) : lib_pg_step(st->pg);
}

static inline void lib_reset(lib_st *st)
{
	if (st->sq)
		sqlite3_reset(st->sq);
	else
		lib_pg_reset(st->pg);
}

static inline int64_t lib_col_int64(lib_st *st, int i)
{
	return st->sq ? sqlite3_column_int64(st->sq, i) : lib_pg_col_int64(st->pg, i);
}

/* NULL for SQL NULL. */
static inline const char *lib_col_text(lib_st *st, int i)
{
	return st->sq ? (const char *)sqlite3_column_text(st->sq, i) : lib_pg_col_text(st->pg, i);
}

static inline bool lib_col_null(lib_st *st, int i)
{
	return st->sq ? sqlite3_column_type(st->sq, i) == SQLITE_NULL : lib_pg_col_null(st->pg, i);
}

static inline int lib_col_count(lib_st *st)
{
	return st->sq ? sqlite3_column_count(st->sq) : lib_pg_col_count(st->pg);
}

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

/* The attribute holding a shelf's size in bytes (shelf_size.c); shelf rows carry it. */
#define LIB_ATTR_SIZE "lfs.size"

/* store_shelf.c: the shelves table. */
struct lib_shelf {
	int64_t id;
	char name[LIB_OLD_NAME_MAX + 1];
	char owner[LFS_PSK_IDENTITY_MAX + 1]; /* the node (or admin) that created it */
	char tenant[LFS_NODE_NAME_MAX + 1]; /* its owner's, "" for the default tenant */
	int64_t books;
	int64_t gen;
};

/* A shelf as replies show it; the strings live until the callback returns. */
struct lib_shelf_row {
	const char *name, *uuid, *owner, *tenant;
	const char *policy; /* NULL: the configured default */
	const char *access; /* "who:level,..." (levels as numbers) or NULL */
	const char *size; /* lfs.size or NULL */
	const char *activations; /* shelf.list only: "node:mode,..." or NULL */
	int64_t ctime, mtime, books, gen;
};
typedef int lib_shelf_fn(void *arg, const struct lib_shelf_row *row);

/*
 * Whose shelves a listing shows: all (NULL), or those of a tenant ("" for
 * the default tenant) and those granted to a node or to the tenant ("@t").
 */
struct lib_shelf_filter {
	const char *tenant, *node, *tag;
};

int lib_store_shelf_find(struct lib_store *s, const char *name, struct lib_shelf *sh,
			 struct lib_err *e);
int lib_store_shelf_find_uuid(struct lib_store *s, const char *uuid, struct lib_shelf *sh,
			      struct lib_err *e);
/* Shelves whose name starts with prefix (NULL: all) that f shows (NULL: all). */
int lib_store_shelf_count(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			  int64_t *n, struct lib_err *e);
int lib_store_shelf_insert(struct lib_store *s, const char *name, const char *uuid,
			   const char *owner, const char *tenant, int64_t now, int64_t *id,
			   struct lib_err *e);
/* Shelves and books owned by a node (tenant false) or held by a tenant's shelves. */
int lib_store_usage(struct lib_store *s, bool tenant, const char *key, int64_t *shelves,
		    int64_t *books, struct lib_err *e);
int lib_store_shelf_set_books(struct lib_store *s, int64_t id, int64_t books, int64_t now,
			      struct lib_err *e);
int lib_store_shelf_rename(struct lib_store *s, int64_t id, const char *name, int64_t now,
			   struct lib_err *e);
/* The shelf, its attributes and activations (its books are released first). */
int lib_store_shelf_delete(struct lib_store *s, int64_t id, struct lib_err *e);
int lib_store_shelf_show(struct lib_store *s, int64_t id, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e);
int lib_store_shelf_list(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			 int64_t offset, int64_t limit, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e);

/* store_access.c: the access table (lfs.access): grants of a shelf to nodes and tenants. */
typedef int lib_grant_fn(void *arg, const char *who, int level);

/* The highest level granted to who1 or who2 (either may be NULL), ACC_NONE if none. */
int lib_store_access_level(struct lib_store *s, int64_t shelf, const char *who1, const char *who2,
			   int *level, struct lib_err *e);
int lib_store_access_put(struct lib_store *s, int64_t shelf, const char *who, int level,
			 struct lib_err *e);
/* Every grant of the shelf removed: how many there were. */
int lib_store_access_clear(struct lib_store *s, int64_t shelf, struct lib_err *e);
int lib_store_access_each(struct lib_store *s, int64_t shelf, lib_grant_fn *fn, void *arg,
			  struct lib_err *e);

/* store_attr.c: the attrs table. */
typedef int lib_attr_fn(void *arg, const char *key, const char *value);

int lib_store_attr_get(struct lib_store *s, int64_t shelf, const char *key, char *buf, size_t len,
		       struct lib_err *e);
/* Three attributes in one statement: bit k of the result set if key[k] is there (val[k]). */
int lib_store_attr_get3(struct lib_store *s, int64_t shelf, const char *const key[3], char *val[3],
			size_t len, struct lib_err *e);
int lib_store_attr_put(struct lib_store *s, int64_t shelf, const char *key, const char *value,
		       struct lib_err *e);
int lib_store_attr_delete(struct lib_store *s, int64_t shelf, const char *key, struct lib_err *e);
/* User attributes (not lfs.*) of the shelf, and whether key is one of them. */
int lib_store_attr_user_count(struct lib_store *s, int64_t shelf, const char *key, int *n,
			      bool *has, struct lib_err *e);
int lib_store_attr_each(struct lib_store *s, int64_t shelf, lib_attr_fn *fn, void *arg,
			struct lib_err *e);

/* store_activation.c: the activations table. */
struct lib_activation {
	const char *shelf, *uuid; /* activations_of_node only */
	const char *node, *mode;
	int64_t since;
};
typedef int lib_activation_fn(void *arg, const struct lib_activation *a);

int lib_store_activations_of_shelf(struct lib_store *s, int64_t shelf, lib_activation_fn *fn,
				   void *arg, struct lib_err *e);
int lib_store_activations_of_node(struct lib_store *s, const char *node, lib_activation_fn *fn,
				  void *arg, struct lib_err *e);
/*
 * Activations of the shelf by nodes other than node (NULL: all): their
 * count, the first one's holder and mode.
 */
int lib_store_activation_others(struct lib_store *s, int64_t shelf, const char *node, char *holder,
				size_t hlen, char *mode, size_t mlen, struct lib_err *e);
int lib_store_activation_put(struct lib_store *s, int64_t shelf, const char *node, const char *mode,
			     int64_t since, struct lib_err *e);
/* Returns 1 if there was one, 0 if not. */
int lib_store_activation_delete(struct lib_store *s, int64_t shelf, const char *node,
				struct lib_err *e);
int lib_store_activations_end_node(struct lib_store *s, const char *node, struct lib_err *e);

/* store_books.c: the books of shelves, allocation picks, per-IG counts. */
struct lib_counts {
	int64_t free, zero, zombie, inuse, shelves, activations;
};

int lib_store_counts(struct lib_store *s, struct lib_counts *out, struct lib_err *e);
/* The shelf's books in order, from position offset. */
int lib_store_shelf_books(struct lib_store *s, int64_t shelf, int64_t offset, int64_t limit,
			  lib_id_fn *fn, void *arg, struct lib_err *e);
/* Books of the shelf per IG (key: IG number). */
int lib_store_shelf_igs(struct lib_store *s, int64_t shelf, lib_count_fn *fn, void *arg,
			struct lib_err *e);
/* The shelf's books at position keep and beyond become ZOMBIE: their count. */
int64_t lib_store_shelf_release(struct lib_store *s, int64_t shelf, int64_t keep,
				struct lib_err *e);
/* One pick: up to n books of [lo, hi] into ids; got says how many. */
struct lib_pick {
	int64_t lo, hi, n, got;
	int64_t *ids;
};
/*
 * Each q[i]: up to n FREE, known-zero books of [lo, hi] nearest to lo (or
 * to hi if desc), nearest first. One statement, one round trip: 0 or -EIO.
 */
int lib_store_book_pick_many(struct lib_store *s, struct lib_pick *q, int n, bool desc);
/*
 * Books ids[0..n) onto the shelf at seq, seq + 1, ...: EIO unless each was
 * FREE, known zero and unowned. One round trip on PostgreSQL.
 */
int lib_store_books_take(struct lib_store *s, const int64_t *ids, int64_t n, int64_t shelf,
			 int64_t seq, struct lib_err *e);
/* Each IG's number, FREE books and FREE books known zero. */
typedef int lib_ig_fn(void *arg, int64_t ig, int64_t free, int64_t zero);
int lib_store_igs_each(struct lib_store *s, lib_ig_fn *fn, void *arg, struct lib_err *e);
int lib_store_ig_free_add(struct lib_store *s, uint32_t ig, int64_t dfree, int64_t dzero,
			  struct lib_err *e);
int lib_store_ig_recount(struct lib_store *s, uint32_t ig, struct lib_err *e);
/* Books of the IG in state st (BOOK_FREE or BOOK_ZOMBIE). */
int64_t lib_store_ig_count(struct lib_store *s, uint32_t ig, enum lib_book_state st,
			   struct lib_err *e);

/* store_zero.c: zombies and known-zero books (books.zeroed). */
int lib_store_zombies(struct lib_store *s, uint32_t ig, int64_t limit, lib_id_fn *fn, void *arg,
		      struct lib_err *e);
/* A ZOMBIE book its node zeroed: FREE and known zero, or OFFLINE. 1 if it was ZOMBIE. */
int lib_store_book_zeroed(struct lib_store *s, int64_t id, bool offline, struct lib_err *e);
/* The same for ids[0..n) in one round trip: changed[i] 1 if book i was ZOMBIE, else 0. */
int lib_store_books_zeroed(struct lib_store *s, const int64_t *ids, const bool *offline, int n,
			   int *changed, struct lib_err *e);
/* FREE books not known zero of the IG with ids from 'from', lowest first. */
int lib_store_unknown(struct lib_store *s, uint32_t ig, int64_t from, int64_t limit, lib_id_fn *fn,
		      void *arg, struct lib_err *e);
/* A FREE book not known zero that read as zeroes: 1 if it was marked. */
int lib_store_book_checked(struct lib_store *s, int64_t id, struct lib_err *e);
/* Up to limit FREE books not known zero of the IG become ZOMBIE: how many did. */
int64_t lib_store_scrub(struct lib_store *s, uint32_t ig, int64_t limit, struct lib_err *e);
/* Whether the IG has FREE books not known zero: 1, 0 or -errno. */
int lib_store_has_unknown(struct lib_store *s, uint32_t ig, struct lib_err *e);

/* store_node.c: node states and what they do to the books. */
/* The IG's FREE books become OFFLINE (or back), no longer known zero; igs.free follows. */
int lib_store_ig_set_offline(struct lib_store *s, uint32_t ig, bool offline, struct lib_err *e);
int lib_store_node_put_state(struct lib_store *s, const char *node, enum lib_node_state st,
			     struct lib_err *e);
/* node_state[] from the nodes table (at start, after a lost transaction). */
void lib_store_node_load(struct lib_store *s);

#endif
