/* SPDX-License-Identifier: MIT */
/* liblfsnl internals shared by client.c and ops.c. */
#ifndef LIBLFS_CLIENT_H
#define LIBLFS_CLIENT_H

#include <stdarg.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

struct lfs_client {
	struct nl_sock *sk;
	int family;
	char err[512];
};

/* Called for each reply message with its attributes; negative errno stops. */
typedef int (*lfs_parse_fn)(struct nlattr **tb, void *arg);

struct nl_msg *lfs_msg_new(struct lfs_client *c, uint8_t cmd, int flags, size_t size);
int lfs_request(struct lfs_client *c, struct nl_msg *msg, lfs_parse_fn parse, void *arg);
int lfs_dump(struct lfs_client *c, struct nl_msg *(*build)(struct lfs_client *c, void *arg),
	     lfs_parse_fn parse, void (*reset)(void *arg), void *arg);
/*
 * An error's extended ack (NLMSGERR_ATTR_*) into tb[NLMSGERR_ATTR_MAX + 1],
 * and its message ("" without one): the one parser of the kernel's acks,
 * for liblfsnl, the agent's upcall server and the test server.
 */
struct nlmsgerr;
void lfs_ext_ack_parse(struct nlmsgerr *err, struct nlattr **tb);
const char *lfs_ext_ack_msg(struct nlmsgerr *err);
void lfs_client_set_error(struct lfs_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
