// SPDX-License-Identifier: GPL-2.0
/*
 * Bad books (poisoned memory): book.bad (a node's agent reports the bad
 * ranges its kernel found in books of its IGs), book.bad_list (the fabric's
 * bad books, or a shelf's) and book.clear (the admin returns a cleared book
 * to service, through zeroing). docs/LIBRARIAN.md, "Bad books".
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "ops.h"

#define BAD_RANGES_MAX 4096

/* ranges[i] = [ig, book, offset, length]: a range inside a book of the caller's IGs. */
static int range_ref(struct req *rq, size_t i, json_t *el, struct lib_bad *b, int *k)
{
	const struct lib_config *c = rq->c;
	json_int_t ig, idx, off, len;
	char msg[200] = "", t[100], *txt;
	int r;

	if (json_unpack(el, "[IIII!]", &ig, &idx, &off, &len) ||
	    lfs_rule_ig(ig, "IG", msg, sizeof(msg)) < 0 || idx < 0 || idx > 0xffffffffLL ||
	    (*k = lib_config_find_ig(c, ig)) < 0 || (uint64_t)idx >= c->igs[*k].books) {
		if (!msg[0])
			snprintf(msg, sizeof(msg), "no such book in the fabric");
	} else if (off < 0 || len < 1 || (uint64_t)off >= c->book_size ||
		   (uint64_t)len > c->book_size - (uint64_t)off) {
		snprintf(msg, sizeof(msg),
			 "offset and length must lie inside the book (%llu bytes)",
			 (unsigned long long)c->book_size);
	} else if (!rq->who->admin && c->igs[*k].node != rq->who->node) {
		return FAIL(
			rq, EPERM,
			"ranges[%zu]: book [%lld, %lld] is in IG %lld of node '%s', not of node '%s': a node reports its own IGs' books",
			i, (long long)ig, (long long)idx, (long long)ig,
			c->nodes[c->igs[*k].node].name, rq->who->name);
	} else {
		b->book = lib_book_id(ig, idx);
		b->off = off;
		b->len = len;
		return 0;
	}
	txt = json_dumps(el, JSON_ENCODE_ANY | JSON_COMPACT);
	r = FAIL(rq, EINVAL, "ranges[%zu] = %s is not a bad range ([ig, book, offset, length]): %s",
		 i, txt ? lib_shown(txt, t, sizeof(t)) : "?", msg);
	free(txt);
	return r;
}

/* One range recorded and its book out of service: *book_bad 1 if it became BAD now. */
static int bad_one(struct req *rq, struct lib_bad *b, int k, int *book_bad)
{
	int state, zeroed, added, r;

	added = lib_store_bad_add(rq->s, b, &rq->err);
	if (added < 0)
		return added;
	r = lib_store_book_state(rq->s, b->book, &state, &zeroed, &rq->err);
	if (r < 0)
		return r == -ENOENT ? FAIL(rq, EIO, "book %lld is not in the catalogue",
					   (long long)b->book) :
				      r;
	*book_bad = 0;
	if (state == BOOK_INUSE || state == BOOK_BAD)
		return added;
	r = lib_store_book_set_bad(rq->s, b->book, &rq->err);
	if (r <= 0)
		return r < 0 ? r : added;
	*book_bad = 1;
	if (state == BOOK_FREE)
		r = lib_store_ig_free_add(rq->s, rq->c->igs[k].ig, -1, -zeroed, &rq->err);
	return r < 0 ? r : added;
}

/*
 * book.bad: "ranges" of poisoned memory, each [ig, book, offset, length]
 * in bytes inside the book. All are checked before anything changes. A
 * range already known is not an error (agents report again after a
 * restart). The book leaves service: FREE, ZOMBIE and OFFLINE books become
 * BAD at once; a shelf's book stays on its shelf, BAD when the shelf lets
 * it go.
 */
int lib_op_book_bad(struct req *rq)
{
	json_t *ranges = json_object_get(rq->args, "ranges"), *el;
	struct lib_bad *b;
	int *k, r = 0;
	int64_t added = 0, books = 0;
	size_t i, n;

	if (!json_is_array(ranges) || json_array_size(ranges) > BAD_RANGES_MAX)
		return FAIL(
			rq, EINVAL,
			"argument 'ranges' must be a list of at most %d [ig, book, offset, length] lists",
			BAD_RANGES_MAX);
	n = json_array_size(ranges);
	b = calloc(n + 1, sizeof(*b));
	k = calloc(n + 1, sizeof(*k));
	if (!b || !k)
		r = FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(ranges, i, el) {
		if (r < 0 || (r = range_ref(rq, i, el, &b[i], &k[i])) < 0)
			break;
		b[i].node = rq->who->name;
		b[i].since = time(NULL);
	}
	for (i = 0; i < n && r >= 0; i++) {
		int became = 0;

		r = bad_one(rq, &b[i], k[i], &became);
		added += r > 0;
		books += became;
	}
	free(b);
	free(k);
	if (r < 0)
		return r;
	rq->result = json_pack("{s:I,s:I}", "added", (json_int_t)added, "books", (json_int_t)books);
	return 0;
}

