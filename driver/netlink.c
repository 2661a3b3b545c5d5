// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "lfs"; the protocol is specified in uapi/lfs.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/kdev_t.h>
#include <net/net_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "lfs.h"

/* genl_ops.internal_flags */
#define LFS_OP_ADMIN BIT(0)

static struct genl_family lfs_family;

static struct netlink_range_validation lfs_ig_range = {
	.max = LFS_IG_MAX,
};

static struct netlink_range_validation lfs_nr_books_range = {
	.max = LFS_SHELF_BOOKS_MAX,
};

static int lfs_books_validate(const struct nlattr *attr,
			      struct netlink_ext_ack *extack)
{
	if (!nla_len(attr) || nla_len(attr) % sizeof(struct lfs_book)) {
		NL_SET_ERR_MSG_ATTR(
			extack, attr,
			"book list length is not a non-zero multiple of 8 bytes");
		return -EINVAL;
	}
	return 0;
}

#define LFS_POLICY_PATH                                         \
	{                                                       \
		.type = NLA_NUL_STRING, .len = LFS_PATH_MAX - 1 \
	}
#define LFS_POLICY_IG NLA_POLICY_FULL_RANGE(NLA_U32, &lfs_ig_range)
#define LFS_POLICY_NAME                                     \
	{                                                   \
		.type = NLA_NUL_STRING, .len = LFS_NAME_MAX \
	}
#define LFS_POLICY_BOOKS                                       \
	NLA_POLICY_VALIDATE_FN(NLA_BINARY, lfs_books_validate, \
			       LFS_BOOKS_PER_ATTR * sizeof(struct lfs_book))

static const struct nla_policy lfs_attach_policy[LFS_A_MAX + 1] = {
	[LFS_A_PATH] = LFS_POLICY_PATH,
	[LFS_A_IG] = LFS_POLICY_IG,
	[LFS_A_BOOK_SIZE] = { .type = NLA_U64 },
	[LFS_A_OFFSET] = { .type = NLA_U64 },
	[LFS_A_FABRIC_UUID] = NLA_POLICY_EXACT_LEN(LFS_UUID_LEN),
};

static const struct nla_policy lfs_fabric_policy[LFS_A_MAX + 1] = {
	[LFS_A_PATH] = LFS_POLICY_PATH,
	[LFS_A_IG] = LFS_POLICY_IG,
};

static const struct nla_policy lfs_create_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_UUID] = NLA_POLICY_EXACT_LEN(LFS_UUID_LEN),
	[LFS_A_BOOKS] = LFS_POLICY_BOOKS,
	[LFS_A_MORE] = { .type = NLA_FLAG },
	[LFS_A_ZEROED] = { .type = NLA_FLAG },
	[LFS_A_LEASED] = { .type = NLA_FLAG },
};

static const struct nla_policy lfs_extend_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_BOOKS] = LFS_POLICY_BOOKS,
	[LFS_A_MORE] = { .type = NLA_FLAG },
};

static const struct nla_policy lfs_shrink_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_NR_BOOKS] = { .type = NLA_U32 },
};

static const struct nla_policy lfs_name_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
};

static const struct nla_policy lfs_fence_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_UUID] = NLA_POLICY_EXACT_LEN(LFS_UUID_LEN),
};

static const struct nla_policy lfs_shelf_get_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_BOOKS_START] = { .type = NLA_U32 },
};

static const struct nla_policy lfs_books_policy[LFS_A_MAX + 1] = {
	[LFS_A_BOOKS] = LFS_POLICY_BOOKS,
};

static const struct nla_policy lfs_renew_policy[LFS_A_MAX + 1] = {
	[LFS_A_LEASE_START] = { .type = NLA_U64 },
	[LFS_A_LEASE_MS] = { .type = NLA_U32 },
	[LFS_A_FENCE_ACTION] = NLA_POLICY_MAX(NLA_U32, LFS_FENCE_EIO),
};

static const struct nla_policy lfs_none_policy[LFS_A_MAX + 1] = {};

/* One entry of an upcall LIST reply (LFS_A_ENTRIES). */
static const struct nla_policy lfs_entry_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_INO] = NLA_POLICY_MIN(NLA_U64, 2),
};

