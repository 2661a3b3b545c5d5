// SPDX-License-Identifier: MIT
/*
 * nlevents COUNT: join the lfs family's "events" group (LFS_MCGRP_EVENTS),
 * print "ready", then print each of the next COUNT events and exit 0:
 *     bad IG PATH BOOK OFFSET LENGTH     (LFS_CMD_FABRIC_BAD)
 *     cmd N                              (any other)
 * Exit 1 with a message if the family or group is missing or receiving fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "uapi/lfs.h"

static int remaining;

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[LFS_A_MAX + 1];
	struct lfs_bad_range r;

	(void)arg;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, LFS_A_MAX, NULL))
		return NL_SKIP;
	if (gh->cmd == LFS_CMD_FABRIC_BAD && tb[LFS_A_IG] && tb[LFS_A_PATH] && tb[LFS_A_BAD] &&
	    nla_len(tb[LFS_A_BAD]) == sizeof(r)) {
		memcpy(&r, nla_data(tb[LFS_A_BAD]), sizeof(r));
		printf("bad %u %s %u %llu %llu\n", nla_get_u32(tb[LFS_A_IG]),
		       nla_get_string(tb[LFS_A_PATH]), r.book, (unsigned long long)r.offset,
		       (unsigned long long)r.length);
	} else {
		printf("cmd %u\n", gh->cmd);
	}
	fflush(stdout);
	remaining--;
	return NL_OK;
}

int main(int argc, char **argv)
{
	struct nl_sock *sk;
	int grp, ret;

	if (argc != 2 || (remaining = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: nlevents COUNT\n");
		return 1;
	}
	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "nlevents: cannot open a generic netlink socket\n");
		return 1;
	}
	grp = genl_ctrl_resolve_grp(sk, LFS_GENL_NAME, LFS_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(sk, grp)) {
		fprintf(stderr, "nlevents: cannot join %s/%s: %s\n", LFS_GENL_NAME,
			LFS_MCGRP_EVENTS, nl_geterror(grp));
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, NULL);
	printf("ready\n");
	fflush(stdout);
	while (remaining > 0) {
		ret = nl_recvmsgs_default(sk);
		if (ret < 0) {
			fprintf(stderr, "nlevents: receiving: %s\n", nl_geterror(ret));
			return 1;
		}
	}
	nl_socket_free(sk);
	return 0;
}
