// SPDX-License-Identifier: GPL-2.0
/*
 * The family's commands of the filesystem's upcall channel (upcall.c).
 */

#include "nl.h"

int lfs_cmd_up_register(struct sk_buff *skb, struct genl_info *info)
{
	return lfs_nl_status(info,
			  lfs_upcall_register(info->snd_portid, info->extack));
}

int lfs_cmd_up_unregister(struct sk_buff *skb, struct genl_info *info)
{
	return lfs_nl_status(info,
			  lfs_upcall_unregister(info->snd_portid, info->extack));
}

int lfs_cmd_up_reply(struct sk_buff *skb, struct genl_info *info)
{
	if (lfs_nl_attr_missing(info, LFS_A_UP_ID, "upcall id"))
		return -EINVAL;
	return lfs_nl_status(info, lfs_upcall_reply(info->snd_portid, info->attrs,
						 info->extack));
}

int lfs_cmd_up_get(struct sk_buff *skb, struct genl_info *info)
{
	u32 portid, pending, active = lfs_fs_nr_active();
	struct sk_buff *msg;
	u64 sent, refused;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return lfs_nl_status(info, -ENOMEM);
	lfs_upcall_stats(&portid, &pending, &sent, &refused);
	hdr = lfs_nl_put_reply(msg, info, LFS_CMD_UPCALL_GET);
	if (!hdr || nla_put_u32(msg, LFS_A_UP_PORTID, portid) ||
	    nla_put_u32(msg, LFS_A_UP_PENDING, pending) ||
	    nla_put_u64_64bit(msg, LFS_A_UP_SENT, sent, LFS_A_PAD) ||
	    nla_put_u64_64bit(msg, LFS_A_UP_REFUSED, refused, LFS_A_PAD) ||
	    nla_put_u32(msg, LFS_A_NR_ACTIVE, active)) {
		nlmsg_free(msg);
		return lfs_nl_status(info, -EMSGSIZE);
	}
	genlmsg_end(msg, hdr);
	return lfs_nl_status(info, genlmsg_reply(msg, info));
}