/* Every attribute any upcall reply may carry; upreply.c checks the rest. */
static const struct nla_policy lfs_up_reply_policy[LFS_A_MAX + 1] = {
	[LFS_A_UP_ID] = { .type = NLA_U32 },
	[LFS_A_UP_ERRNO] = { .type = NLA_U32 }, /* range: lfs_upcall_reply() */
	[LFS_A_MORE] = { .type = NLA_FLAG },
	[LFS_A_UUID] = NLA_POLICY_EXACT_LEN(LFS_UUID_LEN),
	[LFS_A_INO] = NLA_POLICY_MIN(NLA_U64, 2),
	[LFS_A_SIZE] = { .type = NLA_U64 },
	[LFS_A_NR_BOOKS] = NLA_POLICY_FULL_RANGE(NLA_U32, &lfs_nr_books_range),
	[LFS_A_BOOK_SIZE] = { .type = NLA_U64 },
	[LFS_A_MTIME] = { .type = NLA_U64 },
	[LFS_A_CTIME] = { .type = NLA_U64 },
	[LFS_A_WRITABLE] = NLA_POLICY_MAX(NLA_U8, 1),
	[LFS_A_LEASED] = { .type = NLA_FLAG },
	[LFS_A_BOOKS] = LFS_POLICY_BOOKS,
	[LFS_A_BOOKS_START] = { .type = NLA_U32 },
	[LFS_A_ENTRIES] = NLA_POLICY_NESTED_ARRAY(lfs_entry_policy),
	[LFS_A_XATTR_VALUE] = { .type = NLA_BINARY,
				.len = LFS_XATTR_VALUE_MAX },
	[LFS_A_XATTR_NAMES] = { .type = NLA_BINARY,
				.len = LFS_XATTR_LIST_MAX },
	[LFS_A_TOTAL_BYTES] = { .type = NLA_U64 },
	[LFS_A_FREE_BYTES] = { .type = NLA_U64 },
	[LFS_A_NR_FILES] = { .type = NLA_U64 },
};

static bool lfs_attr_missing(struct genl_info *info, int attr, const char *what)
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
static int lfs_status(struct genl_info *info, int ret)
{
	if (ret < 0 && info->extack && !info->extack->_msg)
		NL_SET_ERR_MSG_FMT(info->extack,
				   "command %u failed with error %d",
				   info->genlhdr->cmd, ret);
	return ret;
}

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

/* Fabric devices */

static int lfs_fabric_fill(struct sk_buff *skb, struct lfs_fabric *fabric,
			   u32 portid, u32 seq, int flags,
			   struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &lfs_family, flags,
			  LFS_CMD_FABRIC_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_u32(skb, LFS_A_IG, fabric->ig) ||
	    nla_put_string(skb, LFS_A_PATH, fabric->path) ||
	    nla_put_u32(skb, LFS_A_DEVT,
			new_encode_dev(fabric->bdev->bd_dev)) ||
	    nla_put_u64_64bit(skb, LFS_A_BOOK_SIZE, fabric->book_size,
			      LFS_A_PAD) ||
	    nla_put_u64_64bit(skb, LFS_A_OFFSET, fabric->offset, LFS_A_PAD) ||
	    nla_put_u64_64bit(skb, LFS_A_DEV_SIZE, bdev_nr_bytes(fabric->bdev),
			      LFS_A_PAD) ||
	    nla_put_u32(skb, LFS_A_NR_BOOKS, fabric->nr_books) ||
	    nla_put_u32(skb, LFS_A_BOOKS_USED, fabric->nr_used) ||
	    nla_put_u8(skb, LFS_A_DAX, !!fabric->dax_dev) ||
	    nla_put_s32(skb, LFS_A_NUMA_NODE, fabric->bdev->bd_disk->node_id) ||
	    (fabric->labelled &&
	     nla_put(skb, LFS_A_FABRIC_UUID, LFS_UUID_LEN, &fabric->fabric_uuid)))
		goto out_cancel;
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int lfs_cmd_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u64 offset;
	int ret;

	if (lfs_attr_missing(info, LFS_A_PATH, "device path") ||
	    lfs_attr_missing(info, LFS_A_IG, "interleave group") ||
	    lfs_attr_missing(info, LFS_A_BOOK_SIZE, "book size"))
		return -EINVAL;
	offset = a[LFS_A_OFFSET] ? nla_get_u64(a[LFS_A_OFFSET]) : 0;

	mutex_lock(&lfs_lock);
	ret = lfs_fabric_attach(nla_data(a[LFS_A_PATH]),
				nla_get_u32(a[LFS_A_IG]),
				nla_get_u64(a[LFS_A_BOOK_SIZE]), offset,
				a[LFS_A_FABRIC_UUID] ?
					nla_data(a[LFS_A_FABRIC_UUID]) :
					NULL,
				info->extack);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

