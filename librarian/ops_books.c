// SPDX-License-Identifier: GPL-2.0
/*
 * Books and their zeroing: zombie.list and zombie.zeroed (freed books wait
 * for their node to zero them), free.scrub (FREE books of unknown content
 * sent to be zeroed), free.unknown and free.checked (such books found zero by
 * reading, with a token that voids the report if anything could have
 * changed them since the listing). docs/LIBRARIAN.md tells why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/*
 * books[i] of a request: an [ig, book] pair of the fabric (the IG checked as
 * a whole number: 2^32 is not IG 0), in one of the caller's IGs unless the
 * caller is the admin. *k is the IG's index in the configuration.
 */
static int book_ref(struct req *rq, size_t i, json_t *el, int64_t *id, int *k)
{
	const struct lib_config *c = rq->c;
	json_int_t ig, idx;
	char msg[200] = "";

	if (json_unpack(el, "[II!]", &ig, &idx) || lfs_rule_ig(ig, "IG", msg, sizeof(msg)) < 0 ||
	    idx < 0 || idx > 0xffffffffLL || (*k = lib_config_find_ig(c, ig)) < 0 ||
	    (uint64_t)idx >= c->igs[*k].books) {
		char *t = json_dumps(el, JSON_ENCODE_ANY | JSON_COMPACT);
		char b[100];
		int r = FAIL(rq, EINVAL,
			     "books[%zu] = %s is not a book of the fabric ([ig, book])%s%s", i,
			     t ? lib_shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);

		free(t);
		return r;
	}
	if (!rq->who->admin && c->igs[*k].node != rq->who->node)
		return FAIL(rq, EPERM,
			    "book [%lld, %lld] is in IG %lld of node '%s', not of node '%s'",
			    (long long)ig, (long long)idx, (long long)ig,
			    c->nodes[c->igs[*k].node].name, rq->who->name);
	*id = lib_book_id(ig, idx);
	return 0;
}

/* "books": a list of at most LIB_BOOKS_LIMIT elements (each checked by book_ref). */
static int books_arg(struct req *rq, json_t **books)
{
	*books = json_object_get(rq->args, "books");
	if (!json_is_array(*books) || json_array_size(*books) > LIB_BOOKS_LIMIT)
		return FAIL(rq, EINVAL,
			    "argument 'books' must be a list of at most %d [ig, book] pairs",
			    LIB_BOOKS_LIMIT);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The node's IG numbers in book-id order (lowest IG first); free() them. */
static uint32_t *node_igs(struct req *rq, int node)
{
	const struct lib_node *n = &rq->c->nodes[node];
	uint32_t *igs = calloc(n->nigs ? n->nigs : 1, sizeof(*igs));

	if (!igs)
		return NULL;
	for (int g = 0; g < n->nigs; g++)
		igs[g] = rq->c->igs[n->igs[g]].ig;
	qsort(igs, n->nigs, sizeof(*igs), cmp_u32);
	return igs;
}

struct book_list {
	json_t *books;
	int64_t got;
};

static int list_book(void *arg, int64_t id)
{
	struct book_list *l = arg;

	l->got++;
	return lib_append_book(l->books, id);
}

/* The caller's ZOMBIE books; the admin without "node" gets every node's. */
int lib_op_zombie_list(struct req *rq)
{
	const struct lib_node *n = NULL;
	struct book_list l = { 0 };
	int64_t limit = 4096;
	const char *name;
	int node = -1, r;

	if ((r = lib_arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_arg_str(rq, "node", false, &name)) < 0)
		return r;
	if ((name || !rq->who->admin) && (r = lib_arg_node(rq, true, &node)) < 0)
		return r;
	if (node >= 0)
		n = &rq->c->nodes[node];
	l.books = json_array();
	for (int g = 0; (n ? g < n->nigs : g < rq->c->nigs) && l.got < limit && r == 0; g++)
		r = lib_store_zombies(rq->s, rq->c->igs[n ? n->igs[g] : g].ig, limit - l.got,
				      list_book, &l, &rq->err);
	if (r < 0) {
		json_decref(l.books);
		return r;
	}
	rq->result = json_pack("{s:o,s:b}", "books", l.books, "more", l.got >= limit);
	return 0;
}

/* The books become FREE and known zero (OFFLINE if their node is offline). */
int lib_op_zombie_zeroed(struct req *rq)
{
	const struct lib_config *c = rq->c;
	int64_t *add = NULL;
	json_t *books, *el;
	size_t i;
	int r;

	if ((r = books_arg(rq, &books)) < 0)
		return r;
	add = calloc(c->nigs, sizeof(*add));
	if (!add)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;
		bool offline;

		if ((r = book_ref(rq, i, el, &id, &k)) < 0)
			goto out;
		offline = rq->s->node_offline[c->igs[k].node];
		r = lib_store_book_zeroed(rq->s, id, offline, &rq->err);
		if (r == 0)
			r = FAIL(rq, EINVAL,
				 "book [%lld, %lld] is not waiting to be zeroed (not ZOMBIE)",
				 (long long)(id >> 32), (long long)(id & 0xffffffff));
		if (r < 0)
			goto out;
		if (!offline)
			add[k]++;
	}
	for (int k = 0; k < c->nigs && r >= 0; k++)
		if (add[k])
			r = lib_store_ig_free_add(rq->s, c->igs[k].ig, add[k], &rq->err);
	if (r >= 0)
		rq->result = json_pack("{s:I}", "freed", (json_int_t)json_array_size(books));
out:
	free(add);
	return r < 0 ? r : 0;
}

