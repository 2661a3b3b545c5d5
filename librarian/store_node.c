// SPDX-License-Identifier: GPL-2.0
/*
 * Node states (the nodes table: "online", "fencing", "offline") and what a
 * node going offline or online does to its IGs' books. The server keeps
 * node_state[] in memory for the per-request check; the table is what
 * survives a restart.
 */
#include <string.h>

#include "store.h"

static const char *const state_names[] = {
	[NODE_ONLINE] = "online",
	[NODE_FENCING] = "fencing",
	[NODE_OFFLINE] = "offline",
};

void lib_store_node_load(struct lib_store *s)
{
	for (int i = 0; i < s->cfg->nnodes; i++) {
		lib_st *st = lib_stmt(s, "SELECT state FROM nodes WHERE name = ?1");
		const char *v;

		if (!st)
			return;
		lib_bind_text(st, 1, s->cfg->nodes[i].name);
		s->node_state[i] = NODE_ONLINE;
		if (lib_step(st) == LIB_ROW && (v = lib_col_text(st, 0)))
			for (int k = NODE_FENCING; k <= NODE_OFFLINE; k++)
				if (!strcmp(v, state_names[k]))
					s->node_state[i] = k;
		lib_reset(st);
	}
}

int lib_store_node_put_state(struct lib_store *s, const char *node, enum lib_node_state state,
			     struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE nodes SET state = ?2 WHERE name = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, node);
	lib_bind_text(st, 2, state_names[state]);
	return lib_stmt_run(s, st, e);
}

/*
 * The node may be powered off or serviced while offline and its memory lose
 * or change its contents: a book that was known zero is not any more, in
 * either direction, unless the configuration says that memory new to the
 * catalogue reads as zeroes (new_books = "zero"). An offline node's IGs have
 * no free books.
 */
int lib_store_ig_set_offline(struct lib_store *s, uint32_t ig, bool offline, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE books SET state = ?3, zeroed = ?5 WHERE state = ?4"
				 " AND id BETWEEN ?1 AND ?2");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	lib_bind_int64(st, 3, offline ? BOOK_OFFLINE : BOOK_FREE);
	lib_bind_int64(st, 4, offline ? BOOK_FREE : BOOK_OFFLINE);
	lib_bind_int64(st, 5, !offline && s->cfg->new_books_zero);
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_store_ig_recount(s, ig, e);
}
