// SPDX-License-Identifier: GPL-2.0
/*
 * Make the catalogue match the configured fabric at start, in one
 * transaction: nodes, the book size, the fabric's UUID, each IG's books (new
 * IGs and grown ones get books; an IG that is gone or smaller loses its
 * books, unless one of them is allocated or waiting to be zeroed: then the
 * start is refused) and each shelf's tenant (its owner's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "store.h"

static int64_t query_int(struct lib_store *s, const char *sql, int64_t a, int64_t b, int64_t dflt)
{
	lib_st *st = lib_stmt(s, sql);
	int64_t v = dflt;

	if (!st)
		return dflt;
	lib_bind_int64(st, 1, a);
	lib_bind_int64(st, 2, b);
	if (lib_step(st) == LIB_ROW && !lib_col_null(st, 0))
		v = lib_col_int64(st, 0);
	lib_reset(st);
	return v;
}

/*
 * New books: what they hold is unknown (zeroed 0), unless the configuration
 * says new memory reads as zeroes (new_books = "zero") and they are FREE.
 */
static int insert_books(struct lib_store *s, uint32_t ig, uint64_t from, uint64_t to, int state,
			struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s,
		"WITH RECURSIVE c(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ?2)"
		" INSERT INTO books(id, state, zeroed) SELECT (?3 << 32) + x, ?4, ?5 FROM c");

	if (from >= to)
		return 0;
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, from);
	lib_bind_int64(st, 2, to);
	lib_bind_int64(st, 3, ig);
	lib_bind_int64(st, 4, state);
	lib_bind_int64(st, 5, state == BOOK_FREE && s->cfg->new_books_zero);
	return lib_stmt_run(s, st, e);
}

/* Books of an IG that are INUSE or ZOMBIE, at or beyond index 'from'. */
static int64_t busy_books(struct lib_store *s, uint32_t ig, uint64_t from)
{
	return query_int(s,
			 "SELECT count(*) FROM books WHERE id BETWEEN ?1 AND ?2"
			 " AND state IN (BOOK_INUSE, BOOK_ZOMBIE)",
			 lib_ig_first(ig) + (int64_t)from, lib_ig_last(ig), -1);
}

/* The IG's books from index 'from' on leave the catalogue, with their bad ranges. */
static int drop_books(struct lib_store *s, uint32_t ig, uint64_t from, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "DELETE FROM books WHERE id BETWEEN ?1 AND ?2");
	lib_st *bad = lib_stmt(s, "DELETE FROM bad WHERE book BETWEEN ?1 AND ?2");
	int r;

	if (!st || !bad)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig) + (int64_t)from);
	lib_bind_int64(st, 2, lib_ig_last(ig));
	r = lib_stmt_run(s, st, e);
	if (r < 0)
		return r;
	lib_bind_int64(bad, 1, lib_ig_first(ig) + (int64_t)from);
	lib_bind_int64(bad, 2, lib_ig_last(ig));
	return lib_stmt_run(s, bad, e);
}