/*
 * free.scrub: up to 'limit' FREE books of the node's IGs that are not known
 * zero (never reported zeroed since they became FREE: new memory, or memory
 * whose content the librarian forgot) become ZOMBIE, lowest book id first, so
 * that the node zeroes them through zombie.list/zombie.zeroed like freed
 * books. FREE books with zeroed = 1 stay. Within the request's transaction:
 * no book can be allocated and sent to scrub at once.
 */
int lib_op_free_scrub(struct req *rq)
{
	int64_t limit = 4096, got = 0;
	uint32_t *igs;
	int node, nigs, more = 0, r;

	if ((r = lib_arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_arg_node(rq, true, &node)) < 0)
		return r;
	nigs = rq->c->nodes[node].nigs;
	igs = node_igs(rq, node);
	if (!igs)
		return FAIL(rq, ENOMEM, "out of memory");
	for (int g = 0; g < nigs && !more; g++) {
		if (got < limit) {
			int64_t moved = lib_store_scrub(rq->s, igs[g], limit - got, &rq->err);

			if (moved < 0) {
				r = moved;
				break;
			}
			got += moved;
			if (got < limit)
				continue; /* this IG has no more */
		}
		/* the limit is reached: does any FREE book not known zero remain? */
		more = lib_store_has_unknown(rq->s, igs[g], &rq->err);
		if (more < 0) {
			r = more;
			break;
		}
	}
	free(igs);
	if (r < 0)
		return r;
	rq->result = json_pack("{s:I,s:b}", "books", (json_int_t)got, "more", more);
	return 0;
}

/* "after": [ig, book], listing resumes at the book after it. */
static int after_arg(struct req *rq, int64_t *from)
{
	json_t *after = json_object_get(rq->args, "after");
	json_int_t ig, book;
	char msg[200] = "";

	*from = 0;
	if (!after)
		return 0;
	if (json_unpack(after, "[II!]", &ig, &book) ||
	    lfs_rule_ig(ig, "IG", msg, sizeof(msg)) < 0 || book < 0 || book > 0xffffffffLL) {
		char *t = json_dumps(after, JSON_ENCODE_ANY | JSON_COMPACT);
		char b[100];
		int r = FAIL(rq, EINVAL, "argument 'after' = %s must be an [ig, book] pair%s%s",
			     t ? lib_shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);

		free(t);
		return r;
	}
	*from = lib_book_id((uint32_t)ig, (uint32_t)book) + 1;
	return 0;
}

