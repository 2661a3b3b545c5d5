// SPDX-License-Identifier: GPL-2.0
/*
 * Books and their zeroing: zombie.list and zombie.zeroed (freed books wait
 * for their node to zero them), free.scrub (FREE books of unknown content
 * sent to be zeroed), free.unknown with free.checked or free.zeroed (such
 * books found zero by reading, or zeroed by the node in the background,
 * with a token that voids the report if anything could have changed them
 * since the listing). docs/LIBRARIAN.md tells why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "ops.h"

/*
 * books[i] of a request: an [ig, book] pair of the fabric (the IG checked as
 * a whole number: 2^32 is not IG 0), in one of the caller's IGs unless the
 * caller is the admin. *k is the IG's index in the configuration.
 */
int lib_book_ref(struct req *rq, size_t i, json_t *el, int64_t *id, int *k)
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

/* "books": a list of at most LIB_BOOKS_LIMIT elements (each checked by lib_book_ref). */
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

/* Book references of a zombie.zeroed request, and what became of each. */
struct zeroed_req {
	int64_t *ids;
	bool *offline;
	int *k, *changed;
	int n; /* valid references before the first bad one (all if none) */
};

/* The references in order up to the first bad one: its error (rq->err filled), or 0. */
static int zeroed_refs(struct req *rq, json_t *books, struct zeroed_req *z)
{
	size_t n = json_array_size(books), i;
	json_t *el;
	int r = 0;

	z->ids = calloc(n + 1, sizeof(*z->ids));
	z->offline = calloc(n + 1, sizeof(*z->offline));
	z->k = calloc(n + 1, sizeof(*z->k));
	z->changed = calloc(n + 1, sizeof(*z->changed));
	if (!z->ids || !z->offline || !z->k || !z->changed)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(books, i, el) {
		if ((r = lib_book_ref(rq, i, el, &z->ids[i], &z->k[i])) < 0)
			break;
		z->offline[i] = rq->s->node_state[rq->c->igs[z->k[i]].node] != NODE_ONLINE;
		z->n++;
	}
	return r;
}

/*
 * The books become FREE and known zero (OFFLINE if their node is offline),
 * all in one round trip. The error is the first book's in order, as if
 * they were done one by one: a book not ZOMBIE, or a bad reference.
 */
