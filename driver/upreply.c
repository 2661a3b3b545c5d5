// SPDX-License-Identifier: GPL-2.0
/*
 * Upcall replies: what each operation's reply must carry (uapi/lfs.h), taken
 * into the caller's struct lfs_up_result. The server is not trusted beyond
 * what a reply may carry: attributes are checked for sense, book maps
 * against the fabric devices (fs_map.c), listings against the name rule.
 * The netlink policy has checked every attribute's type and size already.
 */
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/xattr.h>

#include "fs.h"

#define LFS_R_ATTRS BIT(0)
#define LFS_R_MAP BIT(1)
#define LFS_R_LIST BIT(2)
#define LFS_R_VALUE BIT(3)
#define LFS_R_NAMES BIT(4)
#define LFS_R_STATFS BIT(5)

static const u8 lfs_up_results[LFS_UP_MAX + 1] = {
	[LFS_UP_LOOKUP] = LFS_R_ATTRS,
	[LFS_UP_CREATE] = LFS_R_ATTRS,
	[LFS_UP_OPEN] = LFS_R_ATTRS | LFS_R_MAP,
	[LFS_UP_CREATE_OPEN] = LFS_R_ATTRS | LFS_R_MAP,
	[LFS_UP_RESIZE] = LFS_R_ATTRS | LFS_R_MAP,
	[LFS_UP_LIST] = LFS_R_LIST,
	[LFS_UP_GETXATTR] = LFS_R_VALUE,
	[LFS_UP_LISTXATTR] = LFS_R_NAMES,
	[LFS_UP_STATFS] = LFS_R_STATFS,
};

static const char *const lfs_up_attr_names[] = {
	[LFS_A_UUID] = "uuid",
	[LFS_A_INO] = "ino",
	[LFS_A_SIZE] = "size",
	[LFS_A_NR_BOOKS] = "nr_books",
	[LFS_A_BOOK_SIZE] = "book_size",
	[LFS_A_MTIME] = "mtime",
	[LFS_A_CTIME] = "ctime",
	[LFS_A_WRITABLE] = "writable",
	[LFS_A_XATTR_VALUE] = "xattr_value",
	[LFS_A_TOTAL_BYTES] = "total_bytes",
	[LFS_A_FREE_BYTES] = "free_bytes",
	[LFS_A_NR_FILES] = "nr_files",
};

static int lfs_up_need(struct nlattr **a, const int *types, int n,
		       struct netlink_ext_ack *extack)
{
	int i;

	for (i = 0; i < n; i++) {
		if (a[types[i]])
			continue;
		NL_SET_ERR_ATTR_MISS(extack, NULL, types[i]);
		NL_SET_ERR_MSG_FMT(extack, "missing attribute: %s",
				   lfs_up_attr_names[types[i]]);
		return -EINVAL;
	}
	return 0;
}

static int lfs_up_take_attrs(struct lfs_up_attrs *at, u32 op, struct nlattr **a,
			     struct netlink_ext_ack *extack)
{
	static const int need[] = { LFS_A_UUID, LFS_A_INO, LFS_A_SIZE,
				    LFS_A_NR_BOOKS, LFS_A_BOOK_SIZE,
				    LFS_A_MTIME, LFS_A_CTIME, LFS_A_WRITABLE };
	int ret = lfs_up_need(a, need, ARRAY_SIZE(need), extack);

	if (ret)
		return ret;
	memcpy(&at->uuid, nla_data(a[LFS_A_UUID]), LFS_UUID_LEN);
	at->ino = nla_get_u64(a[LFS_A_INO]);
	at->size = nla_get_u64(a[LFS_A_SIZE]);
	at->nr_books = nla_get_u32(a[LFS_A_NR_BOOKS]);
	at->book_size = nla_get_u64(a[LFS_A_BOOK_SIZE]);
	at->mtime = nla_get_u64(a[LFS_A_MTIME]);
	at->ctime = nla_get_u64(a[LFS_A_CTIME]);
	at->writable = nla_get_u8(a[LFS_A_WRITABLE]);
	at->leased = (op == LFS_UP_OPEN || op == LFS_UP_CREATE_OPEN) &&
		     nla_get_flag(a[LFS_A_LEASED]);
	if (uuid_is_null(&at->uuid)) {
		NL_SET_ERR_MSG(extack, "the null UUID is not a shelf's");
		return -EINVAL;
	}
	if (at->nr_books &&
	    (!is_power_of_2(at->book_size) ||
	     at->book_size < LFS_BOOK_SIZE_MIN ||
	     at->book_size > LFS_BOOK_SIZE_MAX)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "book size %llu is not a power of two from 2 MiB to 1 TiB",
				   at->book_size);
		return -EINVAL;
	}
	if (at->size > (u64)at->nr_books * at->book_size) {
		NL_SET_ERR_MSG_FMT(extack,
				   "size %llu does not fit in %u books of %llu bytes",
				   at->size, at->nr_books, at->book_size);
		return -EINVAL;
	}
	return 0;
}

