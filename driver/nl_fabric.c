// SPDX-License-Identifier: GPL-2.0
/*
 * The family's fabric device commands: attach, label, detach, get, dump.
 */

#include <linux/types.h>
#include <linux/kdev_t.h>

#include "nl.h"

/* LFS_A_BAD, if the fabric has bad ranges (bad.c); they are only added. */
static int lfs_fabric_put_bad(struct sk_buff *skb, struct lfs_fabric *fabric)
{
	struct nlattr *nla;
	unsigned int n;

	/* Pairs with lfs_bad_add_locked(): entries below n are written. */
	n = smp_load_acquire(&fabric->nr_bad);
	if (!n)
		return 0;
	nla = nla_reserve_64bit(skb, LFS_A_BAD,
				n * sizeof(struct lfs_bad_range), LFS_A_PAD);
	if (!nla)
		return -EMSGSIZE;
	lfs_bad_get(fabric, nla_data(nla), n);
	return 0;
}

static int lfs_fabric_fill(struct sk_buff *skb, struct lfs_fabric *fabric,
			   u32 portid, u32 seq, int flags,
			   struct netlink_callback *cb)
{
	void *hdr;

	hdr = lfs_nl_put(skb, portid, seq, flags, LFS_CMD_FABRIC_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_u32(skb, LFS_A_IG, fabric->ig) ||
	    nla_put_string(skb, LFS_A_PATH, fabric->path) ||
	    nla_put_u32(skb, LFS_A_DEVT, new_encode_dev(fabric->devt)) ||
	    nla_put_u64_64bit(skb, LFS_A_BOOK_SIZE, fabric->book_size,
			      LFS_A_PAD) ||
	    nla_put_u64_64bit(skb, LFS_A_OFFSET, fabric->offset, LFS_A_PAD) ||
	    nla_put_u64_64bit(skb, LFS_A_DEV_SIZE, fabric->dev_size,
			      LFS_A_PAD) ||
	    nla_put_u32(skb, LFS_A_NR_BOOKS, fabric->nr_books) ||
	    nla_put_u32(skb, LFS_A_BOOKS_USED, fabric->nr_used) ||
	    nla_put_u8(skb, LFS_A_DAX, !!fabric->dax_dev) ||
	    nla_put_s32(skb, LFS_A_NUMA_NODE, fabric->numa_node) ||
	    nla_put_u8(skb, LFS_A_VOLATILE, fabric->volatile_mem) ||
	    nla_put_u8(skb, LFS_A_DEVDAX, lfs_fabric_devdax(fabric)) ||
	    (fabric->labelled &&
	     nla_put(skb, LFS_A_FABRIC_UUID, LFS_UUID_LEN, &fabric->fabric_uuid)) ||
	    lfs_fabric_put_bad(skb, fabric))
		goto out_cancel;
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int lfs_fabric_attach_act(void *none, struct genl_info *info,
				 struct sk_buff *msg)
{
	struct nlattr **a = info->attrs;
	u64 offset = a[LFS_A_OFFSET] ? nla_get_u64(a[LFS_A_OFFSET]) : 0;

	return lfs_fabric_attach(nla_data(a[LFS_A_PATH]),
				 nla_get_u32(a[LFS_A_IG]),
				 nla_get_u64(a[LFS_A_BOOK_SIZE]), offset,
				 a[LFS_A_FABRIC_UUID] ?
					 nla_data(a[LFS_A_FABRIC_UUID]) :
					 NULL,
				 info->extack);
}

int lfs_cmd_attach(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = { .act = lfs_fabric_attach_act };

	if (lfs_nl_attr_missing(info, LFS_A_PATH, "device path") ||
	    lfs_nl_attr_missing(info, LFS_A_IG, "interleave group") ||
	    lfs_nl_attr_missing(info, LFS_A_BOOK_SIZE, "book size"))
		return -EINVAL;
	return lfs_nl_locked(info, &cmd);
}

static int lfs_fabric_label_act(void *none, struct genl_info *info,
				struct sk_buff *msg)
{
	struct nlattr **a = info->attrs;

	return lfs_fabric_label(nla_data(a[LFS_A_PATH]),
				nla_get_u32(a[LFS_A_IG]),
				nla_get_u64(a[LFS_A_BOOK_SIZE]),
				nla_get_u64(a[LFS_A_OFFSET]),
				nla_data(a[LFS_A_FABRIC_UUID]), info->extack);
}

int lfs_cmd_label(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = { .act = lfs_fabric_label_act };

	if (lfs_nl_attr_missing(info, LFS_A_PATH, "device path") ||
	    lfs_nl_attr_missing(info, LFS_A_IG, "interleave group") ||
	    lfs_nl_attr_missing(info, LFS_A_BOOK_SIZE, "book size") ||
	    lfs_nl_attr_missing(info, LFS_A_OFFSET, "data offset") ||
	    lfs_nl_attr_missing(info, LFS_A_FABRIC_UUID, "fabric UUID"))
		return -EINVAL;
	return lfs_nl_locked(info, &cmd);
}

/* The fabric named by path or interleave group; lfs_lock held. */
static void *lfs_fabric_select(struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct lfs_fabric *fabric;
	u32 ig;

	if (!!a[LFS_A_PATH] == !!a[LFS_A_IG]) {
		NL_SET_ERR_MSG(
			info->extack,
			"give either the device path or the interleave group, not both");
		return ERR_PTR(-EINVAL);
	}
	if (a[LFS_A_PATH])
		return lfs_fabric_find_path(nla_data(a[LFS_A_PATH]),
					    info->extack);
	ig = nla_get_u32(a[LFS_A_IG]);
	fabric = lfs_fabric_find(ig);
	if (!fabric) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "interleave group %u is not attached", ig);
		return ERR_PTR(-ENODEV);
	}
	return fabric;
}

static int lfs_fabric_detach_act(void *fabric, struct genl_info *info,
				 struct sk_buff *msg)
{
	return lfs_fabric_detach(fabric, info->extack);
}

int lfs_cmd_detach(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_fabric_select,
		.act = lfs_fabric_detach_act,
	};

	return lfs_nl_locked(info, &cmd);
}

static int lfs_fabric_get_act(void *fabric, struct genl_info *info,
			      struct sk_buff *msg)
{
	return lfs_fabric_fill(msg, fabric, info->snd_portid, info->snd_seq, 0,
			       NULL);
}

int lfs_cmd_fabric_get(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_fabric_select,
		.act = lfs_fabric_get_act,
		.reply_size = NLMSG_GOODSIZE,
	};

	return lfs_nl_locked(info, &cmd);
}

/* cb->args[0]: the interleave group to continue from. */
int lfs_dump_fabrics(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lfs_fabric *fabric;

	mutex_lock(&lfs_lock);
	cb->seq = lfs_generation;
	list_for_each_entry(fabric, &lfs_fabrics, node) {
		if (fabric->ig < cb->args[0])
			continue;
		if (lfs_fabric_fill(skb, fabric, NETLINK_CB(cb->skb).portid,
				    cb->nlh->nlmsg_seq, NLM_F_MULTI, cb))
			break;
		cb->args[0] = fabric->ig + 1;
	}
	mutex_unlock(&lfs_lock);
	return skb->len;
}
