// SPDX-License-Identifier: MIT
/*
 * nlfuzz SEED COUNT: send COUNT random generic netlink messages at the lfs
 * family (random commands, flags, attribute types, lengths and contents,
 * some shaped like real requests, some corrupted) and drain every reply.
 * The kernel must neither crash nor WARN; the VM harness watches for that.
 * Prints how many requests were answered with each outcome.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "liblfsnl.h"

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return n ? (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32) % n : 0;
}

static const char *const strings[] = {
	"/dev/pmem0", "/dev/pmem1", "/dev/null", "/nonexistent", "", "fz", "fz1", "a b",
	"..", "/dev/lfs0", "0123456789012345678901234567890123456789012345678901234567890123",
};

/* Fill one attribute payload; returns its length. */
static size_t payload(unsigned char *p, size_t room)
{
	struct lfs_book *b = (struct lfs_book *)p;
	size_t len, i;
	uint64_t v;

	switch (rnd(8)) {
	case 0: /* plausible small integers */
		v = rnd(4) ? rnd(4) : rnd(0xffffffff);
		len = (size_t[]){ 1, 2, 4, 8 }[rnd(4)];
		memcpy(p, &v, len);
		return len;
	case 1: /* book sizes, plausible or not */
		v = rnd(2) ? (2ULL << 20) << rnd(6) : (uint64_t)rnd(0xffffffff) * rnd(9);
		memcpy(p, &v, 8);
		return 8;
	case 2: { /* strings */
		const char *s = strings[rnd(sizeof(strings) / sizeof(strings[0]))];

		len = strlen(s) + (rnd(4) != 0);
		memcpy(p, s, len);
		return len;
	}
	case 3: /* book lists on IGs 0-2, books 0-40 */
		len = 1 + rnd(rnd(8) ? 8 : 600);
		if (len * sizeof(*b) > room)
			len = room / sizeof(*b);
		for (i = 0; i < len; i++) {
			b[i].ig = rnd(3);
			b[i].book = rnd(40);
		}
		return len * sizeof(*b) - (rnd(10) ? 0 : 1 + rnd(7));
	case 4: /* empty */
		return 0;
	default: /* random bytes of random length */
		len = rnd(rnd(10) ? 40 : room);
		for (i = 0; i < len; i++)
			p[i] = rnd(256);
		return len;
	}
}

static size_t build(unsigned char *buf, size_t size, int family, uint32_t seq)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN, len;
	int i, nattrs = rnd(7);

	memset(buf, 0, off);
	nlh->nlmsg_type = rnd(50) ? (uint32_t)family : rnd(0x40);
	nlh->nlmsg_flags = NLM_F_REQUEST | (rnd(2) ? NLM_F_ACK : 0) | (rnd(4) ? 0 : NLM_F_DUMP) |
			   (rnd(20) ? 0 : rnd(0x10000));
	nlh->nlmsg_seq = seq;
	g->cmd = rnd(8) ? 1 + rnd(LFS_CMD_MAX) : rnd(256);
	g->version = rnd(10) ? LFS_GENL_VERSION : rnd(256);
	g->reserved = rnd(10) ? 0 : rnd(65536);
	for (i = 0; i < nattrs; i++) {
		struct nlattr *nla = (struct nlattr *)(buf + off);

		if (off + NLA_HDRLEN + 8 > size)
			break;
		len = payload(buf + off + NLA_HDRLEN, size - off - NLA_HDRLEN - 8);
		nla->nla_type = rnd(8) ? rnd(LFS_A_MAX + 3) : rnd(65536);
		nla->nla_len = NLA_HDRLEN + len;
		off += NLA_ALIGN(nla->nla_len);
	}
	nlh->nlmsg_len = off;
	if (!rnd(30)) /* corrupt a length or a byte */
		buf[rnd(off)] = rnd(256);
	if (!rnd(50))
		nlh->nlmsg_len = rnd(off + 16);
	return off;
}

int main(int argc, char **argv)
{
	static unsigned char buf[70000], rbuf[1 << 17];
	unsigned long count, i, sent = 0, answers = 0, acks = 0, errors = 0;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nl_sock *sk;
	int family, fd, one = 1;
	ssize_t r;
	size_t len;

	if (argc != 3) {
		fprintf(stderr, "usage: nlfuzz SEED COUNT\n");
		return 2;
	}
	rng = strtoull(argv[1], NULL, 0) * 0x9E3779B97F4A7C15ULL + 1;
	count = strtoul(argv[2], NULL, 0);
	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk) < 0) {
		fprintf(stderr, "nlfuzz: no generic netlink socket\n");
		return 2;
	}
	family = genl_ctrl_resolve(sk, LFS_GENL_NAME);
	if (family < 0) {
		fprintf(stderr, "nlfuzz: family %s not found\n", LFS_GENL_NAME);
		return 2;
	}
	fd = nl_socket_get_fd(sk);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	for (i = 0; i < count; i++) {
		len = build(buf, sizeof(buf), family, i + 1);
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) >= 0)
			sent++;
		/* Replies, including every part of a dump, are drained here. */
		while ((r = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT)) > 0) {
			struct nlmsghdr *h = (struct nlmsghdr *)rbuf;

			answers++;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error)
					errors++;
				else
					acks++;
			}
		}
		if (r < 0 && errno != EAGAIN && errno != ENOBUFS) {
			perror("nlfuzz: recv");
			return 1;
		}
	}
	printf("seed %s: %lu messages sent, %lu reads, %lu acks, %lu errors\n", argv[1], sent,
	       answers, acks, errors);
	nl_socket_free(sk);
	return 0;
}