struct bad_list {
	struct req *rq;
	json_t *rows;
	int64_t got;
};

/* A shelf's name is shown only to who may see the shelf. */
static const char *shown_shelf(struct req *rq, const char *name)
{
	struct lib_shelf sh;
	enum lib_access have = ACC_NONE;

	if (!name || rq->who->admin)
		return name;
	if (lib_store_shelf_find(rq->s, name, &sh, &rq->err) < 0 ||
	    lib_access_of(rq, &sh, &have) < 0 || have == ACC_NONE)
		return NULL;
	return name;
}

static int list_bad(void *arg, const struct lib_bad *b)
{
	struct bad_list *l = arg;
	const char *shelf = b->state == BOOK_INUSE ? shown_shelf(l->rq, b->shelf_name) : NULL;
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:s,s:I,s:s}", "ig", (json_int_t)(b->book >> 32),
			      "book", (json_int_t)(b->book & 0xffffffff), "offset",
			      (json_int_t)b->off, "length", (json_int_t)b->len, "node",
			      b->node ? b->node : "", "since", (json_int_t)b->since, "state",
			      b->state == BOOK_INUSE ? "inuse" : "bad");

	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "shelf", shelf ? json_string(shelf) : json_null());
	json_object_set_new(o, "seq", shelf ? json_integer(b->seq) : json_null());
	l->got++;
	return json_array_append_new(l->rows, o) ? -ENOMEM : 0;
}

/*
 * book.bad_list: every bad range of the fabric (one entry per range, in
 * book order), at most "limit"; with "name", those of that shelf's books
 * (the caller must see the shelf). Shelves the caller does not see are
 * not named.
 */
int lib_op_book_bad_list(struct req *rq)
{
	struct bad_list l = { rq, json_array(), 0 };
	struct lib_shelf sh = { .id = -1 };
	int64_t limit = 4096;
	const char *name;
	int r;

	if ((r = lib_arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = lib_arg_str(rq, "name", false, &name)) < 0 ||
	    (name && ((r = lib_shelf_lookup(rq, name, &sh)) < 0 ||
		      (r = lib_require_access(rq, &sh, ACC_SEE, "see")) < 0)))
		goto out;
	r = lib_store_bad_each(rq->s, 0, INT64_MAX, sh.id, limit, list_bad, &l, &rq->err);
	if (r == -ENOMEM)
		r = FAIL(rq, ENOMEM, "out of memory");
	if (r < 0)
		goto out;
	rq->result = json_pack("{s:O,s:b}", "bad", l.rows, "more", l.got >= limit);
out:
	json_decref(l.rows);
	return r < 0 ? r : 0;
}

/*
 * book.clear (admin): the books' bad ranges are forgotten, after the
 * memory was cleared (docs/LIBRARIAN.md). A BAD book becomes ZOMBIE: its
 * node zeroes it (and reports it bad again if its kernel still refuses
 * it) before it is FREE. A shelf's book stays on its shelf. A book with no
 * bad range is refused, and then nothing changes.
 */
int lib_op_book_clear(struct req *rq)
{
	json_t *books = json_object_get(rq->args, "books"), *el;
	int64_t zombie = 0;
	size_t i;
	int r = 0;

	if (!json_is_array(books) || !json_array_size(books) ||
	    json_array_size(books) > BAD_RANGES_MAX)
		return FAIL(rq, EINVAL,
			    "argument 'books' must be a list of 1 to %d [ig, book] pairs",
			    BAD_RANGES_MAX);
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		if ((r = lib_book_ref(rq, i, el, &id, &k)) < 0 ||
		    (r = lib_store_bad_each(rq->s, id, id, -1, 1, NULL, NULL, &rq->err)) < 0)
			return r;
		if (!r)
			return FAIL(
				rq, EINVAL,
				"books[%zu]: book [%lld, %lld] has no bad range: nothing to clear",
				i, (long long)(id >> 32), (long long)(id & 0xffffffff));
	}
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		lib_book_ref(rq, i, el, &id, &k);
		r = lib_store_bad_clear(rq->s, id, &rq->err);
		if (r < 0)
			return r;
		zombie += r;
	}
	rq->result = json_pack("{s:I,s:I}", "cleared", (json_int_t)json_array_size(books), "zombie",
			       (json_int_t)zombie);
	return 0;
}
