// SPDX-License-Identifier: GPL-2.0
/*
 * The family's book commands: BOOK_ZERO and BOOK_CHECK (books.c).
 */

#include <linux/bitmap.h>

#include "nl.h"

/* A reply carrying the books of the request whose bit is set in @which. */
static int lfs_books_reply(struct genl_info *info, const struct lfs_book *books,
			   u32 n, const unsigned long *which)
{
	u32 i, k = 0, nz = bitmap_weight(which, n);
	struct sk_buff *msg;
	struct nlattr *out;
	void *hdr;

	msg = genlmsg_new(nla_total_size(nz * sizeof(*books)) + NLMSG_GOODSIZE,
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = lfs_nl_put_reply(msg, info, info->genlhdr->cmd);
	out = hdr ? nla_reserve(msg, LFS_A_BOOKS, nz * sizeof(*books)) : NULL;
	if (!out) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	for_each_set_bit(i, which, n)
		((struct lfs_book *)nla_data(out))[k++] = books[i];
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * BOOK_ZERO replies with the books it zeroed, BOOK_CHECK with those that
 * read as zeroes; both in request order. Neither holds lfs_lock throughout.
 */
int lfs_cmd_books(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[LFS_A_BOOKS];
	const struct lfs_book *books;
	unsigned long *which;
	u32 n;
	int ret;

	if (lfs_nl_attr_missing(info, LFS_A_BOOKS, "book list"))
		return -EINVAL;
	books = nla_data(attr);
	n = nla_len(attr) / sizeof(struct lfs_book);
	which = bitmap_zalloc(n, GFP_KERNEL);
	if (!which)
		return lfs_nl_status(info, -ENOMEM);
	if (info->genlhdr->cmd == LFS_CMD_BOOK_ZERO)
		ret = lfs_books_zero(books, n, which, info->extack);
	else
		ret = lfs_books_check_zero(books, n, which, info->extack);
	if (!ret)
		ret = lfs_books_reply(info, books, n, which);
	bitmap_free(which);
	return lfs_nl_status(info, ret);
}