static int lfs_cmd_label(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int ret;

	if (lfs_attr_missing(info, LFS_A_PATH, "device path") ||
	    lfs_attr_missing(info, LFS_A_IG, "interleave group") ||
	    lfs_attr_missing(info, LFS_A_BOOK_SIZE, "book size") ||
	    lfs_attr_missing(info, LFS_A_OFFSET, "data offset") ||
	    lfs_attr_missing(info, LFS_A_FABRIC_UUID, "fabric UUID"))
		return -EINVAL;
	mutex_lock(&lfs_lock);
	ret = lfs_label_write(nla_data(a[LFS_A_PATH]), nla_get_u32(a[LFS_A_IG]),
			      nla_get_u64(a[LFS_A_BOOK_SIZE]),
			      nla_get_u64(a[LFS_A_OFFSET]),
			      nla_data(a[LFS_A_FABRIC_UUID]), info->extack);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

/* Called with lfs_lock held. */
static struct lfs_fabric *lfs_fabric_select(struct genl_info *info)
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

static int lfs_cmd_detach(struct sk_buff *skb, struct genl_info *info)
{
	struct lfs_fabric *fabric;
	int ret;

	mutex_lock(&lfs_lock);
	fabric = lfs_fabric_select(info);
	ret = IS_ERR(fabric) ? PTR_ERR(fabric) :
			       lfs_fabric_detach(fabric, info->extack);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

static int lfs_cmd_fabric_get(struct sk_buff *skb, struct genl_info *info)
{
	struct lfs_fabric *fabric;
	struct sk_buff *msg;
	int ret;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return lfs_status(info, -ENOMEM);
	mutex_lock(&lfs_lock);
	fabric = lfs_fabric_select(info);
	if (IS_ERR(fabric))
		ret = PTR_ERR(fabric);
	else
		ret = lfs_fabric_fill(msg, fabric, info->snd_portid,
				      info->snd_seq, 0, NULL);
	mutex_unlock(&lfs_lock);
	if (ret) {
		nlmsg_free(msg);
		return lfs_status(info, ret);
	}
	return lfs_status(info, genlmsg_reply(msg, info));
}

/* cb->args[0]: the interleave group to continue from. */
static int lfs_dump_fabrics(struct sk_buff *skb, struct netlink_callback *cb)
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

/* Shelves */

static int lfs_shelf_put_books(struct sk_buff *skb, struct lfs_map *map,
			       u32 start, u32 max, u32 *next)
{
	int room = skb_tailroom(skb) - NLA_HDRLEN;
	struct lfs_book *out;
	struct nlattr *attr;
	u32 i, n;

	if (room < (int)sizeof(*out))
		return -EMSGSIZE;
	n = min3(map->nr_books - start, max, (u32)(room / sizeof(*out)));
	n = min_t(u32, n, LFS_BOOKS_PER_ATTR);
	attr = nla_reserve(skb, LFS_A_BOOKS, n * sizeof(*out));
	if (!attr)
		return -EMSGSIZE;
	out = nla_data(attr);
	for (i = 0; i < n; i++) {
		out[i].ig = map->books[start + i].fabric->ig;
		out[i].book = map->books[start + i].book;
	}
	*next = start + n;
	return 0;
}

/*
 * One message describing @shelf with its books from @start on, as many as fit
 * and at most @max. *@next is set to the index of the first book left out.
 */
static int lfs_shelf_fill(struct sk_buff *skb, struct lfs_shelf *shelf,
			  u32 portid, u32 seq, int flags,
			  struct netlink_callback *cb, u32 start, u32 max,
			  u32 *next)
{
	struct lfs_map *map = rcu_dereference_protected(
		shelf->map, lockdep_is_held(&lfs_lock));
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &lfs_family, flags,
			  LFS_CMD_SHELF_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_string(skb, LFS_A_NAME, shelf->name) ||
	    nla_put(skb, LFS_A_UUID, LFS_UUID_LEN, &shelf->uuid) ||
	    nla_put_u32(skb, LFS_A_ID, shelf->id) ||
	    nla_put_string(skb, LFS_A_DISK, shelf->disk->disk_name) ||
	    nla_put_u32(skb, LFS_A_DEVT,
			new_encode_dev(disk_devt(shelf->disk))) ||
	    nla_put_u64_64bit(skb, LFS_A_BOOK_SIZE, shelf->book_size,
			      LFS_A_PAD) ||
	    nla_put_u32(skb, LFS_A_NR_BOOKS, map->nr_books) ||
	    nla_put_u8(skb, LFS_A_DAX, !!shelf->dax_dev) ||
	    nla_put_u32(skb, LFS_A_OPEN, lfs_shelf_openers(shelf)) ||
	    nla_put_u32(skb, LFS_A_STATE,
			lfs_shelf_fenced(shelf) ? LFS_SHELF_FENCED :
						  LFS_SHELF_ACTIVE) ||
	    nla_put_u8(skb, LFS_A_LEASED, shelf->leased) ||
	    nla_put_u64_64bit(skb, LFS_A_CREATED, shelf->created, LFS_A_PAD) ||
	    nla_put_u8(skb, LFS_A_ZEROED, READ_ONCE(shelf->zeroed)) ||
	    nla_put_u32(skb, LFS_A_BOOKS_START, start) ||
	    lfs_shelf_put_books(skb, map, start, max, next))
		goto out_cancel;
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Called with lfs_lock held. */
static struct lfs_shelf *lfs_shelf_select(struct genl_info *info)
{
	const char *name;
	struct lfs_shelf *shelf;

	if (lfs_attr_missing(info, LFS_A_NAME, "shelf name"))
		return ERR_PTR(-EINVAL);
	name = nla_data(info->attrs[LFS_A_NAME]);
	shelf = lfs_shelf_find(name);
	if (!shelf || !lfs_shelf_live(shelf)) {
		NL_SET_ERR_MSG_FMT(info->extack, "no shelf '%s'", name);
		return ERR_PTR(-ENOENT);
	}
	return shelf;
}

static int lfs_create_reply(struct lfs_shelf *shelf, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &lfs_family, 0,
				LFS_CMD_SHELF_CREATE);
	if (!hdr || nla_put_string(msg, LFS_A_NAME, shelf->name) ||
	    nla_put_u32(msg, LFS_A_ID, shelf->id) ||
	    nla_put_string(msg, LFS_A_DISK, shelf->disk->disk_name) ||
	    nla_put_u32(msg, LFS_A_DEVT,
			new_encode_dev(disk_devt(shelf->disk)))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int lfs_cmd_stage(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	struct nlattr **a = info->attrs;
	struct lfs_shelf *shelf = NULL;
	const uuid_t *uuid = NULL;
	unsigned int flags = 0;
	bool more;
	int ret;

	if (lfs_attr_missing(info, LFS_A_NAME, "shelf name") ||
	    lfs_attr_missing(info, LFS_A_BOOKS, "book list"))
		return -EINVAL;
	if (a[LFS_A_UUID])
		uuid = nla_data(a[LFS_A_UUID]);
	more = nla_get_flag(a[LFS_A_MORE]);
	if (nla_get_flag(a[LFS_A_ZEROED]))
		flags |= LFS_STAGE_ZEROED;
	if (nla_get_flag(a[LFS_A_LEASED]))
		flags |= LFS_STAGE_LEASED;

	mutex_lock(&lfs_lock);
	if (cmd == LFS_CMD_SHELF_CREATE &&
	    lfs_fs_name_open(nla_data(a[LFS_A_NAME]))) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "'%s' is open through the lfs filesystem on this node",
				   (char *)nla_data(a[LFS_A_NAME]));
		mutex_unlock(&lfs_lock);
		return lfs_status(info, -EBUSY);
	}
	ret = lfs_shelf_stage(cmd, nla_data(a[LFS_A_NAME]), uuid,
			      nla_data(a[LFS_A_BOOKS]),
			      nla_len(a[LFS_A_BOOKS]) / sizeof(struct lfs_book),
			      more, flags, info->snd_portid, info->extack,
			      &shelf);
	if (!ret && !more && cmd == LFS_CMD_SHELF_CREATE)
		ret = lfs_create_reply(shelf, info);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

static int lfs_cmd_shrink(struct sk_buff *skb, struct genl_info *info)
{
	struct lfs_shelf *shelf;
	int ret;

	if (lfs_attr_missing(info, LFS_A_NR_BOOKS, "new book count"))
		return -EINVAL;
	mutex_lock(&lfs_lock);
	shelf = lfs_shelf_select(info);
	if (IS_ERR(shelf))
		ret = PTR_ERR(shelf);
	else
		ret = lfs_shelf_shrink(shelf,
				       nla_get_u32(info->attrs[LFS_A_NR_BOOKS]),
				       info->extack);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

static int lfs_cmd_remove(struct sk_buff *skb, struct genl_info *info)
{
	struct lfs_shelf *shelf;
	int ret;

	mutex_lock(&lfs_lock);
	shelf = lfs_shelf_select(info);
	ret = IS_ERR(shelf) ? PTR_ERR(shelf) :
			      lfs_shelf_remove(shelf, info->extack);
	mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
}

static int lfs_cmd_shelf_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *start_attr = info->attrs[LFS_A_BOOKS_START];
	u32 start = start_attr ? nla_get_u32(start_attr) : 0;
	struct lfs_shelf *shelf;
	struct sk_buff *msg;
	struct lfs_map *map;
	u32 next;
	int ret;

	msg = genlmsg_new(NLMSG_GOODSIZE +
				  LFS_BOOKS_PER_GET * sizeof(struct lfs_book),
			  GFP_KERNEL);
	if (!msg)
		return lfs_status(info, -ENOMEM);
	mutex_lock(&lfs_lock);
	shelf = lfs_shelf_select(info);
	if (IS_ERR(shelf)) {
		ret = PTR_ERR(shelf);
		goto out_unlock;
	}
	map = rcu_dereference_protected(shelf->map, lockdep_is_held(&lfs_lock));
	if (start >= map->nr_books) {
		NL_SET_ERR_MSG_FMT(
			info->extack,
			"first book %u is beyond the %u books of '%s'", start,
			map->nr_books, shelf->name);
		ret = -ERANGE;
		goto out_unlock;
	}
	ret = lfs_shelf_fill(msg, shelf, info->snd_portid, info->snd_seq, 0,
			     NULL, start, LFS_BOOKS_PER_GET, &next);
out_unlock:
	mutex_unlock(&lfs_lock);
	if (ret) {
		nlmsg_free(msg);
		return lfs_status(info, ret);
	}
	return lfs_status(info, genlmsg_reply(msg, info));
}

/*
 * cb->args[0]: id of the shelf to continue with; cb->args[1]: its next book.
 * A shelf whose books do not fit in one message continues in the next.
 */
static int lfs_dump_shelves(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *name = lfs_dump_attrs(cb)[LFS_A_NAME];
	struct lfs_shelf *shelf;
	struct lfs_map *map;
	int id = cb->args[0];
	u32 next;

	mutex_lock(&lfs_lock);
	cb->seq = lfs_generation;
	for (; (shelf = idr_get_next(&lfs_shelf_ids, &id));
	     id++, cb->args[1] = 0) {
		if (!lfs_shelf_live(shelf) ||
		    (name && strcmp(shelf->name, nla_data(name))))
			continue;
		map = rcu_dereference_protected(shelf->map,
						lockdep_is_held(&lfs_lock));
		while (cb->args[1] < map->nr_books) {
			if (lfs_shelf_fill(skb, shelf,
					   NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI, cb,
					   cb->args[1], U32_MAX, &next))
				goto out;
			cb->args[1] = next;
		}
	}
out:
	cb->args[0] = id;
	mutex_unlock(&lfs_lock);
	return skb->len;
}

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
	hdr = genlmsg_put_reply(msg, info, &lfs_family, 0,
				info->genlhdr->cmd);
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
static int lfs_cmd_books(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[LFS_A_BOOKS];
	const struct lfs_book *books;
	unsigned long *which;
	u32 n;
	int ret;

	if (lfs_attr_missing(info, LFS_A_BOOKS, "book list"))
		return -EINVAL;
	books = nla_data(attr);
	n = nla_len(attr) / sizeof(struct lfs_book);
	which = bitmap_zalloc(n, GFP_KERNEL);
	if (!which)
		return lfs_status(info, -ENOMEM);
	if (info->genlhdr->cmd == LFS_CMD_BOOK_ZERO)
		ret = lfs_books_zero(books, n, which, info->extack);
	else
		ret = lfs_books_check_zero(books, n, which, info->extack);
	if (!ret)
		ret = lfs_books_reply(info, books, n, which);
	bitmap_free(which);
	return lfs_status(info, ret);
}

/* Leases and fencing */

static int lfs_cmd_renew(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int action = -1, ret;
	u32 ms;

	if (lfs_attr_missing(info, LFS_A_LEASE_START, "renewal start") ||
	    lfs_attr_missing(info, LFS_A_LEASE_MS, "lease length"))
		return -EINVAL;
	if (a[LFS_A_FENCE_ACTION])
		action = nla_get_u32(a[LFS_A_FENCE_ACTION]);
	ms = nla_get_u32(a[LFS_A_LEASE_MS]);
	/* a renewal must not wait behind a long request: only giving up does */
	if (!ms)
		mutex_lock(&lfs_lock);
	ret = lfs_lease_renew(nla_get_u64(a[LFS_A_LEASE_START]), ms, action,
			      info->extack);
	if (!ms)
		mutex_unlock(&lfs_lock);
	return lfs_status(info, ret);
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

static int lfs_cmd_lease_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	u32 ms, action, fenced;
	s64 left;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return lfs_status(info, -ENOMEM);
	mutex_lock(&lfs_lock);
	lfs_lease_get(&ms, &left, &action);
	fenced = lfs_fenced_shelves();
	mutex_unlock(&lfs_lock);
	hdr = genlmsg_put_reply(msg, info, &lfs_family, 0, LFS_CMD_LEASE_GET);
	if (!hdr || nla_put_u32(msg, LFS_A_LEASE_MS, ms) ||
	    nla_put_s64(msg, LFS_A_LEASE_LEFT, left, LFS_A_PAD) ||
	    nla_put_u32(msg, LFS_A_FENCE_ACTION, action) ||
	    nla_put_u32(msg, LFS_A_NR_FENCED, fenced) ||
	    lfs_put_fence_stats(msg)) {
		nlmsg_free(msg);
		return lfs_status(info, -EMSGSIZE);
	}
	genlmsg_end(msg, hdr);
	return lfs_status(info, genlmsg_reply(msg, info));
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
		return lfs_status(info, -ENOENT);
	}
	lfs_fs_fence(NULL, uuid, why, NULL);
	return lfs_status(info, 0);
}

/* A shelf, or else a file open through the filesystem (revoked outside lfs_lock). */
static int lfs_cmd_fence(struct sk_buff *skb, struct genl_info *info)
{
	static const char why[] = "asked to by the node agent";
	struct lfs_shelf *shelf;
	bool found, file = false;
	const char *name;

	if (info->attrs[LFS_A_UUID])
		return lfs_cmd_fence_uuid(info, why);
	if (lfs_attr_missing(info, LFS_A_NAME, "shelf name"))
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
		return lfs_status(info, -ENOENT);
	}
	return lfs_status(info, 0);
}

