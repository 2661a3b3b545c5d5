// SPDX-License-Identifier: GPL-2.0
/*
 * Node states (the nodes table) and what a node going offline or online does
 * to its IGs' books. The server keeps node_offline[] in memory for the
 * per-request check; the table is what survives a restart.
 */
#include <string.h>

#include "store.h"

void lib_store_node_load(struct lib_store *s)
{
	for (int i = 0; i < s->cfg->nnodes; i++) {
		sqlite3_stmt *st = lib_stmt(s, "SELECT state FROM nodes WHERE name = ?1");

		if (!st)
			return;
		sqlite3_bind_text(st, 1, s->cfg->nodes[i].name, -1, SQLITE_STATIC);
		s->node_offline[i] = sqlite3_step(st) == SQLITE_ROW &&
				     !strcmp((const char *)sqlite3_column_text(st, 0), "offline");
		sqlite3_reset(st);
	}
}

int lib_store_node_put_state(struct lib_store *s, const char *node, bool offline, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "UPDATE nodes SET state = ?2 WHERE name = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, offline ? "offline" : "online", -1, SQLITE_STATIC);
	return lib_stmt_run(s, st, e);
}

/*
 * The node may be powered off or serviced while offline and its memory lose
 * or change its contents: a book that was known zero is not any more, in
 * either direction. An offline node's IGs have no free books.
 */
int lib_store_ig_set_offline(struct lib_store *s, uint32_t ig, bool offline, struct lib_err *e)
{
	sqlite3_stmt *st = lib_stmt(s, "UPDATE books SET state = ?3, zeroed = 0 WHERE state = ?4"
				       " AND id BETWEEN ?1 AND ?2");
	int64_t free_books = 0;
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, lib_ig_first(ig));
	sqlite3_bind_int64(st, 2, lib_ig_last(ig));
	sqlite3_bind_int(st, 3, offline ? BOOK_OFFLINE : BOOK_FREE);
	sqlite3_bind_int(st, 4, offline ? BOOK_FREE : BOOK_OFFLINE);
	r = lib_stmt_run(s, st, e);
	if (r < 0)
		return r;
	if (!offline) {
		free_books = lib_store_ig_count(s, ig, BOOK_FREE, e);
		if (free_books < 0)
			return free_books;
	}
	st = lib_stmt(s, "UPDATE igs SET free = ?2 WHERE ig = ?1");
	if (!st)
		return lib_sql_fail(s, e);
	sqlite3_bind_int64(st, 1, ig);
	sqlite3_bind_int64(st, 2, free_books);
	return lib_stmt_run(s, st, e);
}
