// SPDX-License-Identifier: MIT
/*
 * Generic netlink client of the lfs family (libnl-3), after iw: the family
 * is resolved once, error/finish/ack/valid callbacks share one request
 * state, NETLINK_EXT_ACK is on and the kernel's message is kept for the
 * caller. Dumps interrupted by a concurrent change are retried.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "liblfsnl.h"
#include "client.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define LFS_DUMP_TRIES 20
#define LFS_SOCKET_BUFFER (1 << 20)

static const char *const attr_names[LFS_A_MAX + 1] = {
	[LFS_A_PATH] = "LFS_A_PATH (device path)",
	[LFS_A_IG] = "LFS_A_IG (interleave group)",
	[LFS_A_BOOK_SIZE] = "LFS_A_BOOK_SIZE (book size)",
	[LFS_A_OFFSET] = "LFS_A_OFFSET (data offset)",
	[LFS_A_NR_BOOKS] = "LFS_A_NR_BOOKS (book count)",
	[LFS_A_NAME] = "LFS_A_NAME (shelf name)",
	[LFS_A_UUID] = "LFS_A_UUID (shelf UUID)",
	[LFS_A_BOOKS] = "LFS_A_BOOKS (book list)",
	[LFS_A_BOOKS_START] = "LFS_A_BOOKS_START",
	[LFS_A_MORE] = "LFS_A_MORE",
	[LFS_A_LEASE_START] = "LFS_A_LEASE_START (renewal start)",
	[LFS_A_LEASE_MS] = "LFS_A_LEASE_MS (lease length)",
	[LFS_A_FENCE_ACTION] = "LFS_A_FENCE_ACTION (fence action)",
	[LFS_A_FENCE_WATCHDOG_MS] = "LFS_A_FENCE_WATCHDOG_MS (fence watchdog)",
	[LFS_A_FABRIC_UUID] = "LFS_A_FABRIC_UUID (fabric UUID)",
};

static const char *attr_name(unsigned int type)
{
	if (type <= LFS_A_MAX && attr_names[type])
		return attr_names[type];
	return "unknown attribute";
}

void lfs_client_set_error(struct lfs_client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
}

const char *lfs_client_error(const struct lfs_client *c)
{
	return c->err;
}

static __thread char open_error[256];

const char *lfs_client_open_error(void)
{
	return open_error;
}

int lfs_client_open(struct lfs_client **out)
{
	struct lfs_client *c;
	int one = 1, ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sk = nl_socket_alloc();
	if (!c->sk) {
		free(c);
		return -ENOMEM;
	}
	ret = genl_connect(c->sk);
	if (ret < 0) {
		snprintf(open_error, sizeof(open_error), "no generic netlink socket");
		ret = -ECONNREFUSED;
		goto out_free;
	}
	/* libnl's default 32 KiB would refuse a full book list message. */
	nl_socket_set_buffer_size(c->sk, LFS_SOCKET_BUFFER, LFS_SOCKET_BUFFER);
	nl_socket_enable_msg_peek(c->sk);
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	c->family = lfs_genl_family(c->sk, LFS_GENL_NAME, LFS_GENL_VERSION, open_error,
				    sizeof(open_error));
	if (c->family < 0) {
		ret = c->family == -EPROTONOSUPPORT ? -EPROTONOSUPPORT : -ENOENT;
		goto out_free;
	}
	open_error[0] = 0;
	*out = c;
	return 0;

out_free:
	nl_socket_free(c->sk);
	free(c);
	return ret;
}

void lfs_client_close(struct lfs_client *c)
{
	if (!c)
		return;
	nl_socket_free(c->sk);
	free(c);
}