/* One part of a book map; the last one is checked against the fabrics. */
static int lfs_up_take_books(struct lfs_up_result *r, const struct lfs_fmap *base,
			     struct nlattr **a, bool first, bool more,
			     struct netlink_ext_ack *extack)
{
	u32 total = r->attrs.nr_books, start, n;

	if (first && total) {
		r->books = kvmalloc_array(total, sizeof(*r->books), GFP_KERNEL);
		if (!r->books)
			return -ENOMEM;
	}
	if (a[LFS_A_BOOKS]) {
		start = a[LFS_A_BOOKS_START] ?
				nla_get_u32(a[LFS_A_BOOKS_START]) : 0;
		n = nla_len(a[LFS_A_BOOKS]) / sizeof(struct lfs_book);
		if (start != r->nr_books) {
			NL_SET_ERR_MSG_FMT(extack,
					   "this part of the book map starts at book %u, not %u",
					   start, r->nr_books);
			return -EINVAL;
		}
		if (n > total - r->nr_books) {
			NL_SET_ERR_MSG_FMT(extack,
					   "more books than nr_books (%u)", total);
			return -EINVAL;
		}
		memcpy(r->books + start, nla_data(a[LFS_A_BOOKS]),
		       n * sizeof(*r->books));
		r->nr_books += n;
	}
	if (more)
		return 0;
	if (r->nr_books != total) {
		NL_SET_ERR_MSG_FMT(extack, "the book map has %u books, not %u",
				   r->nr_books, total);
		return -EINVAL;
	}
	return lfs_fmap_check(r->books, total, r->attrs.book_size, base, extack);
}

static int lfs_up_take_entry(struct lfs_up_result *r, const struct nlattr *e,
			     struct netlink_ext_ack *extack)
{
	struct nlattr *name = nla_find_nested(e, LFS_A_NAME);
	struct nlattr *ino = nla_find_nested(e, LFS_A_INO);
	struct lfs_up_entry *grown;
	u32 cap;

	if (!name || !ino) {
		NL_SET_ERR_MSG(extack, "an entry needs a name and an ino");
		return -EINVAL;
	}
	if (!lfs_name_valid(nla_data(name))) {
		NL_SET_ERR_MSG_FMT(extack, "entry '%s' is not a shelf name",
				   (char *)nla_data(name));
		return -EINVAL;
	}
	if (r->nr_entries == r->entries_cap) {
		if (r->entries_cap == LFS_LIST_MAX) {
			NL_SET_ERR_MSG_FMT(extack, "more than %u entries",
					   LFS_LIST_MAX);
			return -E2BIG;
		}
		cap = min_t(u32, max(64U, 2 * r->entries_cap), LFS_LIST_MAX);
		grown = kvmalloc_array(cap, sizeof(*grown), GFP_KERNEL);
		if (!grown)
			return -ENOMEM;
		if (r->nr_entries)
			memcpy(grown, r->entries,
			       r->nr_entries * sizeof(*grown));
		kvfree(r->entries);
		r->entries = grown;
		r->entries_cap = cap;
	}
	strscpy(r->entries[r->nr_entries].name, nla_data(name), LFS_NAME_MAX + 1);
	r->entries[r->nr_entries++].ino = nla_get_u64(ino);
	return 0;
}

static int lfs_up_take_entries(struct lfs_up_result *r, const struct nlattr *list,
			       struct netlink_ext_ack *extack)
{
	const struct nlattr *e;
	int rem, ret;

	if (!list)
		return 0;
	nla_for_each_nested(e, list, rem) {
		ret = lfs_up_take_entry(r, e, extack);
		if (ret)
			return ret;
	}
	return 0;
}

