// SPDX-License-Identifier: MIT
/*
 * SIZE syntax (lfs_rule_text(LFS_RULE_SIZE)) and IG lists, parsed and printed
 * the same way by every component. Units are powers of 1024.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lfs_rules.h"

static int unit_shift(char c)
{
	switch (toupper((unsigned char)c)) {
	case 'K':
		return 10;
	case 'M':
		return 20;
	case 'G':
		return 30;
	case 'T':
		return 40;
	case 'P':
		return 50;
	}
	return -1;
}

static int parse_digits(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* The unit part: "", "b", "K", "KiB", "KB", "B"; sets out->value. */
static int parse_unit(const char *s, const char *p, uint64_t v, unsigned int flags,
		      struct lfs_size *out, char *msg, size_t len)
{
	int shift;

	if (!strcmp(p, "b") && (flags & LFS_SIZE_BOOKS)) {
		out->books = true;
		out->value = v;
		return 0;
	}
	if (!*p || !strcmp(p, "B")) {
		if (flags & LFS_SIZE_BARE) {
			out->value = v;
			return 0;
		}
		snprintf(msg, len, "SIZE `%.80s' has no unit: write it with K, M, G, T or P%s", s,
			 flags & LFS_SIZE_BOOKS ? ", or b for books (8b)" : "");
		return -EINVAL;
	}
	shift = unit_shift(*p);
	if (shift < 0 || !(p[1] == '\0' || !strcasecmp(p + 1, "B") || !strcasecmp(p + 1, "iB"))) {
		snprintf(msg, len, "invalid unit `%.20s' in SIZE `%.80s': use K, M, G, T, P%s", p,
			 s, flags & LFS_SIZE_BOOKS ? " or b (books)" : "");
		return -EINVAL;
	}
	if (v > (UINT64_MAX >> shift)) {
		snprintf(msg, len, "SIZE `%.80s' is too large", s);
		return -ERANGE;
	}
	out->value = v << shift;
	return 0;
}

int lfs_size_parse(const char *s, unsigned int flags, struct lfs_size *out, char *msg, size_t len)
{
	const char *p = s;
	uint64_t v;
	int r;

	memset(out, 0, sizeof(*out));
	if ((flags & LFS_SIZE_SIGN) && (*p == '+' || *p == '-'))
		out->sign = *p++ == '+' ? 1 : -1;
	r = parse_digits(&p, &v);
	if (r == -ERANGE) {
		snprintf(msg, len, "SIZE `%.80s' is too large", s);
		return r;
	}
	if (r) {
		snprintf(msg, len,
			 "invalid SIZE `%.80s': expected a number with a unit, e.g. 64M, 2G%s", s,
			 flags & LFS_SIZE_BOOKS ? " or 8b (books)" : "");
		return r;
	}
	if (v == 0 && !(flags & LFS_SIZE_ZERO)) {
		snprintf(msg, len, "SIZE `%.80s' is zero%s", s,
			 flags & LFS_SIZE_BOOKS ? ": give at least one book, e.g. 1b" : "");
		return -EINVAL;
	}
	return parse_unit(s, p, v, flags, out, msg, len);
}

int lfs_size_books(const struct lfs_size *sz, uint64_t book_size, uint64_t *books)
{
	if (!book_size)
		return -EINVAL;
	if (sz->books)
		*books = sz->value;
	else
		*books = sz->value / book_size + !!(sz->value % book_size);
	if (*books > LFS_SHELF_BOOKS_MAX)
		return -ERANGE;
	return 0;
}

const char *lfs_size_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;

	while (u < 6 && bytes >= 1024 && !(bytes % 1024)) {
		bytes /= 1024;
		u++;
	}
	if (bytes >= 10240 && u < 6) {
		double d = (double)bytes;

		while (d >= 1024 && u < 6) {
			d /= 1024;
			u++;
		}
		snprintf(buf, len, "%.1f %s", d, units[u]);
		return buf;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

const char *lfs_size_short(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTP";

	for (int i = 4; i >= 0; i--) {
		uint64_t unit = 1ULL << (10 * (i + 1));

		if (v && v % unit == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v / unit), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static int ig_list_add(const char *s, uint32_t *igs, int n, int max, uint32_t ig, char *msg,
		       size_t len)
{
	for (int i = 0; i < n; i++) {
		if (igs[i] == ig) {
			snprintf(msg, len, "IG %u listed twice in `%.80s'", ig, s);
			return -EINVAL;
		}
	}
	if (n >= max) {
		snprintf(msg, len, "IG list `%.80s' is longer than %d entries", s, max);
		return -E2BIG;
	}
	igs[n] = ig;
	return n + 1;
}

/* One item "A" or "A-B" at *pp; advances past it. */
static int ig_range(const char **pp, uint64_t *a, uint64_t *b)
{
	if (parse_digits(pp, a))
		return -EINVAL;
	*b = *a;
	if (**pp == '-') {
		(*pp)++;
		if (parse_digits(pp, b))
			return -EINVAL;
	}
	return *a > LFS_IG_MAX || *b > LFS_IG_MAX || *b < *a ? -EINVAL : 0;
}

int lfs_ig_list_parse(const char *s, uint32_t *igs, int max, char *msg, size_t len)
{
	const char *p = s;
	uint64_t a, b;
	int n = 0;

	if (!*s) {
		snprintf(msg, len, "empty IG list: give e.g. 0,1 or 0-3");
		return -EINVAL;
	}
	while (*p) {
		if (ig_range(&p, &a, &b))
			goto bad;
		for (uint64_t ig = a; ig <= b; ig++) {
			n = ig_list_add(s, igs, n, max, (uint32_t)ig, msg, len);
			if (n < 0)
				return n;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return n;
bad:
	snprintf(msg, len, "invalid IG list `%.80s': expected numbers 0-%d like 0,1 or 0-3", s,
		 LFS_IG_MAX);
	return -EINVAL;
}