/*
 * free.unknown: the node's FREE books that are not known zero, in book-id
 * order after "after" ([ig, book]), at most "limit", and a token. The node's
 * agent reads them (LFS_CMD_BOOK_CHECK writes nothing) and reports those
 * that read as zeroes with free.checked and the token. Nothing changes here.
 */
int lib_op_free_unknown(struct req *rq)
{
	struct book_list l = { 0 };
	int64_t limit = 4096, from;
	uint32_t *igs;
	char token[48];
	int node, nigs, r;

	if ((r = lib_arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_arg_node(rq, true, &node)) < 0 || (r = after_arg(rq, &from)) < 0)
		return r;
	nigs = rq->c->nodes[node].nigs;
	igs = node_igs(rq, node);
	if (!igs)
		return FAIL(rq, ENOMEM, "out of memory");
	l.books = json_array();
	for (int g = 0; g < nigs && l.got < limit && r == 0; g++)
		if (lib_ig_last(igs[g]) >= from)
			r = lib_store_unknown(rq->s, igs[g], from, limit - l.got, list_book, &l,
					      &rq->err);
	free(igs);
	if (r < 0) {
		json_decref(l.books);
		return r;
	}
	snprintf(token, sizeof(token), "%016llx-%llu", (unsigned long long)rq->s->instance,
		 (unsigned long long)rq->s->changes);
	rq->result = json_pack("{s:o,s:b,s:s}", "books", l.books, "more", l.got >= limit, "token",
			       token);
	return 0;
}

/* "token": "<16 hex digits>-<decimal>", as free.unknown gave it. */
static int token_arg(struct req *rq, unsigned long long *inst, unsigned long long *seen)
{
	const char *token;
	char b[100];
	size_t tl;
	int r, end = 0;

	if ((r = lib_arg_str(rq, "token", true, &token)) < 0)
		return r;
	tl = strlen(token);
	if (tl < 18 || tl > 36 || strspn(token, "0123456789abcdef") != 16 || token[16] != '-' ||
	    strspn(token + 17, "0123456789") != tl - 17 ||
	    sscanf(token, "%16llx-%llu%n", inst, seen, &end) != 2 || token[end])
		return FAIL(rq, EINVAL, "argument 'token' = '%s' is not a token from free.unknown",
			    lib_shown(token, b, sizeof(b)));
	return 0;
}

/*
 * free.checked: "books" read as zeroes on the node after free.unknown gave
 * "token". Each becomes known zero if it is still FREE and not known zero and
 * nothing that could have changed it (an allocation from its IG, its node
 * going offline or online, a librarian restart) happened since the token.
 * The others are skipped: not an error, the agent checks them again later.
 */
int lib_op_free_checked(struct req *rq)
{
	unsigned long long inst, seen;
	int64_t marked = 0, skipped = 0;
	json_t *books, *el;
	size_t i;
	int r;

	if ((r = token_arg(rq, &inst, &seen)) < 0 || (r = books_arg(rq, &books)) < 0)
		return r;
	/* the whole report is refused if one book is not the caller's to report */
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		if ((r = book_ref(rq, i, el, &id, &k)) < 0)
			return r;
	}
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		book_ref(rq, i, el, &id, &k);
		if (inst != rq->s->instance || rq->s->ig_changed[k] > seen) {
			skipped++;
			continue;
		}
		r = lib_store_book_checked(rq->s, id, &rq->err);
		if (r < 0)
			return r;
		marked += r;
		skipped += !r;
	}
	rq->result = json_pack("{s:I,s:I}", "marked", (json_int_t)marked, "skipped",
			       (json_int_t)skipped);
	return 0;
}
