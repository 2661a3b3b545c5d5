// SPDX-License-Identifier: GPL-2.0
/*
 * A shelf's whole book map from the librarian's paged replies (session.h):
 * the one pager of lfsvol's commands and the agent's upcall server. A
 * reply's "map" is a page of [IG, BOOK] pairs from "map_offset"; the pages
 * end with "map_complete" or when the shelf's books are all there. A page
 * that adds nothing before then, or pages that do not add up to the
 * books, are EPROTO (the shelf changed meanwhile, or the map is not
 * shown to the caller).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lfs_rules.h"
#include "session.h"

/* Append the [IG, BOOK] pairs of one reply's "map". */
static int map_append(json_t *map, struct lfs_book *books, size_t *n, size_t cap)
{
	size_t i;
	json_t *el;

	json_array_foreach(map, i, el) {
		json_int_t ig, b;

		if (json_unpack(el, "[II]", &ig, &b) || ig < 0 || ig > LFS_IG_MAX || b < 0 ||
		    b > UINT32_MAX || *n >= cap)
			return -EPROTO;
		books[*n].ig = (uint32_t)ig;
		books[*n].book = (uint32_t)b;
		(*n)++;
	}
	return 0;
}

int lfsvol_book_map(json_t *first, size_t total, lfsvol_map_page_fn next, void *arg,
		    struct lfs_book *books)
{
	json_t *cur = json_incref(first);
	size_t n = 0, before;
	int r;

	for (;;) {
		before = n;
		r = map_append(json_object_get(cur, "map"), books, &n, total);
		if (!r && n == before && cur != first && n < total)
			r = -EPROTO; /* a page that adds nothing: no progress */
		if (r || n >= total || json_is_true(json_object_get(cur, "map_complete")))
			break;
		json_decref(cur);
		cur = NULL;
		r = next(arg, n, &cur);
		if (r)
			break;
	}
	json_decref(cur);
	return r ? r : n == total ? 0 : -EPROTO;
}
