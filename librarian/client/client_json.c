// SPDX-License-Identifier: GPL-2.0
/*
 * A reply's JSON text into jansson values, the text parsed by yajl
 * (libyajl2) and the values built by jansson. jansson's own decoder reads
 * its input a byte at a time through a callback: on the large replies (a
 * list of 1,000 shelves, 249 KB) it takes 4.5 ms where this takes 0.9 ms
 * (docs/bench-librarian.md, "The list's parse").
 *
 * What is accepted is what json_loadb(text, len, 0) accepts, with the same
 * values: an object or an array at the top, nothing after it, strings and
 * keys valid UTF-8 (checked by jansson as each is made) without NUL, the
 * last of duplicate keys kept, integers that fit a json_int_t, nesting at
 * most LC_JSON_DEPTH deep. Three kinds of text go to json_loadb itself:
 * one with a \u escape (yajl turns a lone surrogate into '?' where jansson
 * refuses it; our server writes escapes only for control characters, so
 * this is rare), one with a vertical tab or a form feed byte (whitespace
 * to yajl, not to JSON), and one yajl refuses (jansson decides: it takes
 * -2^63, which yajl does not, and words the error). tests/librarian/json.t
 * holds the two parsers to the same answers.
 */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "client_int.h"

#define LC_JSON_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

struct build {
	json_t *root;
	json_t **stack; /* the open objects and arrays, innermost last */
	int depth;
	char *key; /* the key the next value is for, in the innermost object */
	size_t key_len, key_cap;
};

/*
 * v into the innermost container (or as the root); it is given up on
 * failure. A callback's 0 stops yajl: the text then goes to json_loadb,
 * which says why (the comments here say what it will say).
 */
static int put(struct build *b, json_t *v)
{
	json_t *top;
	int r;

	if (!v)
		return 0; /* out of memory */
	if (!b->depth) {
		if (!json_is_object(v) && !json_is_array(v)) {
			json_decref(v);
			return 0; /* '[' or '{' expected */
		}
		b->root = v;
		return 1;
	}
	top = b->stack[b->depth - 1];
	if (json_is_array(top))
		r = json_array_append_new(top, v);
	else
		r = json_object_setn_new(top, b->key, b->key_len, v);
	return !r; /* invalid UTF-8 in a key, or out of memory */
}

static int open_one(struct build *b, json_t *v)
{
	if (b->depth >= LC_JSON_DEPTH) {
		json_decref(v);
		return 0; /* maximum parsing depth reached */
	}
	if (!put(b, v))
		return 0;
	b->stack[b->depth++] = v;
	return 1;
}

static int on_null(void *ctx)
{
	return put(ctx, json_null());
}

static int on_boolean(void *ctx, int v)
{
	return put(ctx, json_boolean(v));
}

static int on_integer(void *ctx, long long v)
{
	return put(ctx, json_integer(v));
}

static int on_double(void *ctx, double v)
{
	return put(ctx, json_real(v));
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	json_t *v;

	if (memchr(s, 0, len))
		return 0; /* \u0000 is not allowed */
	v = json_stringn((const char *)s, len);
	return v ? put(ctx, v) : 0; /* invalid UTF-8 */
}

static int on_start_map(void *ctx)
{
	return open_one(ctx, json_object());
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct build *b = ctx;

	if (memchr(s, 0, len))
		return 0; /* \u0000 is not allowed */
	if (len >= b->key_cap) {
		char *k = realloc(b->key, len + 1);

		if (!k)
			return 0; /* out of memory */
		b->key = k;
		b->key_cap = len + 1;
	}
	memcpy(b->key, s, len);
	b->key[len] = 0;
	b->key_len = len;
	return 1;
}

static int on_end(void *ctx)
{
	((struct build *)ctx)->depth--;
	return 1;
}

static int on_start_array(void *ctx)
{
	return open_one(ctx, json_array());
}

static const yajl_callbacks build_callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_boolean,
	.yajl_integer = on_integer,
	.yajl_double = on_double,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_map_key,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

static json_t *slow_path(const char *text, size_t len, char *why, size_t why_len)
{
	json_error_t jerr;
	json_t *v = json_loadb(text, len, 0, &jerr);

	if (!v)
		snprintf(why, why_len, "%s", jerr.text);
	return v;
}

json_t *lc_json_parse(const char *text, size_t len, char *why, size_t why_len)
{
	struct build b = { .root = NULL };
	yajl_handle h = NULL;
	bool ok = false;

	/* a \u escape, \v or \f (whitespace to yajl, not to JSON): jansson's own path */
	if (!memmem(text, len, "\\u", 2) && !memchr(text, '\v', len) && !memchr(text, '\f', len)) {
		b.stack = malloc(LC_JSON_DEPTH * sizeof(*b.stack));
		h = b.stack ? yajl_alloc(&build_callbacks, NULL, &b) : NULL;
	}
	if (h) {
		/* jansson checks each string and key as it makes them */
		yajl_config(h, yajl_dont_validate_strings, 1);
		ok = yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
		     yajl_complete_parse(h) == yajl_status_ok && b.root;
		yajl_free(h);
	}
	free(b.stack);
	free(b.key);
	if (ok)
		return b.root;
	/* jansson's verdict and message (yajl refuses a few texts it takes) */
	json_decref(b.root);
	return slow_path(text, len, why, why_len);
}
