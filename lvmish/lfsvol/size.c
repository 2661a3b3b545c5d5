// SPDX-License-Identifier: GPL-2.0
/*
 * SIZE arguments: "64M", "1G", "+512M", "8b" (books). Units are powers of
 * 1024; an optional trailing "iB" or "B" is accepted ("64MiB"). A number
 * without a unit is refused: it is too easy to mean MiB (as lvcreate does)
 * and get bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lfsvol.h"

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
	}
	return -1;
}

int lfsvol_parse_size(const char *s, bool allow_sign, struct lfsvol_size *out,
		      char *msg, size_t msglen)
{
	const char *p = s;
	uint64_t v = 0;
	int shift;

	memset(out, 0, sizeof(*out));
	if (allow_sign && (*p == '+' || *p == '-'))
		out->sign = *p++ == '+' ? 1 : -1;
	if (!isdigit((unsigned char)*p)) {
		snprintf(msg, msglen, "invalid SIZE `%s': expected a number with a unit, e.g. 64M, 2G or 8b (books)", s);
		return -EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10) {
			snprintf(msg, msglen, "SIZE `%s' is too large", s);
			return -ERANGE;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v == 0) {
		snprintf(msg, msglen, "SIZE `%s' is zero: give at least one book, e.g. 1b", s);
		return -EINVAL;
	}
	if (!strcmp(p, "b")) {
		out->books = true;
		out->value = v;
		return 0;
	}
	if (!*p) {
		snprintf(msg, msglen, "SIZE `%s' has no unit: write %sK, %sM, %sG, %sT or %sb (books)",
			 s, s, s, s, s, s);
		return -EINVAL;
	}
	shift = unit_shift(*p);
	if (shift < 0 || !(p[1] == '\0' || !strcmp(p + 1, "B") || !strcmp(p + 1, "iB"))) {
		snprintf(msg, msglen, "invalid unit `%s' in SIZE `%s': use K, M, G, T (powers of 1024) or b (books)",
			 p, s);
		return -EINVAL;
	}
	if (v > (UINT64_MAX >> shift)) {
		snprintf(msg, msglen, "SIZE `%s' is too large", s);
		return -ERANGE;
	}
	out->value = v << shift;
	return 0;
}

int lfsvol_size_to_books(const struct lfsvol_size *sz, uint64_t book_size, uint64_t *books)
{
	if (!book_size)
		return -EINVAL;
	if (sz->books)
		*books = sz->value;
	else
		*books = sz->value / book_size + !!(sz->value % book_size);
	if (*books > (1ULL << 20))
		return -ERANGE;
	return 0;
}

const char *lfsvol_fmt_bytes(uint64_t bytes, char *buf, size_t len)
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
