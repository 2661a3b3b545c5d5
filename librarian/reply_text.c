// SPDX-License-Identifier: GPL-2.0
/*
 * shelf.list's result written as JSON text straight from the rows of its one
 * query, without building a jansson object per shelf and dumping the tree:
 * for 1,000 shelves those two took longer than the query
 * (docs/bench-librarian.md). The text is the one lib_reply_shelf_row() gives
 * (same keys, same order, same escaping as jansson's compact dump); the
 * event loop frames it into the reply (conn.c) as it would a dumped result.
 */
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

static bool room(struct lib_text *t, size_t n)
{
	size_t cap;
	char *p;

	if (t->oom)
		return false;
	if (t->len + n + 1 <= t->cap)
		return true;
	cap = t->cap ? t->cap : 4096;
	while (cap < t->len + n + 1)
		cap *= 2;
	p = realloc(t->p, cap);
	if (!p) {
		t->oom = true;
		return false;
	}
	t->p = p;
	t->cap = cap;
	return true;
}

void lib_text_add(struct lib_text *t, const char *s, size_t n)
{
	if (!room(t, n))
		return;
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

void lib_text_printf(struct lib_text *t, const char *fmt, ...)
{
	va_list ap;
	char b[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(b))
		lib_text_add(t, b, n);
	else
		t->oom = true;
}

/* A JSON string, escaped as jansson escapes it (n bytes of s). */
void lib_text_str(struct lib_text *t, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	if (!room(t, n + 2))
		return;
	t->p[t->len++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char ch = s[i];
		char e[7] = { '\\', 0 };

		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		lib_text_add(t, s + run, i - run);
		run = i + 1;
		switch (ch) {
		case '"':
		case '\\':
			e[1] = ch;
			break;
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		default:
			memcpy(e + 1, "u00", 3);
			e[4] = hex[ch >> 4];
			e[5] = hex[ch & 15];
		}
		lib_text_add(t, e, strlen(e));
	}
	lib_text_add(t, s + run, n - run);
	lib_text_add(t, "\"", 1);
}

static void text_cstr(struct lib_text *t, const char *s)
{
	lib_text_str(t, s, strlen(s));
}

/* key (with its quote, colon and leading comma) and a decimal integer, without printf. */
static void text_int(struct lib_text *t, const char *key, int64_t v)
{
	char b[24], *p = b + sizeof(b);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--p = '0' + u % 10;
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	lib_text_add(t, key, strlen(key));
	lib_text_add(t, p, b + sizeof(b) - p);
}

/* "who:level,..." (lib_access_from_text) as ["who:name", ...]. */
static void access_list(struct lib_text *t, const char *text)
{
	const char *p = text, *end, *colon;
	char item[LFS_NODE_NAME_MAX + 32];
	bool first = true;

	lib_text_add(t, "[", 1);
	for (; p && *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',') ?: p + strlen(p);
		colon = memrchr(p, ':', end - p);
		if (!colon || colon == p)
			continue;
		snprintf(item, sizeof(item), "%.*s:%s", (int)(colon - p), p,
			 lib_access_name(atoi(colon + 1)));
		lib_text_add(t, first ? "" : ",", !first);
		text_cstr(t, item);
		first = false;
	}
	lib_text_add(t, "]", 1);
}

/* "node:mode,..." as [{"node":..., "mode":...}, ...] (as reply.c's). */
static void activation_list(struct lib_text *t, const char *text)
{
	const char *p = text, *end, *colon;
	bool first = true;

	lib_text_add(t, "[", 1);
	for (; p && *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',') ?: p + strlen(p);
		colon = memchr(p, ':', end - p);
		if (!colon || colon == p)
			continue;
		lib_text_add(t, first ? "{\"node\":" : ",{\"node\":", first ? 8 : 9);
		lib_text_str(t, p, colon - p);
		lib_text_add(t, ",\"mode\":", 8);
		lib_text_str(t, colon + 1, end - colon - 1);
		lib_text_add(t, "}", 1);
		first = false;
	}
	lib_text_add(t, "]", 1);
}

/* One shelf of shelf.list: the object lib_reply_shelf_row() makes. */
void lib_text_shelf_row(struct req *rq, struct lib_text *t, const struct lib_shelf_row *row)
{
	const char *policy = row->policy ? row->policy : lfs_policy_name(rq->c->default_policy);

	lib_text_add(t, "{\"name\":", 8);
	text_cstr(t, row->name);
	lib_text_add(t, ",\"uuid\":", 8);
	text_cstr(t, row->uuid);
	lib_text_add(t, ",\"owner\":", 9);
	text_cstr(t, row->owner);
	lib_text_add(t, ",\"tenant\":", 10);
	if (row->tenant && row->tenant[0])
		text_cstr(t, row->tenant);
	else
		lib_text_add(t, "null", 4);
	lib_text_add(t, ",\"access\":", 10);
	access_list(t, row->access);
	text_int(t, ",\"ctime\":", row->ctime);
	text_int(t, ",\"mtime\":", row->mtime);
	text_int(t, ",\"books\":", row->books);
	text_int(t, ",\"size\":", lib_shelf_capacity(rq->c, row->books));
	text_int(t, ",\"bytes\":", lib_shelf_bytes(rq->c, row->books, row->size));
	text_int(t, ",\"gen\":", row->gen);
	lib_text_add(t, ",\"policy\":", 10);
	text_cstr(t, policy);
	lib_text_add(t, ",\"activations\":", 15);
	activation_list(t, row->activations);
	lib_text_add(t, "}", 1);
}
