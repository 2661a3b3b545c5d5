// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "lfs" (the protocol is specified in uapi/lfs.h):
 * the family itself, the messages of the module, and what every command
 * shares. Its commands are registered by nl_ops.c; each subject has its
 * handlers in a file of its own (nl_fabric.c, nl_shelf.c, nl_books.c,
 * nl_lease.c, nl_upcall.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <net/net_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "nl.h"

/* Bumped on every change, for dump consistency; never 0. */
u32 lfs_generation = 1;

static int lfs_pre_doit(const struct lfs_genl_doit_ops *ops, struct sk_buff *skb,
			struct genl_info *info)
{
	if ((ops->internal_flags & LFS_OP_ADMIN) &&
	    !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "this command needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	return 0;
}

/*
 * parallel_ops: every handler and dump takes lfs_lock for what it touches,
 * so genl_mutex need not serialise them too; a BOOK_CHECK, which drops
 * lfs_lock every LFS_CHECK_PAGES pages, then does not hold up other requests
 * for the whole time it reads. (Unregistering the family still waits for
 * requests in flight: genl_rcv holds cb_lock for reading.) The commands are
 * set by lfs_genl_register().
 */
/* Events (LFS_CMD_FABRIC_BAD), open to everyone: the family's group 0. */
static const struct genl_multicast_group lfs_mcgrps[] = {
	{ .name = LFS_MCGRP_EVENTS },
};

static struct genl_family lfs_family __ro_after_init = {
	.name = LFS_GENL_NAME,
	.version = LFS_GENL_VERSION,
	.maxattr = LFS_A_MAX,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.pre_doit = lfs_pre_doit,
	.mcgrps = lfs_mcgrps,
	.n_mcgrps = ARRAY_SIZE(lfs_mcgrps),
};

int __init lfs_genl_register(const struct genl_ops *ops, unsigned int n_ops)
{
	lfs_family.ops = ops;
	lfs_family.n_ops = n_ops;
	return genl_register_family(&lfs_family);
}

void lfs_genl_exit(void)
{
	genl_unregister_family(&lfs_family);
}

/* The header of a message of the family, to @portid (0: an upcall request). */
void *lfs_nl_put(struct sk_buff *skb, u32 portid, u32 seq, int flags, u8 cmd)
{
	return genlmsg_put(skb, portid, seq, &lfs_family, flags, cmd);
}

void *lfs_nl_put_reply(struct sk_buff *msg, struct genl_info *info, u8 cmd)
{
	return genlmsg_put_reply(msg, info, &lfs_family, 0, cmd);
}

/* An upcall request (a message of the family from the kernel). */
void *lfs_genl_put(struct sk_buff *skb, u8 cmd)
{
	return lfs_nl_put(skb, 0, 0, 0, cmd);
}

int lfs_genl_unicast(struct sk_buff *skb, u32 portid)
{
	return genlmsg_unicast(&init_net, skb, portid);
}

/* To the events group; nobody listening is no error (and frees the skb). */
void lfs_genl_event(struct sk_buff *skb)
{
	genlmsg_multicast(&lfs_family, skb, 0, 0, GFP_ATOMIC);
}

bool lfs_nl_attr_missing(struct genl_info *info, int attr, const char *what)
{
	if (!GENL_REQ_ATTR_CHECK(info, attr))
		return false;
	NL_SET_ERR_MSG_FMT(info->extack, "missing attribute: %s", what);
	return true;
}

/*
 * Every handler returns through here, so that every error has a message: the
 * handlers explain what they refuse, and anything else (running out of
 * memory, an error from the block layer) gets at least its code.
 */
int lfs_nl_status(struct genl_info *info, int ret)
{
	if (ret < 0 && info->extack && !info->extack->_msg)
		NL_SET_ERR_MSG_FMT(info->extack,
				   "command %u failed with error %d",
				   info->genlhdr->cmd, ret);
	return ret;
}

/*
 * A command on one object: with lfs_lock held, select the object the
 * request names (none if no @cmd->select) and act on it; then send the
 * reply @cmd->act filled, if the command has one. The reply is allocated
 * before the lock is taken.
 */
int lfs_nl_locked(struct genl_info *info, const struct lfs_nl_cmd *cmd)
{
	struct sk_buff *msg = NULL;
	void *obj = NULL;
	int ret;

	if (cmd->reply_size) {
		msg = genlmsg_new(cmd->reply_size, GFP_KERNEL);
		if (!msg)
			return lfs_nl_status(info, -ENOMEM);
	}
	mutex_lock(&lfs_lock);
	if (cmd->select)
		obj = cmd->select(info);
	ret = IS_ERR(obj) ? PTR_ERR(obj) : cmd->act(obj, info, msg);
	mutex_unlock(&lfs_lock);
	if (!msg)
		return lfs_nl_status(info, ret);
	if (ret) {
		nlmsg_free(msg);
		return lfs_nl_status(info, ret);
	}
	return lfs_nl_status(info, genlmsg_reply(msg, info));
}
