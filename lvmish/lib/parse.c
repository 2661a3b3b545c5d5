// SPDX-License-Identifier: MIT
/*
 * Parsers and formatters of BOOKS and UUIDs (lfsctl's syntax). Names and
 * SIZE are the shared rules module's (common/lfs_rules.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblfsnl.h"

static int parse_u64(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*end = p;
	*out = v;
	return 0;
}

int lfs_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	const char *end;
	uint64_t v;
	int ret;

	ret = parse_u64(s, &end, &v);
	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int books_append(struct lfs_book **books, size_t *n, size_t *cap, uint32_t ig, uint32_t book)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct lfs_book *nb = realloc(*books, ncap * sizeof(**books));

		if (!nb)
			return -ENOMEM;
		*books = nb;
		*cap = ncap;
	}
	(*books)[*n].ig = ig;
	(*books)[*n].book = book;
	(*n)++;
	return 0;
}

/* One item: IG:BOOK or IG:FIRST-LAST. */
static int parse_book_item(const char *item, uint32_t *ig, uint32_t *first, uint32_t *last)
{
	const char *p;
	uint64_t v;

	if (parse_u64(item, &p, &v) || *p != ':' || v > LFS_IG_MAX)
		return -EINVAL;
	*ig = v;
	if (parse_u64(p + 1, &p, &v) || v > UINT32_MAX)
		return -EINVAL;
	*first = *last = v;
	if (*p == '-') {
		if (parse_u64(p + 1, &p, &v) || v > UINT32_MAX || v < *first)
			return -EINVAL;
		*last = v;
	}
	return *p ? -EINVAL : 0;
}

int lfs_parse_books(const char *s, struct lfs_book **out, size_t *n, char *err, size_t errlen)
{
	struct lfs_book *books = NULL;
	size_t nbooks = 0, cap = 0;
	char *copy, *item, *save = NULL;
	uint32_t ig, first, last;
	uint64_t b;
	int ret = 0;

	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	if (!*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,")) {
		snprintf(err, errlen, "invalid book list `%s': empty item", s);
		ret = -EINVAL;
		goto out;
	}
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (parse_book_item(item, &ig, &first, &last)) {
			snprintf(err, errlen,
				 "invalid book `%s': expected IG:BOOK or IG:FIRST-LAST (IG <= %u)",
				 item, LFS_IG_MAX);
			ret = -EINVAL;
			goto out;
		}
		if (nbooks + (uint64_t)(last - first) + 1 > LFS_SHELF_BOOKS_MAX) {
			snprintf(err, errlen, "book list `%.40s...' has more than %u books", s,
				 LFS_SHELF_BOOKS_MAX);
			ret = -E2BIG;
			goto out;
		}
		for (b = first; b <= last; b++) {
			ret = books_append(&books, &nbooks, &cap, ig, b);
			if (ret) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
		}
	}
	*out = books;
	*n = nbooks;
	books = NULL;
out:
	free(books);
	free(copy);
	return ret;
}

char *lfs_format_books(const struct lfs_book *books, size_t n)
{
	size_t i, j, len = 0, cap = 64;
	char *buf = malloc(cap), *nb;
	int w;

	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < n; i = j) {
		for (j = i + 1;
		     j < n && books[j].ig == books[i].ig && books[j].book == books[j - 1].book + 1;
		     j++)
			;
		while (cap - len < 40) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		if (j - i > 1)
			w = snprintf(buf + len, cap - len, "%s%u:%u-%u", i ? "," : "", books[i].ig,
				     books[i].book, books[j - 1].book);
		else
			w = snprintf(buf + len, cap - len, "%s%u:%u", i ? "," : "", books[i].ig,
				     books[i].book);
		len += w;
	}
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int lfs_parse_uuid(const char *s, uint8_t uuid[LFS_UUID_LEN])
{
	int i, hi, lo;

	if (strlen(s) != 36)
		return -EINVAL;
	for (i = 0; i < LFS_UUID_LEN; i++) {
		if (*s == '-' && (i == 4 || i == 6 || i == 8 || i == 10))
			s++;
		hi = hexval(s[0]);
		lo = hi < 0 ? -1 : hexval(s[1]);
		if (lo < 0)
			return -EINVAL;
		uuid[i] = hi << 4 | lo;
		s += 2;
	}
	return *s ? -EINVAL : 0;
}

void lfs_format_uuid(const uint8_t u[LFS_UUID_LEN], char buf[37])
{
	snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}