/* LISTXATTR's names: NUL-terminated, each in the user. namespace. */
static int lfs_up_check_names(const char *p, u32 len,
			      struct netlink_ext_ack *extack)
{
	const char *end = p + len;
	size_t n;

	if (len && end[-1]) {
		NL_SET_ERR_MSG(extack, "the xattr names do not end with a NUL");
		return -EINVAL;
	}
	for (; p < end; p += n + 1) {
		n = strlen(p);
		if (n <= XATTR_USER_PREFIX_LEN || n > XATTR_NAME_MAX ||
		    strncmp(p, XATTR_USER_PREFIX, XATTR_USER_PREFIX_LEN)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "xattr name '%.*s' is not user.NAME of at most %d characters",
					   (int)min_t(size_t, n, 64), p,
					   XATTR_NAME_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

static int lfs_up_take_blob(struct lfs_up_result *r, const struct nlattr *attr)
{
	r->len = nla_len(attr);
	r->value = kvmalloc(max(r->len, 1U), GFP_KERNEL);
	if (!r->value)
		return -ENOMEM;
	memcpy(r->value, nla_data(attr), r->len);
	return 0;
}

static int lfs_up_take_statfs(struct lfs_up_result *r, struct nlattr **a,
			      struct netlink_ext_ack *extack)
{
	static const int need[] = { LFS_A_TOTAL_BYTES, LFS_A_FREE_BYTES,
				    LFS_A_NR_FILES };
	int ret = lfs_up_need(a, need, ARRAY_SIZE(need), extack);

	if (ret)
		return ret;
	r->total = nla_get_u64(a[LFS_A_TOTAL_BYTES]);
	r->free = nla_get_u64(a[LFS_A_FREE_BYTES]);
	r->files = nla_get_u64(a[LFS_A_NR_FILES]);
	if (r->free > r->total) {
		NL_SET_ERR_MSG_FMT(extack, "free bytes %llu exceed the total %llu",
				   r->free, r->total);
		return -EINVAL;
	}
	return 0;
}

static int lfs_up_take_once(struct lfs_up_result *r, u8 what, struct nlattr **a,
			    struct netlink_ext_ack *extack)
{
	static const int value[] = { LFS_A_XATTR_VALUE };
	int ret;

	if (what & LFS_R_VALUE) {
		ret = lfs_up_need(a, value, 1, extack);
		return ret ? ret : lfs_up_take_blob(r, a[LFS_A_XATTR_VALUE]);
	}
	if ((what & LFS_R_NAMES) && a[LFS_A_XATTR_NAMES]) {
		ret = lfs_up_check_names(nla_data(a[LFS_A_XATTR_NAMES]),
					 nla_len(a[LFS_A_XATTR_NAMES]), extack);
		return ret ? ret : lfs_up_take_blob(r, a[LFS_A_XATTR_NAMES]);
	}
	if (what & LFS_R_STATFS)
		return lfs_up_take_statfs(r, a, extack);
	return 0;
}

/*
 * Take one reply message of a successful @op into @r. @first: the first
 * message of the reply; @more: another follows. @base: the map a file open
 * here has (OPEN and RESIZE). Returns 0 or an error for the server (the
 * caller gets EIO).
 */
int lfs_up_reply_take(struct lfs_up_result *r, u32 op,
		      const struct lfs_fmap *base, struct nlattr **a,
		      bool first, bool more, struct netlink_ext_ack *extack)
{
	u8 what = op <= LFS_UP_MAX ? lfs_up_results[op] : 0;
	int ret;

	if (more && !(what & (LFS_R_MAP | LFS_R_LIST))) {
		NL_SET_ERR_MSG_FMT(extack,
				   "operation %u answers in one message (no more)",
				   op);
		return -EINVAL;
	}
	if (first && (what & LFS_R_ATTRS)) {
		ret = lfs_up_take_attrs(&r->attrs, op, a, extack);
		if (ret)
			return ret;
	}
	if (what & LFS_R_MAP)
		return lfs_up_take_books(r, base, a, first, more, extack);
	if (what & LFS_R_LIST)
		return lfs_up_take_entries(r, a[LFS_A_ENTRIES], extack);
	return first ? lfs_up_take_once(r, what, a, extack) : 0;
}
