/* SPDX-License-Identifier: MIT */
/*
 * The rules shared by every LFS component in userspace: lfsctl, lfsvol, the
 * node agent and the librarian. The kernel's limits are defined once, in
 * driver/uapi/lfs.h; this module applies them, and the kernel applies the
 * same rules on its side (driver/shelf.c). docs/RULES.md states them in
 * words, and tests/rules/rules.t checks that every document agrees.
 *
 * Every checker returns 0 or a negative errno and, on failure, writes a
 * message naming the offending value into msg (which may be NULL).
 */
#ifndef LFS_RULES_H
#define LFS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/lfs.h"

/* Node names (PSK identities) and attribute keys, next to the kernel's shelf names. */
#define LFS_NODE_NAME_MAX 64
#define LFS_ATTR_KEY_MAX 128

/*
 * Shelf and node names: letters, digits, '.', '_' and '-', not starting with
 * '.' or '-' (so never ".", ".." or something read as an option). Attribute
 * keys: the same characters, any first character.
 */
enum lfs_rule {
	LFS_RULE_SHELF_NAME,
	LFS_RULE_NODE_NAME,
	LFS_RULE_ATTR_KEY,
	LFS_RULE_IG,
	LFS_RULE_BOOK_SIZE,
	LFS_RULE_SIZE,
	LFS_RULE_POLICIES,
	LFS_RULE_SHELF_BOOKS,
	LFS_RULE_COUNT,
};

/* The rule as one sentence, with the limits of uapi/lfs.h; the documents quote it. */
const char *lfs_rule_text(enum lfs_rule r, char *buf, size_t len);

int lfs_rule_shelf_name(const char *s, char *msg, size_t len);
int lfs_rule_node_name(const char *s, char *msg, size_t len);
/* Another name under the node name rule (racks, enclosures...): what names it. */
int lfs_rule_name(const char *what, const char *s, char *msg, size_t len);
int lfs_rule_attr_key(const char *s, char *msg, size_t len);
/* 0 .. LFS_IG_MAX; what names the value in the message ("IG", "lfs.igs entry"). */
int lfs_rule_ig(int64_t ig, const char *what, char *msg, size_t len);
/* A power of two in LFS_BOOK_SIZE_MIN .. LFS_BOOK_SIZE_MAX. */
int lfs_rule_book_size(uint64_t bytes, char *msg, size_t len);
/* A shelf's book count: 0 .. LFS_SHELF_BOOKS_MAX. */
int lfs_rule_shelf_books(uint64_t books, char *msg, size_t len);

/* Allocation policies (HPE's names), in the order of the table. */
enum lfs_policy {
	LFS_POL_RANDOM_BOOKS,
	LFS_POL_LOCAL_NODE,
	LFS_POL_NEAREST,
	LFS_POL_NEAREST_REMOTE,
	LFS_POL_NEAREST_ENC,
	LFS_POL_NEAREST_RACK,
	LFS_POL_NONLOCAL_ENC,
	LFS_POL_LZA_ASCENDING,
	LFS_POL_LZA_DESCENDING,
	LFS_POL_REQUEST_IG,
	LFS_POL_SPREAD,
	LFS_POL_COUNT,
};

/* "RandomBooks"...; NULL for a value outside the table. */
const char *lfs_policy_name(int p);
/* Exact spelling, as on the wire and in configuration files. */
int lfs_policy_parse(const char *s, enum lfs_policy *p);
/*
 * Any letter case, for command lines: 0 and *p, or -EINVAL with *hint the
 * closest name (or NULL) and a message naming s.
 */
int lfs_policy_lookup(const char *s, enum lfs_policy *p, const char **hint, char *msg, size_t len);

/* SIZE syntax (lfs_rule_text(LFS_RULE_SIZE)); flags say which forms a caller takes. */
#define LFS_SIZE_SIGN 0x1 /* "+SIZE" and "-SIZE": sign is +1 or -1 */
#define LFS_SIZE_BOOKS 0x2 /* "8b": a number of books */
#define LFS_SIZE_BARE 0x4 /* a number without a unit is bytes */
#define LFS_SIZE_ZERO 0x8 /* zero is a valid size */

struct lfs_size {
	uint64_t value; /* bytes, or books if books */
	bool books;
	int sign; /* 0 unless LFS_SIZE_SIGN and a sign was given */
};

int lfs_size_parse(const char *s, unsigned int flags, struct lfs_size *out, char *msg, size_t len);
/* Books covering sz, rounded up; -ERANGE beyond LFS_SHELF_BOOKS_MAX. */
int lfs_size_books(const struct lfs_size *sz, uint64_t book_size, uint64_t *books);
/* "64 MiB", "1.5 GiB": exact binary units when possible. */
const char *lfs_size_human(uint64_t bytes, char *buf, size_t len);
/* "64M", "8G", or plain bytes: the shortest exact form that parses back. */
const char *lfs_size_short(uint64_t bytes, char *buf, size_t len);

/* IG lists "0,1,3" and "0-3": at most max IGs, each valid, none twice. Returns the count. */
int lfs_ig_list_parse(const char *s, uint32_t *igs, int max, char *msg, size_t len);

/*
 * Takes every FLAG standing before a "--" out of argv[1..] (lfsvol's and
 * lfsctl's --json, anywhere among a command's words), keeping the order of
 * the rest: the new argc; *seen is set if there was one.
 */
int lfs_args_take(int argc, char **argv, const char *flag, bool *seen);

#endif /* LFS_RULES_H */
