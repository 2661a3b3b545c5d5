// SPDX-License-Identifier: GPL-2.0
/*
 * A shelf's size in bytes: the attribute lfs.size, the size of the file the
 * shelf is to a node's filesystem (the agent sets it when a file is closed,
 * shelf.resize "bytes" with the books). It is at most the shelf's capacity,
 * books * book_size; without it a shelf's bytes are its capacity. Stored as
 * decimal text like every attribute.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

int64_t lib_shelf_capacity(const struct lib_config *c, int64_t books)
{
	int64_t cap;

	if (__builtin_mul_overflow(books, (int64_t)c->book_size, &cap))
		return INT64_MAX;
	return cap;
}

/* lfs.size as stored: decimal digits only, within int64_t. */
static bool size_parse(const char *text, int64_t *out)
{
	size_t len = strlen(text);
	unsigned long long v;

	if (!len || len > 19 || strspn(text, "0123456789") != len)
		return false;
	v = strtoull(text, NULL, 10);
	if (v > INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

int64_t lib_shelf_bytes(const struct lib_config *c, int64_t books, const char *size)
{
	int64_t n;

	if (size && size_parse(size, &n))
		return n;
	return lib_shelf_capacity(c, books);
}

int lib_size_put(struct req *rq, int64_t shelf, int64_t bytes)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, bytes);
	return lib_store_attr_put(rq->s, shelf, LIB_ATTR_SIZE, text, &rq->err);
}

/* attr.set lfs.size: a byte count (a JSON integer or decimal text) up to the capacity. */
int lib_size_set(struct req *rq, const struct lib_shelf *sh, json_t *v)
{
	int64_t cap = lib_shelf_capacity(rq->c, sh->books), n = -1;
	char b[100], *t;
	int r;

	if (json_is_integer(v))
		n = json_integer_value(v);
	else if (json_is_string(v) && !size_parse(json_string_value(v), &n))
		n = -1;
	if (n >= 0 && n <= cap)
		return lib_size_put(rq, sh->id, n);
	t = json_dumps(v, JSON_ENCODE_ANY);
	r = FAIL(rq, EINVAL,
		 "lfs.size %s must be a byte count from 0 to %" PRId64
		 ", the capacity of shelf '%s' (%" PRId64 " books of %" PRIu64
		 " bytes); grow the shelf first",
		 t ? lib_shown(t, b, sizeof(b)) : "?", cap, sh->name, sh->books, rq->c->book_size);
	free(t);
	return r;
}

bool lib_size_over(const char *size, int64_t cap)
{
	int64_t n;

	return !(size_parse(size, &n) && n <= cap);
}
