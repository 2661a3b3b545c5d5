// SPDX-License-Identifier: GPL-2.0
/*
 * The family's shelf commands: create and extend (in stages), shrink,
 * remove, get, dump.
 */

#include <linux/types.h>
#include <linux/kdev_t.h>

#include "nl.h"

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

	hdr = lfs_nl_put(skb, portid, seq, flags, LFS_CMD_SHELF_GET);
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

/* The live shelf the request names; lfs_lock held. */
static void *lfs_shelf_select(struct genl_info *info)
{
	const char *name;
	struct lfs_shelf *shelf;

	if (lfs_nl_attr_missing(info, LFS_A_NAME, "shelf name"))
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
	hdr = lfs_nl_put_reply(msg, info, LFS_CMD_SHELF_CREATE);
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

/* A create or extend, or a part of one; a whole create is answered. */
static int lfs_shelf_stage_act(void *none, struct genl_info *info,
			       struct sk_buff *unused)
{
	u8 cmd = info->genlhdr->cmd;
	struct nlattr **a = info->attrs;
	struct lfs_shelf *shelf = NULL;
	const uuid_t *uuid = NULL;
	unsigned int flags = 0;
	bool more;
	int ret;

	if (a[LFS_A_UUID])
		uuid = nla_data(a[LFS_A_UUID]);
	more = nla_get_flag(a[LFS_A_MORE]);
	if (nla_get_flag(a[LFS_A_ZEROED]))
		flags |= LFS_STAGE_ZEROED;
	if (nla_get_flag(a[LFS_A_LEASED]))
		flags |= LFS_STAGE_LEASED;
	if (cmd == LFS_CMD_SHELF_CREATE &&
	    lfs_fs_name_open(nla_data(a[LFS_A_NAME]))) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "'%s' is open through the lfs filesystem on this node",
				   (char *)nla_data(a[LFS_A_NAME]));
		return -EBUSY;
	}
	ret = lfs_shelf_stage(cmd, nla_data(a[LFS_A_NAME]), uuid,
			      nla_data(a[LFS_A_BOOKS]),
			      nla_len(a[LFS_A_BOOKS]) / sizeof(struct lfs_book),
			      more, flags, info->snd_portid, info->extack,
			      &shelf);
	if (!ret && !more && cmd == LFS_CMD_SHELF_CREATE)
		ret = lfs_create_reply(shelf, info);
	return ret;
}

int lfs_cmd_stage(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = { .act = lfs_shelf_stage_act };

	if (lfs_nl_attr_missing(info, LFS_A_NAME, "shelf name") ||
	    lfs_nl_attr_missing(info, LFS_A_BOOKS, "book list"))
		return -EINVAL;
	return lfs_nl_locked(info, &cmd);
}

static int lfs_shelf_shrink_act(void *shelf, struct genl_info *info,
				struct sk_buff *msg)
{
	return lfs_shelf_shrink(shelf, nla_get_u32(info->attrs[LFS_A_NR_BOOKS]),
				info->extack);
}

int lfs_cmd_shrink(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_shelf_select,
		.act = lfs_shelf_shrink_act,
	};

	if (lfs_nl_attr_missing(info, LFS_A_NR_BOOKS, "new book count"))
		return -EINVAL;
	return lfs_nl_locked(info, &cmd);
}

static int lfs_shelf_remove_act(void *shelf, struct genl_info *info,
				struct sk_buff *msg)
{
	return lfs_shelf_remove(shelf, info->extack);
}

int lfs_cmd_remove(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_shelf_select,
		.act = lfs_shelf_remove_act,
	};

	return lfs_nl_locked(info, &cmd);
}

/* The shelf with its books from LFS_A_BOOKS_START on, at most a page of them. */
static int lfs_shelf_get_act(void *obj, struct genl_info *info,
			     struct sk_buff *msg)
{
	struct nlattr *start_attr = info->attrs[LFS_A_BOOKS_START];
	u32 start = start_attr ? nla_get_u32(start_attr) : 0;
	struct lfs_shelf *shelf = obj;
	struct lfs_map *map;
	u32 next;

	map = rcu_dereference_protected(shelf->map, lockdep_is_held(&lfs_lock));
	if (start >= map->nr_books) {
		NL_SET_ERR_MSG_FMT(
			info->extack,
			"first book %u is beyond the %u books of '%s'", start,
			map->nr_books, shelf->name);
		return -ERANGE;
	}
	return lfs_shelf_fill(msg, shelf, info->snd_portid, info->snd_seq, 0,
			      NULL, start, LFS_BOOKS_PER_GET, &next);
}

int lfs_cmd_shelf_get(struct sk_buff *skb, struct genl_info *info)
{
	static const struct lfs_nl_cmd cmd = {
		.select = lfs_shelf_select,
		.act = lfs_shelf_get_act,
		.reply_size = NLMSG_GOODSIZE +
			      LFS_BOOKS_PER_GET * sizeof(struct lfs_book),
	};

	return lfs_nl_locked(info, &cmd);
}

/*
 * cb->args[0]: id of the shelf to continue with; cb->args[1]: its next book.
 * A shelf whose books do not fit in one message continues in the next.
 */
int lfs_dump_shelves(struct sk_buff *skb, struct netlink_callback *cb)
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
