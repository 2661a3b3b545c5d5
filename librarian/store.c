// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue's statements and transactions: SQL with book states written
 * in, the statement cache, running one statement or many, a transaction's
 * control on either store. The tables' statements are in store_<table>.c;
 * opening a catalogue, its schema and migrations in store_open.c.
 *
 * Free and zombie books have partial indexes, so picking N free books from
 * an IG is a range scan of N index entries, whatever the size of the
 * catalogue. SQLite uses a partial index only for a query that names the
 * same state as a constant, which is why statements name book states
 * (BOOK_FREE) and lib_stmt() writes their values in, rather than binding them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

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
		return lib_pg_fail(s->pg, e);
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
		st.pg = lib_pg_prepare(s->pg, sql);
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
	if (st->pg && lib_pg_run_many(st->pg, st, n, bind, arg, changes, NULL) < 0)
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
	return lib_pg_defer(st->pg) < 0 ? lib_sql_fail(s, e) : 0;
}

int lib_stmt_run_expect(struct lib_store *s, lib_st *st, int want, struct lib_err *e)
{
	int r;

	if (st && st->pg)
		return lib_pg_defer_expect(st->pg, want) < 0 ? lib_sql_fail(s, e) : 0;
	r = lib_stmt_run(s, st, e);
	if (r == 0 && lib_changes(s) != want) {
		s->mismatch = true;
		r = lib_fail(e, EIO, "a write changed %d rows where it had to change %d",
			     lib_changes(s), want);
	}
	return r;
}

bool lib_store_mismatch(struct lib_store *s)
{
	return s->pg ? lib_pg_mismatch(s->pg, false) : s->mismatch;
}

int lib_store_flush(struct lib_store *s, struct lib_err *e)
{
	return s->pg && lib_pg_expecting(s->pg) && lib_pg_flush(s->pg) < 0 ? lib_sql_fail(s, e) : 0;
}

int lib_stmt_query_many(struct lib_store *s, lib_st *st, int n, lib_bind_fn *bind,
			lib_run_row_fn *row, void *arg)
{
	int rc = LIB_DONE, r = 0;

	if (!st)
		return -EIO;
	if (st->pg)
		return lib_pg_run_many(st->pg, st, n, bind, arg, NULL, row);
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
		return lib_pg_exec(s->pg, sql);
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
 * While the catalogue is prepared (s->prepare_ttl_ms), the row is renewed
 * first in the same transaction: a preparation longer than the row's ttl (a
 * big fabric's books made at the first start) serves nobody and commits if
 * no standby took the row meanwhile; the renewal's row lock orders it
 * against a takeover, which either came first (the epoch moved: the check
 * fails) or finds the row renewed.
 */
int lib_store_commit(struct lib_store *s)
{
	char sql[256];
	int o = 0;

	if (!s->pg || !s->leader)
		return control(s, "COMMIT");
	if (s->prepare_ttl_ms > 0)
		o = snprintf(sql, sizeof(sql),
			     "UPDATE leader SET expiry = clock_timestamp() + %d *"
			     " interval '1 millisecond' WHERE one = 1 AND epoch = %lld; ",
			     s->prepare_ttl_ms, (long long)s->epoch);
	snprintf(sql + o, sizeof(sql) - o, "SELECT lfs_leader_check(%lld, true); COMMIT",
		 (long long)s->epoch);
	return control(s, sql);
}

void lib_store_rollback(struct lib_store *s)
{
	lib_store_forget(s);
	if (lib_store_in_transaction(s))
		control(s, "ROLLBACK");
}

bool lib_store_in_transaction(struct lib_store *s)
{
	return s->pg ? lib_pg_in_transaction(s->pg) : !sqlite3_get_autocommit(s->db);
}

int lib_store_savepoint(struct lib_store *s, struct lib_err *e)
{
	s->mismatch = false;
	if (s->pg)
		lib_pg_mismatch(s->pg, true);
	if (control(s, "SAVEPOINT req") < 0)
		return lib_sql_fail(s, e);
	return 0;
}

int lib_store_release(struct lib_store *s, bool undo, struct lib_err *e)
{
	if (undo) {
		lib_store_forget(s);
		return control(s, "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req");
	}
	/* a write that must change a number of rows is checked before the request is released */
	if (s->pg && lib_pg_expecting(s->pg) && lib_pg_flush(s->pg) < 0) {
		int r = lib_sql_fail(s, e);

		lib_store_forget(s);
		control(s, "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req");
		return r;
	}
	if (control(s, "RELEASE SAVEPOINT req") < 0) {
		/* PostgreSQL: a write that waited for the RELEASE failed; the request is undone */
		int r = lib_sql_fail(s, e);

		if (s->pg)
			control(s, "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req");
		return r;
	}
	return 0;
}

void lib_store_db_stats(struct lib_store *s, struct lib_db_stats *out)
{
	int hi;

	memset(out, 0, sizeof(*out));
	if (!s->db) {
		out->round_trips = lib_pg_round_trips(s->pg);
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

void lib_store_forget(struct lib_store *s)
{
	s->igs_known = false;
	s->next_shelf = 0;
}