/* The upcall channel (upcall.c) */

static int lfs_cmd_up_register(struct sk_buff *skb, struct genl_info *info)
{
	return lfs_status(info,
			  lfs_upcall_register(info->snd_portid, info->extack));
}

static int lfs_cmd_up_unregister(struct sk_buff *skb, struct genl_info *info)
{
	return lfs_status(info,
			  lfs_upcall_unregister(info->snd_portid, info->extack));
}

static int lfs_cmd_up_reply(struct sk_buff *skb, struct genl_info *info)
{
	if (lfs_attr_missing(info, LFS_A_UP_ID, "upcall id"))
		return -EINVAL;
	return lfs_status(info, lfs_upcall_reply(info->snd_portid, info->attrs,
						 info->extack));
}

static int lfs_cmd_up_get(struct sk_buff *skb, struct genl_info *info)
{
	u32 portid, pending, active = lfs_fs_nr_active();
	struct sk_buff *msg;
	u64 sent, refused;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return lfs_status(info, -ENOMEM);
	lfs_upcall_stats(&portid, &pending, &sent, &refused);
	hdr = genlmsg_put_reply(msg, info, &lfs_family, 0, LFS_CMD_UPCALL_GET);
	if (!hdr || nla_put_u32(msg, LFS_A_UP_PORTID, portid) ||
	    nla_put_u32(msg, LFS_A_UP_PENDING, pending) ||
	    nla_put_u64_64bit(msg, LFS_A_UP_SENT, sent, LFS_A_PAD) ||
	    nla_put_u64_64bit(msg, LFS_A_UP_REFUSED, refused, LFS_A_PAD) ||
	    nla_put_u32(msg, LFS_A_NR_ACTIVE, active)) {
		nlmsg_free(msg);
		return lfs_status(info, -EMSGSIZE);
	}
	genlmsg_end(msg, hdr);
	return lfs_status(info, genlmsg_reply(msg, info));
}

