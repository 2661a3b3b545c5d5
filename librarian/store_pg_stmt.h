/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PostgreSQL connection and its prepared statements (store_pg_stmt.c),
 * under the store: nothing here knows struct lib_store. How statements and
 * transactions are sent: store_pg_io.h; a store opened on PostgreSQL:
 * store_pg.c (store.h).
 */
#ifndef LIB_STORE_PG_STMT_H
#define LIB_STORE_PG_STMT_H

#include <stdbool.h>
#include <stdint.h>
#include <libpq-fe.h>

#include "librarian.h"
#include "store_sql.h"

#define LIB_PG_NOT_LEADER "LF001" /* SQLSTATE of a failed check of the leader row */
#define PG_MAX_PARAMS 16
#define PG_MAX_PENDING 32
#define PG_PIPE_CHUNK 256 /* statements per pipeline: their replies fit the socket buffers */
#define PG_INT8 20
#define PG_TEXT 25
#define PG_UNREPLICATED "01000" /* a COMMIT that warned: see pg_commit_warned() */

struct lib_pg {
	PGconn *conn;
	char *conninfo;
	const char *session; /* SET ... run on every new connection */
	char sqlstate[6]; /* of the last failed lib_pg_exec() */
	int changes; /* rows of the last INSERT, UPDATE or DELETE */
	int nprepared; /* names of prepared statements: s0, s1, ... */
	int gen; /* the connection's number: 1, then one more at each reconnect */
	bool in_tx; /* a transaction began on this connection and has not ended */
	bool warned; /* the server sent a WARNING since the last statement began */
	/*
	 * Transaction control not sent yet (BEGIN, SAVEPOINT req, RELEASE
	 * SAVEPOINT req): it goes in the same round trip as the next statement
	 * (pg_pipe_*), or is dropped when nothing came between a SAVEPOINT and
	 * its RELEASE or undo. begin_pending: the BEGIN is among them, nothing
	 * of the transaction reached the server yet.
	 */
	const char *pending[PG_MAX_PENDING]; /* NULL: a statement (below) */
	struct lib_pgst *pend_st[PG_MAX_PENDING]; /* a write whose result nobody reads */
	char **pend_vals[PG_MAX_PENDING]; /* its values (copied) */
	int pend_want[PG_MAX_PENDING]; /* rows it must change (lib_pg_defer_expect), or -1 */
	int npending;
	int sent_want[PG_MAX_PENDING]; /* pend_want of the entries the last pipeline sent first */
	int nsent;
	bool mismatch; /* a write changed other than its rows (cleared by lib_pg_mismatch) */
	/* the last pipeline: a statement failed; a write changed other rows than it had to */
	bool pipe_error, pipe_mismatch;
	bool begin_pending;
	char pipe_msg[512]; /* the first error of the last pipeline, "" if none */
	/*
	 * A pipeline failed that carried an earlier request's RELEASE (its
	 * writes waited for the commit): that request cannot be told apart
	 * from the failing one, so the round's COMMIT is refused (every
	 * request of the round fails; none is acknowledged).
	 */
	bool pipe_released, poisoned;
	int64_t round_trips; /* since the connection was opened (stats: db.round_trips) */
};

struct lib_pgst {
	struct lib_pg *pg;
	char name[16];
	char *sql;
	int nparams;
	int prepared; /* the connection (lib_pg.gen) it was prepared on, 0 if none */
	unsigned int types[PG_MAX_PARAMS];
	const char *vals[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
	char *text[PG_MAX_PARAMS];
	PGresult *res;
	int row, nrows;
};

const char *lib_pg_conninfo(struct lib_pg *pg);
/* The last error as EIO naming it; EREMOTE when another librarian leads (store_leader.c). */
int lib_pg_fail(struct lib_pg *pg, struct lib_err *e);
int lib_pg_changes(struct lib_pg *pg); /* rows of the last INSERT, UPDATE or DELETE */
int64_t lib_pg_round_trips(struct lib_pg *pg); /* of the connection, since it was opened */
struct lib_pgst *lib_pg_prepare(struct lib_pg *pg, const char *sql);
void lib_pg_finalize(struct lib_pgst *p);
void lib_pg_bind_int64(struct lib_pgst *p, int i, int64_t v);
void lib_pg_bind_text(struct lib_pgst *p, int i, const char *v);
void lib_pg_reset(struct lib_pgst *p);
int64_t lib_pg_col_int64(struct lib_pgst *p, int i);
const char *lib_pg_col_text(struct lib_pgst *p, int i);
bool lib_pg_col_null(struct lib_pgst *p, int i);
int lib_pg_col_count(struct lib_pgst *p);

/* The PostgreSQL rooms' own: the connection's state, a statement made ready. */
const char *pg_message(struct lib_pg *pg);
void pg_notice(void *arg, const PGresult *r);
bool pg_broken(struct lib_pg *pg);
int pg_reconnect(struct lib_pg *pg);
int pg_ready(struct lib_pg *pg, bool begins);
bool pg_commit_warned(struct lib_pg *pg, const char *sql, int r);
int pg_exec_once(struct lib_pg *pg, const char *sql);
bool pg_prepared(struct lib_pgst *p);

#endif