struct nl_msg *lfs_msg_new(struct lfs_client *c, uint8_t cmd, int flags, size_t size)
{
	struct nl_msg *msg = nlmsg_alloc_size(size);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, flags, cmd,
			 LFS_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct lfs_request {
	struct lfs_client *c;
	struct nl_msg *sent;
	lfs_parse_fn parse;
	void *arg;
	int error;
	int done;
	int intr;
};

/* Name the attribute at byte offset @off of the request, as the kernel did. */
static const char *bad_attr_name(struct nl_msg *sent, uint32_t off)
{
	struct nlmsghdr *nlh = nlmsg_hdr(sent);
	struct nlattr *nla;
	int rem;

	nlmsg_for_each_attr(nla, nlh, GENL_HDRLEN, rem) {
		if ((uint32_t)((char *)nla - (char *)nlh) == off)
			return attr_name(nla_type(nla));
	}
	return NULL;
}

void lfs_ext_ack_parse(struct nlmsgerr *err, struct nlattr **tb)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)err - NLMSG_HDRLEN);
	int ack_len = NLMSG_HDRLEN + sizeof(*err);

	memset(tb, 0, (NLMSGERR_ATTR_MAX + 1) * sizeof(*tb));
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += err->msg.nlmsg_len - NLMSG_HDRLEN;
	if ((int)nlh->nlmsg_len > ack_len)
		nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + ack_len),
			  nlh->nlmsg_len - ack_len, NULL);
}

const char *lfs_ext_ack_msg(struct nlmsgerr *err)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	lfs_ext_ack_parse(err, tb);
	return tb[NLMSGERR_ATTR_MSG] ? (char *)nla_data(tb[NLMSGERR_ATTR_MSG]) : "";
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct lfs_request *req = arg;
	struct lfs_client *c = req->c;
	const char *what = NULL;

	(void)nla;
	req->error = err->error ? err->error : -EIO;
	req->done = 1;
	lfs_ext_ack_parse(err, tb);
	if (tb[NLMSGERR_ATTR_OFFS] && req->sent)
		what = bad_attr_name(req->sent, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
	if (tb[NLMSGERR_ATTR_MSG])
		lfs_client_set_error(c, "%s%s%s%s", (char *)nla_data(tb[NLMSGERR_ATTR_MSG]),
				     what ? " (" : "", what ? what : "", what ? ")" : "");
	else if (tb[NLMSGERR_ATTR_MISS_TYPE])
		lfs_client_set_error(c, "missing attribute %s",
				     attr_name(nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE])));
	else
		lfs_client_set_error(c, "%s", strerror(-req->error));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct lfs_request *req = arg;

	(void)msg;
	req->done = 1;
	return NL_STOP;
}

static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct lfs_request *req = arg;

	(void)msg;
	req->intr = 1;
	return NL_OK;
}

