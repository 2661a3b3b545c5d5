// SPDX-License-Identifier: MIT
/* The rules in words, built from the limits, for the documents to quote. */
#include <stdio.h>
#include <string.h>

#include "lfs_rules.h"

static const char *policies(char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "The allocation policies are");

	for (int i = 0; i < LFS_POL_COUNT && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s %s", i ? "," : "", lfs_policy_name(i));
	if (o < len)
		snprintf(buf + o, len - o, ".");
	return buf;
}

const char *lfs_rule_text(enum lfs_rule r, char *buf, size_t len)
{
	switch (r) {
	case LFS_RULE_SHELF_NAME:
	case LFS_RULE_NODE_NAME:
		snprintf(
			buf, len,
			"%s names are 1 to %d characters of A-Z a-z 0-9 . _ - and do not start with . or -.",
			r == LFS_RULE_SHELF_NAME ? "Shelf" : "Node",
			r == LFS_RULE_SHELF_NAME ? LFS_NAME_MAX : LFS_NODE_NAME_MAX);
		return buf;
	case LFS_RULE_ATTR_KEY:
		snprintf(buf, len, "Attribute keys are 1 to %d characters of A-Z a-z 0-9 . _ -.",
			 LFS_ATTR_KEY_MAX);
		return buf;
	case LFS_RULE_IG:
		snprintf(buf, len, "IG numbers are 0 to %d.", LFS_IG_MAX);
		return buf;
	case LFS_RULE_BOOK_SIZE:
		snprintf(buf, len, "The book size is a power of two from %llu MiB to %llu TiB.",
			 (unsigned long long)(LFS_BOOK_SIZE_MIN >> 20),
			 (unsigned long long)(LFS_BOOK_SIZE_MAX >> 40));
		return buf;
	case LFS_RULE_SIZE:
		snprintf(
			buf, len,
			"A SIZE is a whole number with a unit K, M, G, T or P (powers of 1024, optionally followed by iB or B), or a number of books written Nb.");
		return buf;
	case LFS_RULE_POLICIES:
		return policies(buf, len);
	case LFS_RULE_SHELF_BOOKS:
		snprintf(buf, len, "A shelf holds at most %u books.", LFS_SHELF_BOOKS_MAX);
		return buf;
	default:
		snprintf(buf, len, "?");
		return buf;
	}
}
