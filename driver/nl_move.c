// SPDX-License-Identifier: GPL-2.0
/*
 * The family's BOOK_MOVE command (move.c).
 */

#include "nl.h"

static void *lfs_move_select(struct genl_info *info)
{
	const char *name = nla_data(info->attrs[LFS_A_NAME]);
	struct lfs_shelf *shelf = lfs_shelf_find(name);

	if (!shelf || !lfs_shelf_live(shelf)) {
		NL_SET_ERR_MSG_FMT(info->extack, "no shelf '%s'", name);
		return ERR_PTR(-ENOENT);
	}
	return shelf;
}

static int lfs_move_act(void *shelf, struct genl_info *info,
			struct sk_buff *msg)
{
	struct lfs_book to;

	memcpy(&to, nla_data(info->attrs[LFS_A_BOOKS]), sizeof(to));
	return lfs_book_move(shelf, nla_get_u32(info->attrs[LFS_A_BOOKS_START]),
			     &to, info->extack);
}

int lfs_cmd_book_move(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_move_select,
		.act = lfs_move_act,
	};

	if (lfs_nl_attr_missing(info, LFS_A_NAME, "shelf name") ||
	    lfs_nl_attr_missing(info, LFS_A_BOOKS_START, "book index") ||
	    lfs_nl_attr_missing(info, LFS_A_BOOKS, "target book"))
		return -EINVAL;
	return lfs_nl_locked(info, &cmd);
}