/* An upcall request (a message of the family from the kernel). */
void *lfs_genl_put(struct sk_buff *skb, u8 cmd)
{
	return genlmsg_put(skb, 0, 0, &lfs_family, 0, cmd);
}

int lfs_genl_unicast(struct sk_buff *skb, u32 portid)
{
	return genlmsg_unicast(&init_net, skb, portid);
}

/*
 * The commands: each with its handler, its policy (strict validation, so an
 * attribute a command does not list is refused) and whether it needs
 * CAP_SYS_ADMIN (lfs_pre_doit). A dump shares its command's policy.
 */
static const struct genl_ops lfs_ops[] = {
	{
		.cmd = LFS_CMD_FABRIC_ATTACH,
		.doit = lfs_cmd_attach,
		.policy = lfs_attach_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_FABRIC_DETACH,
		.doit = lfs_cmd_detach,
		.policy = lfs_fabric_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_FABRIC_GET,
		.doit = lfs_cmd_fabric_get,
		.dumpit = lfs_dump_fabrics,
		.policy = lfs_fabric_policy,
		.maxattr = LFS_A_MAX,
	},
	{
		.cmd = LFS_CMD_SHELF_CREATE,
		.doit = lfs_cmd_stage,
		.policy = lfs_create_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_SHELF_EXTEND,
		.doit = lfs_cmd_stage,
		.policy = lfs_extend_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_SHELF_SHRINK,
		.doit = lfs_cmd_shrink,
		.policy = lfs_shrink_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_SHELF_REMOVE,
		.doit = lfs_cmd_remove,
		.policy = lfs_name_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_SHELF_GET,
		.doit = lfs_cmd_shelf_get,
		.dumpit = lfs_dump_shelves,
		.policy = lfs_shelf_get_policy,
		.maxattr = LFS_A_MAX,
	},
	{
		.cmd = LFS_CMD_BOOK_ZERO,
		.doit = lfs_cmd_books,
		.policy = lfs_books_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_BOOK_CHECK,
		.doit = lfs_cmd_books,
		.policy = lfs_books_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_LEASE_RENEW,
		.doit = lfs_cmd_renew,
		.policy = lfs_renew_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_LEASE_GET,
		.doit = lfs_cmd_lease_get,
		.policy = lfs_none_policy,
		.maxattr = LFS_A_MAX,
	},
	{
		.cmd = LFS_CMD_SHELF_FENCE,
		.doit = lfs_cmd_fence,
		.policy = lfs_fence_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_FABRIC_LABEL,
		.doit = lfs_cmd_label,
		.policy = lfs_attach_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_UPCALL_REGISTER,
		.doit = lfs_cmd_up_register,
		.policy = lfs_none_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_UPCALL_UNREGISTER,
		.doit = lfs_cmd_up_unregister,
		.policy = lfs_none_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
	{
		.cmd = LFS_CMD_UPCALL_GET,
		.doit = lfs_cmd_up_get,
		.policy = lfs_none_policy,
		.maxattr = LFS_A_MAX,
	},
	{
		.cmd = LFS_CMD_UPCALL_REPLY,
		.doit = lfs_cmd_up_reply,
		.policy = lfs_up_reply_policy,
		.maxattr = LFS_A_MAX,
		.internal_flags = LFS_OP_ADMIN,
	},
};

/*
 * parallel_ops: every handler and dump takes lfs_lock for what it touches,
 * so genl_mutex need not serialise them too; a BOOK_CHECK, which drops
 * lfs_lock every LFS_CHECK_PAGES pages, then does not hold up other requests
 * for the whole time it reads. (Unregistering the family still waits for
 * requests in flight: genl_rcv holds cb_lock for reading.)
 */
static struct genl_family lfs_family __ro_after_init = {
	.name = LFS_GENL_NAME,
	.version = LFS_GENL_VERSION,
	.maxattr = LFS_A_MAX,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.pre_doit = lfs_pre_doit,
	.ops = lfs_ops,
	.n_ops = ARRAY_SIZE(lfs_ops),
};

int __init lfs_genl_init(void)
{
	return genl_register_family(&lfs_family);
}

void lfs_genl_exit(void)
{
	genl_unregister_family(&lfs_family);
}
