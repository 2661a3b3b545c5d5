// SPDX-License-Identifier: GPL-2.0
/*
 * Bad books (poisoned memory the node agents reported, docs/LIBRARIAN.md
 * "Bad books") as fabric and show print them: the librarian's
 * book.bad_list, one entry per bad range.
 */
#include <stdio.h>

#include "lfsvol.h"
#include "session.h"

json_t *lfsvol_bad_books(struct lfsvol_lib *lib, const char *shelf)
{
	json_t *res = NULL, *bad;

	if (lfsvol_lib_call(lib, "book.bad_list",
			    shelf ? json_pack("{s:s}", "name", shelf) : json_object(), &res))
		return NULL;
	bad = json_incref(json_object_get(res, "bad"));
	json_decref(res);
	return json_is_array(bad) ? bad : NULL;
}

/* The entries of bad on one of the IGs in igs (numbers), fabric's per-node "bad". */
json_t *lfsvol_bad_of_igs(json_t *bad, json_t *igs)
{
	json_t *out = json_array(), *el, *ig;
	size_t i, k;

	if (!bad) {
		json_decref(out);
		return json_null();
	}
	json_array_foreach(bad, i, el)
		json_array_foreach(igs, k, ig)
			if (json_integer_value(ig) == json_integer_value(json_object_get(el, "ig")))
				json_array_append(out, el);
	return out;
}

static long long num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* fabric's table of bad books, after the nodes' (nothing if there is none). */
void lfsvol_bad_print(json_t *bad)
{
	json_t *el;
	size_t i;

	if (!json_array_size(bad))
		return;
	printf("\nbad memory (never allocated; see lfsvol(8), book clear):\n");
	printf("%-5s %8s %12s %10s  %-6s %-20s %s\n", "IG", "BOOK", "OFFSET", "LENGTH", "STATE",
	       "SHELF", "AT");
	json_array_foreach(bad, i, el) {
		json_t *shelf = json_object_get(el, "shelf");
		char at[48] = "-";

		if (json_is_string(shelf))
			snprintf(at, sizeof(at), "its book %lld", num(el, "seq"));
		printf("%-5lld %8lld %12lld %10lld  %-6s %-20s %s\n", num(el, "ig"),
		       num(el, "book"), num(el, "offset"), num(el, "length"),
		       json_string_value(json_object_get(el, "state")),
		       json_is_string(shelf) ? json_string_value(shelf) : "-", at);
	}
}

/* show's "bad": each bad range of the shelf with its byte offset in the shelf. */
json_t *lfsvol_bad_of_shelf(struct lfsvol_lib *lib, const char *name)
{
	uint64_t bs = lfsvol_lib_book_size(lib);
	json_t *bad = lfsvol_bad_books(lib, name), *out, *el;
	size_t i;

	if (!bad)
		return json_null();
	out = json_array();
	json_array_foreach(bad, i, el)
		json_array_append_new(out, json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "seq",
						     (json_int_t)num(el, "seq"), "ig",
						     (json_int_t)num(el, "ig"), "book",
						     (json_int_t)num(el, "book"), "offset",
						     (json_int_t)num(el, "offset"), "length",
						     (json_int_t)num(el, "length"), "shelf_offset",
						     (json_int_t)(num(el, "seq") * (long long)bs +
								  num(el, "offset"))));
	json_decref(bad);
	return out;
}

/* show's line: where in the shelf memory is bad. */
void lfsvol_bad_show(json_t *bad)
{
	json_t *el;
	size_t i;

	printf("bad memory: ");
	if (!json_is_array(bad))
		printf(" ? (the librarian does not tell)");
	json_array_foreach(bad, i, el)
		printf("%s %lld bytes at %lld (its book %lld, IG %lld book %lld)", i ? "," : "",
		       num(el, "length"), num(el, "shelf_offset"), num(el, "seq"), num(el, "ig"),
		       num(el, "book"));
	printf("%s\n", json_array_size(bad) || !json_is_array(bad) ? "" : " -");
}