/* The catalogue's book size is fixed: recorded the first time, checked after. */
static int sync_book_size(struct lib_store *s, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	int64_t bs = query_int(s, "SELECT value FROM meta WHERE key = 'book_size'", 0, 0, 0);
	lib_st *st;

	if (bs && (uint64_t)bs != c->book_size)
		return lib_fail(
			e, EINVAL,
			"%s: book_size %llu differs from the catalogue's %lld; the book size of an existing catalogue cannot change",
			c->path, (unsigned long long)c->book_size, (long long)bs);
	st = lib_stmt(s, "INSERT INTO meta(key, value) VALUES ('book_size', ?1)"
			 " ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, c->book_size);
	return lib_stmt_run(s, st, e);
}

static int sync_nodes(struct lib_store *s, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	lib_st *st;
	int r;

	/* nodes gone from the config must not hold activations */
	st = lib_stmt(s, "SELECT a.node, sh.name FROM activations a JOIN shelves sh"
			 " ON sh.id = a.shelf");
	if (!st)
		return lib_sql_fail(s, e);
	while (lib_step(st) == LIB_ROW) {
		const char *node = lib_col_text(st, 0);

		if (lib_config_find_node(c, node) < 0) {
			r = lib_fail(
				e, EBUSY,
				"%s: node '%s' was removed from the fabric but holds an activation of shelf '%s'; deactivate it first",
				c->path, node, lib_col_text(st, 1));
			lib_reset(st);
			return r;
		}
	}
	lib_reset(st);
	for (int i = 0; i < c->nnodes; i++) {
		st = lib_stmt(s, "INSERT INTO nodes(name) VALUES (?1) ON CONFLICT DO NOTHING");
		if (!st)
			return lib_sql_fail(s, e);
		lib_bind_text(st, 1, c->nodes[i].name);
		r = lib_stmt_run(s, st, e);
		if (r < 0)
			return r;
	}
	lib_store_node_load(s);
	return 0;
}

/* An IG of the catalogue that has 'have' books: drop it, shrink it or grow it. */
static int resize_ig(struct lib_store *s, uint32_t ig, uint64_t have, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	int k = lib_config_find_ig(c, ig);
	uint64_t want = k < 0 ? 0 : c->igs[k].books;
	lib_st *st;
	int r;

	if (want == have)
		return 0;
	if (want < have) {
		int64_t busy = busy_books(s, ig, want);

		if (busy && k < 0)
			return lib_fail(
				e, EBUSY,
				"%s: IG %u was removed from the fabric but %lld of its books are allocated or waiting to be zeroed; refusing to start",
				c->path, ig, (long long)busy);
		if (busy)
			return lib_fail(
				e, EBUSY,
				"%s: IG %u shrinks to %llu books but %lld books beyond that are allocated or waiting to be zeroed; refusing to start",
				c->path, ig, (unsigned long long)want, (long long)busy);
		r = drop_books(s, ig, want, e);
	} else {
		r = insert_books(
			s, ig, have, want,
			s->node_state[c->igs[k].node] != NODE_ONLINE ? BOOK_OFFLINE : BOOK_FREE, e);
	}
	if (r < 0)
		return r;
	if (k < 0) {
		st = lib_stmt(s, "DELETE FROM igs WHERE ig = ?1");
		if (st)
			lib_bind_int64(st, 1, ig);
		return lib_stmt_run(s, st, e);
	}
	st = lib_stmt(s, "UPDATE igs SET books = ?2 WHERE ig = ?1");
	if (st) {
		lib_bind_int64(st, 1, ig);
		lib_bind_int64(st, 2, want);
	}
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_store_ig_recount(s, ig, e);
}

/* IGs in the catalogue: keep, resize or drop each. */
static int sync_old_igs(struct lib_store *s, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT ig, books FROM igs");
	int64_t *old = NULL;
	int nold = 0, cap = 0, r = 0;

	if (!st)
		return lib_sql_fail(s, e);
	while (lib_step(st) == LIB_ROW) {
		if (nold + 2 > cap) {
			int64_t *n;

			cap = cap ? cap * 2 : 64;
			n = realloc(old, cap * sizeof(*old));
			if (!n) {
				r = lib_fail(e, ENOMEM, "out of memory");
				break;
			}
			old = n;
		}
		old[nold++] = lib_col_int64(st, 0);
		old[nold++] = lib_col_int64(st, 1);
	}
	lib_reset(st);
	for (int i = 0; i < nold && r == 0; i += 2)
		r = resize_ig(s, old[i], old[i + 1], e);
	free(old);
	return r;
}

/* A module moved to another node: its free books are not known zero. */
static int forget_moved_ig(struct lib_store *s, uint32_t ig, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "UPDATE books SET zeroed = 0 WHERE state = BOOK_FREE"
				 " AND id BETWEEN ?1 AND ?2 AND zeroed <> 0");
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, lib_ig_first(ig));
	lib_bind_int64(st, 2, lib_ig_last(ig));
	r = lib_stmt_run(s, st, e);
	return r < 0 ? r : lib_store_ig_recount(s, ig, e);
}

