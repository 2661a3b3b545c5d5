// SPDX-License-Identifier: GPL-2.0
/*
 * The family's lease and fencing commands: renew, get, fence (lease.c,
 * fence.c).
 */

#include "nl.h"

int lfs_cmd_renew(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int action = -1, ret;
	s64 watch = -1;
	u32 ms;

	if (lfs_nl_attr_missing(info, LFS_A_LEASE_START, "renewal start") ||
	    lfs_nl_attr_missing(info, LFS_A_LEASE_MS, "lease length"))
		return -EINVAL;
	if (a[LFS_A_FENCE_ACTION])
		action = nla_get_u32(a[LFS_A_FENCE_ACTION]);
	if (a[LFS_A_FENCE_WATCHDOG_MS])
		watch = nla_get_u32(a[LFS_A_FENCE_WATCHDOG_MS]);
	ms = nla_get_u32(a[LFS_A_LEASE_MS]);
	/* a renewal must not wait behind a long request: only giving up does */
	if (!ms)
		mutex_lock(&lfs_lock);
	ret = lfs_lease_renew(nla_get_u64(a[LFS_A_LEASE_START]), ms, action,
			      watch, info->extack);
	if (!ms)
		mutex_unlock(&lfs_lock);
	return lfs_nl_status(info, ret);
}

/* The fence latency of the lease's lapses, once one was measured. */
static int lfs_put_fence_stats(struct sk_buff *msg)
{
	struct lfs_fence_stats st;

	lfs_fence_stats_get(&st);
	if (nla_put_u32(msg, LFS_A_FENCE_COUNT, st.count))
		return -EMSGSIZE;
	if (!st.count)
		return 0;
	if (nla_put_u64_64bit(msg, LFS_A_FENCE_LAST_NS, st.last_ns, LFS_A_PAD) ||
	    nla_put_u64_64bit(msg, LFS_A_FENCE_MAX_NS, st.max_ns, LFS_A_PAD) ||
	    nla_put_u64_64bit(msg, LFS_A_FENCE_DONE_LAST_NS, st.done_last_ns,
			      LFS_A_PAD) ||
	    nla_put_u64_64bit(msg, LFS_A_FENCE_DONE_MAX_NS, st.done_max_ns,
			      LFS_A_PAD) ||
	    nla_put(msg, LFS_A_FENCE_HIST, sizeof(st.hist), st.hist))
		return -EMSGSIZE;
	return 0;
}

static int lfs_lease_get_act(void *none, struct genl_info *info,
			     struct sk_buff *msg)
{
	u32 ms, action;
	s64 left;
	void *hdr;

	lfs_lease_get(&ms, &left, &action);
	hdr = lfs_nl_put_reply(msg, info, LFS_CMD_LEASE_GET);
	if (!hdr || nla_put_u32(msg, LFS_A_LEASE_MS, ms) ||
	    nla_put_s64(msg, LFS_A_LEASE_LEFT, left, LFS_A_PAD) ||
	    nla_put_u32(msg, LFS_A_FENCE_ACTION, action) ||
	    nla_put_u32(msg, LFS_A_FENCE_WATCHDOG_MS, lfs_fence_watch_ms()) ||
	    nla_put_u32(msg, LFS_A_NR_FENCED, lfs_fenced_shelves()) ||
	    lfs_put_fence_stats(msg))
		return -EMSGSIZE;
	genlmsg_end(msg, hdr);
	return 0;
}

int lfs_cmd_lease_get(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.act = lfs_lease_get_act,
		.reply_size = NLMSG_GOODSIZE,
	};

	return lfs_nl_locked(info, &cmd);
}

/*
 * The file of a UUID open through the filesystem, whatever its name here:
 * a rename elsewhere is seen here only at the next lookup, and a file open
 * under two names keeps the first (revoked outside lfs_lock).
 */
static int lfs_cmd_fence_uuid(struct genl_info *info, const char *why)
{
	const uuid_t *uuid = nla_data(info->attrs[LFS_A_UUID]);
	bool open;

	mutex_lock(&lfs_lock);
	open = lfs_fs_uuid_open(uuid);
	mutex_unlock(&lfs_lock);
	if (!open) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "no file of UUID %pUb is open here", uuid);
		return lfs_nl_status(info, -ENOENT);
	}
	lfs_fs_fence(NULL, uuid, why, NULL);
	return lfs_nl_status(info, 0);
}

/* A shelf, or else a file open through the filesystem (revoked outside lfs_lock). */
int lfs_cmd_fence(struct sk_buff *skb, struct genl_info *info)
{
	static const char why[] = "asked to by the node agent";
	struct lfs_shelf *shelf;
	bool found, file = false;
	const char *name;

	if (info->attrs[LFS_A_UUID])
		return lfs_cmd_fence_uuid(info, why);
	if (lfs_nl_attr_missing(info, LFS_A_NAME, "shelf name"))
		return -EINVAL;
	name = nla_data(info->attrs[LFS_A_NAME]);
	mutex_lock(&lfs_lock);
	shelf = lfs_shelf_find(name);
	found = shelf && lfs_shelf_live(shelf);
	if (found)
		lfs_shelf_fence(shelf, why);
	else
		file = lfs_fs_name_open(name);
	mutex_unlock(&lfs_lock);
	if (file) {
		lfs_fs_fence(name, NULL, why, NULL);
	} else if (!found) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "no shelf '%s', nor a file of that name open through the lfs filesystem",
				   name);
		return lfs_nl_status(info, -ENOENT);
	}
	return lfs_nl_status(info, 0);
}