static const struct nla_policy reply_policy[LFS_A_MAX + 1] = {
	[LFS_A_PATH] = { .type = NLA_STRING, .maxlen = LFS_PATH_MAX },
	[LFS_A_IG] = { .type = NLA_U32 },
	[LFS_A_BOOK_SIZE] = { .type = NLA_U64 },
	[LFS_A_OFFSET] = { .type = NLA_U64 },
	[LFS_A_DEV_SIZE] = { .type = NLA_U64 },
	[LFS_A_DEVT] = { .type = NLA_U32 },
	[LFS_A_NR_BOOKS] = { .type = NLA_U32 },
	[LFS_A_BOOKS_USED] = { .type = NLA_U32 },
	[LFS_A_DAX] = { .type = NLA_U8 },
	[LFS_A_NUMA_NODE] = { .type = NLA_U32 },
	[LFS_A_NAME] = { .type = NLA_STRING, .maxlen = LFS_NAME_MAX + 1 },
	[LFS_A_UUID] = { .minlen = LFS_UUID_LEN },
	[LFS_A_ID] = { .type = NLA_U32 },
	[LFS_A_DISK] = { .type = NLA_STRING, .maxlen = 32 },
	[LFS_A_BOOKS_START] = { .type = NLA_U32 },
	[LFS_A_OPEN] = { .type = NLA_U32 },
	[LFS_A_ZEROED] = { .type = NLA_U8 },
	[LFS_A_LEASED] = { .type = NLA_U8 },
	[LFS_A_STATE] = { .type = NLA_U32 },
	[LFS_A_CREATED] = { .type = NLA_U64 },
	[LFS_A_LEASE_MS] = { .type = NLA_U32 },
	[LFS_A_LEASE_LEFT] = { .type = NLA_U64 },
	[LFS_A_FENCE_ACTION] = { .type = NLA_U32 },
	[LFS_A_NR_FENCED] = { .type = NLA_U32 },
	[LFS_A_FENCE_COUNT] = { .type = NLA_U32 },
	[LFS_A_FENCE_LAST_NS] = { .type = NLA_U64 },
	[LFS_A_FENCE_MAX_NS] = { .type = NLA_U64 },
	[LFS_A_FENCE_DONE_LAST_NS] = { .type = NLA_U64 },
	[LFS_A_FENCE_DONE_MAX_NS] = { .type = NLA_U64 },
	[LFS_A_FENCE_HIST] = { .minlen = 4 * LFS_FENCE_HIST_BUCKETS },
	[LFS_A_FABRIC_UUID] = { .minlen = LFS_UUID_LEN },
	[LFS_A_BAD] = { .type = NLA_UNSPEC },
	[LFS_A_VOLATILE] = { .type = NLA_U8 },
	[LFS_A_DEVDAX] = { .type = NLA_U8 },
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct lfs_request *req = arg;
	struct nlattr *tb[LFS_A_MAX + 1];
	int ret;

	if (!req->parse)
		return NL_OK;
	ret = genlmsg_parse(nlmsg_hdr(msg), 0, tb, LFS_A_MAX, (struct nla_policy *)reply_policy);
	if (ret < 0) {
		lfs_client_set_error(req->c, "malformed reply from the kernel");
		req->error = -EPROTO;
		return NL_STOP;
	}
	ret = req->parse(tb, req->arg);
	if (ret < 0) {
		req->error = ret;
		return NL_STOP;
	}
	return NL_OK;
}

/* Send @msg (consumed) and wait for its ack, reply or dump end. */
static int lfs_transact(struct lfs_client *c, struct nl_msg *msg, lfs_parse_fn parse, void *arg,
			int *intr)
{
	struct lfs_request req = { .c = c, .sent = msg, .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_ack, &req);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &req);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, &req);

	ret = nl_send_auto(c->sk, msg);
	if (ret < 0) {
		lfs_client_set_error(c, "sending to the kernel failed: %s", nl_geterror(ret));
		req.error = -EIO;
		goto out;
	}
	while (!req.done && !req.error) {
		ret = nl_recvmsgs(c->sk, cb);
		if (ret < 0 && !req.done && !req.error) {
			lfs_client_set_error(c, "receiving from the kernel failed: %s",
					     nl_geterror(ret));
			req.error = -EIO;
		}
	}
out:
	if (intr)
		*intr = req.intr;
	nl_cb_put(cb);
	nlmsg_free(msg);
	return req.error;
}

int lfs_request(struct lfs_client *c, struct nl_msg *msg, lfs_parse_fn parse, void *arg)
{
	c->err[0] = '\0';
	return lfs_transact(c, msg, parse, arg, NULL);
}

int lfs_dump(struct lfs_client *c, struct nl_msg *(*build)(struct lfs_client *c, void *arg),
	     lfs_parse_fn parse, void (*reset)(void *arg), void *arg)
{
	struct nl_msg *msg;
	int tries, intr, ret;

	for (tries = 0; tries < LFS_DUMP_TRIES; tries++) {
		c->err[0] = '\0';
		msg = build(c, arg);
		if (!msg)
			return -ENOMEM;
		ret = lfs_transact(c, msg, parse, arg, &intr);
		if (ret || !intr)
			return ret;
		reset(arg);
	}
	lfs_client_set_error(c, "the kernel's state kept changing during %d dumps", LFS_DUMP_TRIES);
	return -EAGAIN;
}
