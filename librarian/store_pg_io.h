/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the PostgreSQL store's statements and transactions reach the server
 * (store_pg_pipe.c; this header is included by store.h): control statements
 * and unread writes kept for the next round trip, pipelines that send them
 * with it.
 */
#ifndef LIB_STORE_PG_IO_H
#define LIB_STORE_PG_IO_H

#include "store_pg_stmt.h"

struct lib_st;
/* Binds the values of the i-th run of a statement run many times (lib_stmt_run_many). */
typedef void lib_bind_fn(struct lib_st *st, int i, void *arg);
/* A row of the i-th run: its first column; nonzero stops (lib_stmt_query_many). */
typedef int lib_run_row_fn(void *arg, int i, int64_t v);

/* A transaction's control (BEGIN, SAVEPOINT, COMMIT ...) or other SQL: 0 or -EIO. */
int lib_pg_exec(struct lib_pg *pg, const char *sql);
bool lib_pg_in_transaction(struct lib_pg *pg);
/* LIB_ROW, LIB_DONE or LIB_STEP_ERROR. */
int lib_pg_step(struct lib_pgst *p);
/* p as bound, sent with the next round trip (its result unread): 0 or -errno. */
int lib_pg_defer(struct lib_pgst *p);
/*
 * The same, and it must change want rows: if not, the round trip that sends
 * it fails (-EIO) as if it had, and lib_pg_mismatch() says so.
 */
int lib_pg_defer_expect(struct lib_pgst *p, int want);
/* Whether a waiting write must change a number of rows; whether one did not (cleared). */
bool lib_pg_expecting(struct lib_pg *pg);
bool lib_pg_mismatch(struct lib_pg *pg, bool clear);
/* The waiting entries alone, in one round trip: 0 or -EIO. */
int lib_pg_flush(struct lib_pg *pg);
/* p run n times, bound by bind(st, i, arg), in pipelines: 0 or -EIO. */
int lib_pg_run_many(struct lib_pgst *p, struct lib_st *st, int n, lib_bind_fn *bind, void *arg,
		    int *changes, lib_run_row_fn *row);
/* Forget the waiting entries from index from on. */
void pg_pending_drop(struct lib_pg *pg, int from);

#endif
