// SPDX-License-Identifier: MIT
/*
 * The lfs generic netlink family resolved by name, with its version: the
 * kernel and lvmish ship together and speak one LFS_GENL_VERSION
 * (driver/uapi/lfs.h). A module of another version is refused here, with a
 * message naming both, rather than found out later from a command or an
 * attribute it does not know.
 */
#include <errno.h>
#include <stdio.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "liblfsnl.h"

struct family_reply {
	int id;
	uint32_t version;
};

static int on_family(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct family_reply *f = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CTRL_ATTR_MAX, NULL) || !tb[CTRL_ATTR_FAMILY_ID])
		return NL_SKIP;
	f->id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	f->version = tb[CTRL_ATTR_VERSION] ? nla_get_u32(tb[CTRL_ATTR_VERSION]) : 0;
	return NL_STOP;
}

/* CTRL_CMD_GETFAMILY of name: its id (and *version), or -ENOENT. */
static int family_get(struct nl_sock *sk, const char *name, uint32_t *version)
{
	struct family_reply f = { .id = -ENOENT };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct nl_msg *msg = nlmsg_alloc();
	int ret = -ENOMEM;

	if (!cb || !msg)
		goto out;
	ret = -ENOENT;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0, CTRL_CMD_GETFAMILY,
			 1) ||
	    nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, name))
		goto out;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_family, &f);
	if (nl_send_auto(sk, msg) < 0 || nl_recvmsgs(sk, cb) < 0)
		goto out;
	/* the request was acknowledged after the family's description */
	if (f.id >= 0 && nl_wait_for_ack(sk) < 0)
		f.id = -ENOENT;
	*version = f.version;
	ret = f.id;
out:
	nlmsg_free(msg);
	nl_cb_put(cb);
	return ret;
}

int lfs_genl_family(struct nl_sock *sk, const char *name, uint32_t want, char *msg, size_t len)
{
	uint32_t version = 0;
	int id = family_get(sk, name, &version);

	if (id < 0) {
		snprintf(msg, len, "no generic netlink family '%s'", name);
		return id;
	}
	if (version != want) {
		snprintf(
			msg, len,
			"the kernel's generic netlink family '%s' is version %u; this tool speaks version %u",
			name, version, want);
		return -EPROTONOSUPPORT;
	}
	return id;
}
