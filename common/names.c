// SPDX-License-Identifier: MIT
/* Names, keys and numeric ranges shared by every component (lfs_rules.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lfs_rules.h"

static int say(char *msg, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return -err;
}

/* At most 80 bytes of s for a message, control and non-ASCII bytes as \xNN. */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len && o < 80; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'')
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (*s && o + 4 < len) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

static int check_name(const char *what, const char *s, size_t max, bool lead, char *msg, size_t len)
{
	size_t n = strlen(s);
	char b[400];

	if (n == 0)
		return say(msg, len, EINVAL, "%s '' is empty: give 1 to %zu characters", what, max);
	if (n > max)
		return say(msg, len, ENAMETOOLONG, "%s '%s' is %zu characters long: at most %zu",
			   what, shown(s, b, sizeof(b)), n, max);
	if (lead && (s[0] == '.' || s[0] == '-'))
		return say(msg, len, EINVAL, "%s '%s' must not start with '.' or '-'", what,
			   shown(s, b, sizeof(b)));
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return say(msg, len, EINVAL,
				   "%s '%s' may contain only letters, digits, '.', '_' and '-'",
				   what, shown(s, b, sizeof(b)));
	return 0;
}

int lfs_rule_shelf_name(const char *s, char *msg, size_t len)
{
	return check_name("shelf name", s, LFS_NAME_MAX, true, msg, len);
}

int lfs_rule_node_name(const char *s, char *msg, size_t len)
{
	return lfs_rule_name("node name", s, msg, len);
}

int lfs_rule_name(const char *what, const char *s, char *msg, size_t len)
{
	return check_name(what, s, LFS_NODE_NAME_MAX, true, msg, len);
}

int lfs_rule_attr_key(const char *s, char *msg, size_t len)
{
	return check_name("attribute key", s, LFS_ATTR_KEY_MAX, false, msg, len);
}

int lfs_rule_ig(int64_t ig, const char *what, char *msg, size_t len)
{
	if (ig < 0 || ig > LFS_IG_MAX)
		return say(msg, len, ERANGE, "%s %lld is out of range: IG numbers are 0 to %d",
			   what, (long long)ig, LFS_IG_MAX);
	return 0;
}

int lfs_rule_book_size(uint64_t b, char *msg, size_t len)
{
	if (b < LFS_BOOK_SIZE_MIN || b > LFS_BOOK_SIZE_MAX || (b & (b - 1)))
		return say(msg, len, EINVAL,
			   "book size %llu is not a power of two from %llu (2 MiB) to %llu (1 TiB)",
			   (unsigned long long)b, (unsigned long long)LFS_BOOK_SIZE_MIN,
			   (unsigned long long)LFS_BOOK_SIZE_MAX);
	return 0;
}

int lfs_rule_shelf_books(uint64_t books, char *msg, size_t len)
{
	if (books > LFS_SHELF_BOOKS_MAX)
		return say(msg, len, E2BIG, "%llu books is more than a shelf may hold (%u)",
			   (unsigned long long)books, LFS_SHELF_BOOKS_MAX);
	return 0;
}
