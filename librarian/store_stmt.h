/* SPDX-License-Identifier: GPL-2.0 */
/* A prepared statement of either store and what the store*.c files do with it. */
#ifndef LIB_STORE_STMT_H
#define LIB_STORE_STMT_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "store_pg_io.h"
#include "store_sql.h"

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

#endif
