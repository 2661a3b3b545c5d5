// SPDX-License-Identifier: GPL-2.0
/*
 * SQL text with book states written in: statements name them (state =
 * BOOK_FREE) and their values replace the names before a statement is
 * prepared, on either store, so SQLite's partial indexes apply (store.c).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "store_sql.h"

/* The names statements use for enum lib_book_state. */
static const struct {
	const char *name;
	enum lib_book_state state;
} book_states[] = {
	{ "BOOK_FREE", BOOK_FREE },	{ "BOOK_INUSE", BOOK_INUSE },
	{ "BOOK_ZOMBIE", BOOK_ZOMBIE }, { "BOOK_OFFLINE", BOOK_OFFLINE },
	{ "BOOK_BAD", BOOK_BAD },
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The value of the book state named by the identifier at p (n bytes), or -1. */
static int book_state_value(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof(book_states) / sizeof(book_states[0]); i++)
		if (strlen(book_states[i].name) == n && !memcmp(p, book_states[i].name, n))
			return book_states[i].state;
	return -1;
}

char *lib_sql_expand(const char *sql)
{
	size_t len = 2 * strlen(sql) + 1, o = 0;
	char *out = malloc(len);
	const char *p = sql;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = 0;
		int v;

		if (*p == '\'') {
			/* a string literal is copied as it is, up to its closing quote */
			const char *q = strchr(p + 1, '\'');

			n = q ? (size_t)(q - p) + 1 : strlen(p);
		} else if (ident_char(*p)) {
			while (ident_char(p[n]))
				n++;
			v = book_state_value(p, n);
			if (v >= 0) {
				o += snprintf(out + o, len - o, "%d", v);
				p += n;
				continue;
			}
		} else {
			n = 1;
		}
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = 0;
	return out;
}
