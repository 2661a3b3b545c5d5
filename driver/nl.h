/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family's commands (nl_*.c) and what they share
 * (netlink.c).
 */
#ifndef _LFS_NL_H
#define _LFS_NL_H

#include <net/genetlink.h>

#include "lfs.h"

/* genl_ops.internal_flags */
#define LFS_OP_ADMIN BIT(0)

/* netlink.c */
int lfs_genl_register(const struct genl_ops *ops, unsigned int n_ops);
void *lfs_nl_put(struct sk_buff *skb, u32 portid, u32 seq, int flags, u8 cmd);
void *lfs_nl_put_reply(struct sk_buff *msg, struct genl_info *info, u8 cmd);
bool lfs_nl_attr_missing(struct genl_info *info, int attr, const char *what);
int lfs_nl_status(struct genl_info *info, int ret);

/*
 * A command on one object (lfs_nl_locked()): @select returns the object the
 * request names or an ERR_PTR, called with lfs_lock held; @act acts on it,
 * still under lfs_lock, and fills @msg, a reply of @reply_size bytes (NULL
 * if 0).
 */
struct lfs_nl_cmd {
	void *(*select)(struct genl_info *info);
	int (*act)(void *obj, struct genl_info *info, struct sk_buff *msg);
	size_t reply_size;
};

int lfs_nl_locked(struct genl_info *info, const struct lfs_nl_cmd *cmd);

/* nl_fabric.c */
int lfs_cmd_attach(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_label(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_detach(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_fabric_get(struct sk_buff *skb, struct genl_info *info);
int lfs_dump_fabrics(struct sk_buff *skb, struct netlink_callback *cb);

/* nl_shelf.c */
int lfs_cmd_stage(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_shrink(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_remove(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_shelf_get(struct sk_buff *skb, struct genl_info *info);
int lfs_dump_shelves(struct sk_buff *skb, struct netlink_callback *cb);

/* nl_books.c */
int lfs_cmd_books(struct sk_buff *skb, struct genl_info *info);

/* nl_move.c */
int lfs_cmd_book_move(struct sk_buff *skb, struct genl_info *info);

/* nl_lease.c */
int lfs_cmd_renew(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_lease_get(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_fence(struct sk_buff *skb, struct genl_info *info);

/* nl_upcall.c */
int lfs_cmd_up_register(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_up_unregister(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_up_reply(struct sk_buff *skb, struct genl_info *info);
int lfs_cmd_up_get(struct sk_buff *skb, struct genl_info *info);

#endif /* _LFS_NL_H */
