/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both stores share below store.h: SQL text with book states written
 * in (store_sql.c), and the codes a statement's step answers (SQLite's).
 */
#ifndef LIB_STORE_SQL_H
#define LIB_STORE_SQL_H

#include <sqlite3.h>

#include "librarian.h"

#define LIB_ROW SQLITE_ROW
#define LIB_DONE SQLITE_DONE
#define LIB_STEP_ERROR SQLITE_ERROR

/* sql with every BOOK_* name replaced by its value (malloc'd), for one-off statements. */
char *lib_sql_expand(const char *sql);

#endif