/* A configured IG: its books if it is new, its node in any case. */
static int sync_ig(struct lib_store *s, const struct lib_ig *g, struct lib_err *e)
{
	const char *node = s->cfg->nodes[g->node].name;
	int state = s->node_state[g->node] != NODE_ONLINE ? BOOK_OFFLINE : BOOK_FREE;
	lib_st *st;
	int r;

	if (query_int(s, "SELECT count(*) FROM igs WHERE ig = ?1", g->ig, 0, 0)) {
		st = lib_stmt(s, "UPDATE igs SET node = ?2 WHERE ig = ?1 AND node <> ?2");
		if (!st)
			return lib_sql_fail(s, e);
		lib_bind_int64(st, 1, g->ig);
		lib_bind_text(st, 2, node);
		r = lib_stmt_run(s, st, e);
		if (r == 0 && lib_changes(s))
			r = forget_moved_ig(s, g->ig, e);
		return r;
	}
	r = insert_books(s, g->ig, 0, g->books, state, e);
	if (r < 0)
		return r;
	st = lib_stmt(s,
		      "INSERT INTO igs(ig, node, books, free, zero) VALUES (?1, ?2, ?3, ?4, ?5)");
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, g->ig);
	lib_bind_text(st, 2, node);
	lib_bind_int64(st, 3, g->books);
	lib_bind_int64(st, 4, state == BOOK_FREE ? (int64_t)g->books : 0);
	lib_bind_int64(st, 5, state == BOOK_FREE && s->cfg->new_books_zero ? (int64_t)g->books : 0);
	return lib_stmt_run(s, st, e);
}

/*
 * The fabric's UUID, made once per catalogue: nodes write it into their
 * devices' on-media labels (auth returns it), so a device of another fabric
 * is never taken for one of this one.
 */
static int sync_fabric_uuid(struct lib_store *s, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT value FROM meta WHERE key = 'fabric_uuid'");
	unsigned char u[16];
	int rc;

	if (!st)
		return lib_sql_fail(s, e);
	rc = lib_step(st);
	if (rc == LIB_ROW)
		snprintf(s->fabric_uuid, sizeof(s->fabric_uuid), "%s", lib_col_text(st, 0));
	lib_reset(st);
	if (rc == LIB_ROW)
		return 0;
	if (rc != LIB_DONE)
		return lib_sql_fail(s, e);
	if (RAND_bytes(u, sizeof(u)) != 1)
		return lib_fail(e, EIO, "no random numbers for the fabric's UUID");
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(s->fabric_uuid, sizeof(s->fabric_uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	st = lib_stmt(s, "INSERT INTO meta(key, value) VALUES ('fabric_uuid', ?1)");
	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, s->fabric_uuid);
	return lib_stmt_run(s, st, e);
}

/* A shelf belongs to its owner's tenant: follow the configuration. */
static int sync_tenants(struct lib_store *s, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;

	for (int i = 0; i < c->nnodes; i++) {
		lib_st *st = lib_stmt(s, "UPDATE shelves SET tenant = ?2"
					 " WHERE owner = ?1 AND tenant <> ?2");
		int t = c->nodes[i].tenant, r;

		if (!st)
			return lib_sql_fail(s, e);
		lib_bind_text(st, 1, c->nodes[i].name);
		lib_bind_text(st, 2, t >= 0 ? c->tenants[t].name : "");
		if ((r = lib_stmt_run(s, st, e)) < 0)
			return r;
	}
	return 0;
}

int lib_store_sync_geometry(struct lib_store *s, struct lib_err *e)
{
	int r;

	lib_store_forget(s);
	if (lib_store_begin(s) < 0)
		return lib_sql_fail(s, e);
	r = sync_book_size(s, e);
	if (r == 0)
		r = sync_fabric_uuid(s, e);
	if (r == 0)
		r = sync_nodes(s, e);
	if (r == 0)
		r = sync_old_igs(s, e);
	for (int i = 0; i < s->cfg->nigs && r == 0; i++)
		r = sync_ig(s, &s->cfg->igs[i], e);
	if (r == 0)
		r = sync_tenants(s, e);
	if (r == 0 && lib_store_commit(s) < 0)
		r = lib_sql_fail(s, e);
	if (r < 0)
		lib_store_rollback(s);
	return r;
}
