// SPDX-License-Identifier: GPL-2.0
/*
 * The commands of the generic netlink family "lfs": their policies and
 * handlers (nl_*.c). The protocol is specified in uapi/lfs.h.
 */

#include "nl.h"

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

static const struct nla_policy lfs_move_policy[LFS_A_MAX + 1] = {
	[LFS_A_NAME] = LFS_POLICY_NAME,
	[LFS_A_BOOKS_START] = { .type = NLA_U32 },
	[LFS_A_BOOKS] = NLA_POLICY_EXACT_LEN(sizeof(struct lfs_book)),
};

static const struct nla_policy lfs_renew_policy[LFS_A_MAX + 1] = {
	[LFS_A_LEASE_START] = { .type = NLA_U64 },
	[LFS_A_LEASE_MS] = { .type = NLA_U32 },
	[LFS_A_FENCE_ACTION] = NLA_POLICY_MAX(NLA_U32, LFS_FENCE_EIO),
	/* its range checked by lfs_fence_watch_check(), naming the value */
	[LFS_A_FENCE_WATCHDOG_MS] = { .type = NLA_U32 },
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
		.cmd = LFS_CMD_BOOK_MOVE,
		.doit = lfs_cmd_book_move,
		.policy = lfs_move_policy,
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

int __init lfs_genl_init(void)
{
	return lfs_genl_register(lfs_ops, ARRAY_SIZE(lfs_ops));
}