int lib_op_zombie_zeroed(struct req *rq)
{
	const struct lib_config *c = rq->c;
	struct zeroed_req z = { 0 };
	int64_t *add = calloc(c->nigs, sizeof(*add));
	json_t *books;
	int r, bad;

	if ((r = books_arg(rq, &books)) < 0)
		goto out;
	if (!add) {
		r = FAIL(rq, ENOMEM, "out of memory");
		goto out;
	}
	bad = zeroed_refs(rq, books, &z);
	if (!z.changed)
		goto out_bad;
	r = lib_store_books_zeroed(rq->s, z.ids, z.offline, z.n, z.changed, &rq->err);
	for (int i = 0; i < z.n && r >= 0; i++) {
		if (!z.changed[i])
			r = FAIL(rq, EINVAL,
				 "book [%lld, %lld] is not waiting to be zeroed (not ZOMBIE)",
				 (long long)(z.ids[i] >> 32), (long long)(z.ids[i] & 0xffffffff));
		else if (!z.offline[i])
			add[z.k[i]]++;
	}
out_bad:
	if (r >= 0 && bad < 0)
		r = bad;
	for (int k = 0; k < c->nigs && r >= 0; k++)
		if (add[k])
			r = lib_store_ig_free_add(rq->s, c->igs[k].ig, add[k], add[k], &rq->err);
	if (r >= 0)
		rq->result = json_pack("{s:I}", "freed", (json_int_t)json_array_size(books));
out:
	free(add);
	free(z.ids);
	free(z.offline);
	free(z.k);
	free(z.changed);
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

/*
 * free.forget: IG's memory is new to the catalogue (its device replaced, or
 * volatile memory that lost its contents, and attach --init labelled it
 * anew): its FREE books are no longer known zero, so none is allocated
 * before the IG's node's agent has read or zeroed it (FENCING.md, "Safe
 * reuse"); with new_books = "zero" new memory is said to read as zeroes,
 * and they stay known zero. Any node may send it for any IG: every node
 * attaches (and may label) every IG's device, and forgetting only makes
 * the books wait for their own node's agent, never allocatable. The reply
 * says how many books became unknown, and how many shelves' books are on
 * the IG (their bytes were on the memory that is gone).
 */
int lib_op_free_forget(struct req *rq)
{
	const struct lib_config *c = rq->c;
	int64_t ig, n, inuse = 0;
	int k, r;

	if ((r = lib_arg_int(rq, "ig", 0, UINT32_MAX, true, &ig)) < 0)
		return r;
	if ((k = lib_config_find_ig(c, ig)) < 0)
		return FAIL(rq, ENOENT, "no IG %lld in the fabric", (long long)ig);
	/* new_books = "zero": the admin says new memory reads as zeroes */
	n = lib_store_ig_forget_zero(rq->s, ig, !c->new_books_zero, &inuse, &rq->err);
	if (n < 0)
		return n;
	rq->result = json_pack("{s:I,s:I,s:I}", "ig", (json_int_t)ig, "unknown", (json_int_t)n,
			       "inuse", (json_int_t)inuse);
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
 * A token binds a listing to the node it was given to and to the change
 * counter then: "<instance>-<changes>-<mac>", the MAC (HMAC-SHA256 under the
 * process's random key, 64 bits of it) over the node's name, the instance
 * and the counter. A node cannot forge another node's token or a later
 * counter, and a restart (new instance and key) voids every token.
 */
static uint64_t token_mac(struct lib_store *s, const char *node, unsigned long long inst,
			  unsigned long long changes)
{
	unsigned char out[EVP_MAX_MD_SIZE];
	char data[LFS_NODE_NAME_MAX + 64];
	size_t outlen = 0;
	uint64_t mac = 0;
	int n = snprintf(data, sizeof(data), "%s/%016llx/%llu", node, inst, changes);

	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, s->token_key, sizeof(s->token_key),
		       (unsigned char *)data, n, out, sizeof(out), &outlen) ||
	    outlen < 8)
		return 0;
	for (int i = 0; i < 8; i++)
		mac = mac << 8 | out[i];
	return mac;
}

/*
 * free.unknown: the node's FREE books that are not known zero, in book-id
 * order after "after" ([ig, book]), at most "limit", and a token. The node's
 * agent reads them (LFS_CMD_BOOK_CHECK writes nothing) and reports those
 * that read as zeroes with free.checked, or zeroes them and reports them
 * with free.zeroed, with the token. Nothing changes here.
 */
int lib_op_free_unknown(struct req *rq)
{
	struct book_list l = { 0 };
	int64_t limit = 4096, from;
	unsigned long long inst, changes;
	uint32_t *igs;
	char token[64];
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
	inst = rq->s->instance;
	changes = rq->s->changes;
	snprintf(token, sizeof(token), "%016llx-%llu-%016llx", inst, changes,
		 (unsigned long long)token_mac(rq->s, rq->c->nodes[node].name, inst, changes));
	rq->result = json_pack("{s:o,s:b,s:s}", "books", l.books, "more", l.got >= limit, "token",
			       token);
	return 0;
}

struct token {
	unsigned long long inst, changes, mac;
	bool old; /* "<instance>-<changes>": a librarian before node-bound tokens gave it */
};

/* "token": as free.unknown gave it (or the two-part form of librarians before). */
static int token_arg(struct req *rq, struct token *t)
{
	const char *token, *p;
	char b[100];
	size_t d;
	int r, end = 0;

	if ((r = lib_arg_str(rq, "token", true, &token)) < 0)
		return r;
	memset(t, 0, sizeof(*t));
	if (strlen(token) < 18 || strlen(token) > 56 || strspn(token, "0123456789abcdef") != 16 ||
	    token[16] != '-')
		goto bad;
	p = token + 17;
	d = strspn(p, "0123456789");
	t->old = p[d] == 0;
	if (d < 1 || d > 20 ||
	    (!t->old && (p[d] != '-' || strlen(p + d + 1) != 16 ||
			 strspn(p + d + 1, "0123456789abcdef") != 16)))
		goto bad;
	if (t->old ? sscanf(token, "%16llx-%llu%n", &t->inst, &t->changes, &end) == 2 :
		     sscanf(token, "%16llx-%llu-%16llx%n", &t->inst, &t->changes, &t->mac, &end) ==
			     3)
		if (!token[end])
			return 0;
bad:
	return FAIL(rq, EINVAL, "argument 'token' = '%s' is not a token from free.unknown",
		    lib_shown(token, b, sizeof(b)));
}

/*
 * Whether the token counts for a book of node k: 1 yes, 0 void (an earlier
 * process gave it), or EINVAL: not given to that node, or a counter this
 * process never reached (forged).
 */
static int token_valid(struct req *rq, const struct token *t, int k, int *cache_node)
{
	const char *node = rq->c->nodes[k].name;
	char b[100];

	if (t->old || t->inst != rq->s->instance)
		return 0;
	if (t->changes > rq->s->changes)
		return FAIL(
			rq, EINVAL,
			"argument 'token' counts %llu changes, more than this librarian has made (%llu): it is not a token from free.unknown",
			t->changes, (unsigned long long)rq->s->changes);
	if (*cache_node == k)
		return 1;
	if (token_mac(rq->s, node, t->inst, t->changes) != t->mac)
		return FAIL(
			rq, EINVAL,
			"argument 'token' was not given to node '%s' (each node reports with a token of its own free.unknown listing)",
			lib_shown(node, b, sizeof(b)));
	*cache_node = k;
	return 1;
}

/* Each book of the report, checked whole before anything changes (books_arg, lib_book_ref). */
static int report_check(struct req *rq, json_t *books, const struct token *t)
{
	json_t *el;
	size_t i;
	int cache = -1;

	json_array_foreach(books, i, el) {
		int64_t id;
		int k, r;

		if ((r = lib_book_ref(rq, i, el, &id, &k)) < 0 ||
		    (r = token_valid(rq, t, rq->c->igs[k].node, &cache)) < 0)
			return r;
	}
	return 0;
}

/*
 * free.checked and free.zeroed: "books" read as zeroes on the node, or were
 * zeroed by it, after free.unknown gave "token". Each becomes known zero if
 * it is still FREE and not known zero and nothing that could have changed it
 * (an allocation from its IG, its node going offline or online, a librarian
 * restart) happened since the token. The others are skipped: not an error,
 * the agent checks them again later.
 */
static int free_report(struct req *rq)
{
	int64_t marked = 0, skipped = 0, *add;
	struct token t;
	json_t *books, *el;
	size_t i;
	int r, cache = -1;

	if ((r = token_arg(rq, &t)) < 0 || (r = books_arg(rq, &books)) < 0 ||
	    (r = report_check(rq, books, &t)) < 0)
		return r;
	add = calloc(rq->c->nigs, sizeof(*add));
	if (!add)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		lib_book_ref(rq, i, el, &id, &k);
		if (token_valid(rq, &t, rq->c->igs[k].node, &cache) <= 0 ||
		    rq->s->ig_changed[k] > t.changes) {
			skipped++;
			continue;
		}
		r = lib_store_book_checked(rq->s, id, &rq->err);
		if (r < 0)
			break;
		marked += r;
		skipped += !r;
		add[k] += r;
	}
	for (int k = 0; k < rq->c->nigs && r >= 0; k++)
		if (add[k])
			r = lib_store_ig_free_add(rq->s, rq->c->igs[k].ig, 0, add[k], &rq->err);
	free(add);
	if (r < 0)
		return r;
	rq->result = json_pack("{s:I,s:I}", "marked", (json_int_t)marked, "skipped",
			       (json_int_t)skipped);
	return 0;
}

/* The books read as zeroes without anything written (LFS_CMD_BOOK_CHECK). */
int lib_op_free_checked(struct req *rq)
{
	return free_report(rq);
}

/*
 * The node zeroed the books in the background (LFS_CMD_BOOK_ZERO) while
 * they were FREE and not known zero, so not allocatable: nothing but the
 * node could write them meanwhile. The same rules as free.checked.
 */
int lib_op_free_zeroed(struct req *rq)
{
	return free_report(rq);
}
