// SPDX-License-Identifier: MIT
/*
 * nlraw: send one hand-made request of the lfs family, including ones lfsctl
 * would never send (wrong attribute types, missing attributes), and print
 * the outcome on one line:
 *     ok
 *     error EINVAL: <kernel's extack message>
 * usage: nlraw COMMAND [ATTR=TYPE:VALUE]...
 *        nlraw state    (every fabric device and shelf, one line each)
 *        nlraw dumpintr BOOKS
 *               start a shelf dump, read its first part, create and remove
 *               a shelf "dumpintr" of BOOKS from a second socket, read the
 *               rest: prints "interrupted" if NLM_F_DUMP_INTR was set, else
 *               "consistent"
 *   COMMAND  attach detach fabric_get create extend shrink remove shelf_get
 *            zero check lease_renew lease_get fence label up_register
 *            up_unregister up_get up_request up_reply, or a number
 *   ATTR     path ig book_size offset nr_books name uuid books books_start
 *            more zeroed leased lease_start lease_ms fence_action
 *            fence_watchdog_ms
 *            fabric_uuid, the upcall attributes (up_id, up_errno, size,
 *            ino...: the names of uapi/lfs.h in lower case), or a number
 *   TYPE     u8 u16 u32 u64 (decimal), str (NUL-terminated), raw (no NUL),
 *            hex (bytes), books (IG:BOOK list), flag (VALUE empty),
 *            now (u64: CLOCK_BOOTTIME ns plus VALUE ms, VALUE may be < 0)
 * nlraw -p COMMAND ...: the reply's attributes are printed before "ok", one
 * "name=value" per line (numbers in decimal, books as an IG:BOOK list,
 * binary as hex).
 * Exit: 0 ok, 1 error reply, 2 usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <netlink/genl/genl.h>

#include "liblfsnl.h"
#include "client.h"

static const char *const cmds[LFS_CMD_MAX + 1] = {
	[LFS_CMD_FABRIC_ATTACH] = "attach", [LFS_CMD_FABRIC_DETACH] = "detach",
	[LFS_CMD_FABRIC_GET] = "fabric_get", [LFS_CMD_SHELF_CREATE] = "create",
	[LFS_CMD_SHELF_EXTEND] = "extend", [LFS_CMD_SHELF_SHRINK] = "shrink",
	[LFS_CMD_SHELF_REMOVE] = "remove", [LFS_CMD_SHELF_GET] = "shelf_get",
	[LFS_CMD_BOOK_ZERO] = "zero", [LFS_CMD_BOOK_CHECK] = "check",
	[LFS_CMD_LEASE_RENEW] = "lease_renew", [LFS_CMD_LEASE_GET] = "lease_get",
	[LFS_CMD_SHELF_FENCE] = "fence", [LFS_CMD_FABRIC_LABEL] = "label",
	[LFS_CMD_UPCALL_REGISTER] = "up_register", [LFS_CMD_UPCALL_UNREGISTER] = "up_unregister",
	[LFS_CMD_UPCALL_GET] = "up_get", [LFS_CMD_UPCALL_REQUEST] = "up_request",
	[LFS_CMD_UPCALL_REPLY] = "up_reply",
};

static const char *const attrs[LFS_A_MAX + 1] = {
	[LFS_A_PATH] = "path", [LFS_A_IG] = "ig", [LFS_A_BOOK_SIZE] = "book_size",
	[LFS_A_OFFSET] = "offset", [LFS_A_NR_BOOKS] = "nr_books", [LFS_A_NAME] = "name",
	[LFS_A_UUID] = "uuid", [LFS_A_BOOKS] = "books", [LFS_A_BOOKS_START] = "books_start",
	[LFS_A_MORE] = "more", [LFS_A_ZEROED] = "zeroed", [LFS_A_LEASED] = "leased",
	[LFS_A_STATE] = "state", [LFS_A_CREATED] = "created",
	[LFS_A_LEASE_START] = "lease_start", [LFS_A_LEASE_MS] = "lease_ms",
	[LFS_A_LEASE_LEFT] = "lease_left", [LFS_A_FENCE_ACTION] = "fence_action",
	[LFS_A_NR_FENCED] = "nr_fenced", [LFS_A_FABRIC_UUID] = "fabric_uuid",
	[LFS_A_ID] = "id", [LFS_A_DISK] = "disk", [LFS_A_DEVT] = "devt",
	[LFS_A_UP_ID] = "up_id", [LFS_A_UP_OP] = "up_op", [LFS_A_UP_ERRNO] = "up_errno",
	[LFS_A_UP_FLAGS] = "up_flags", [LFS_A_NEW_NAME] = "new_name", [LFS_A_SIZE] = "size",
	[LFS_A_INO] = "ino", [LFS_A_MTIME] = "mtime", [LFS_A_CTIME] = "ctime",
	[LFS_A_WRITABLE] = "writable", [LFS_A_POLICY] = "policy",
	[LFS_A_XATTR_NAME] = "xattr_name", [LFS_A_XATTR_VALUE] = "xattr_value",
	[LFS_A_XATTR_NAMES] = "xattr_names", [LFS_A_ENTRIES] = "entries",
	[LFS_A_TOTAL_BYTES] = "total_bytes", [LFS_A_FREE_BYTES] = "free_bytes",
	[LFS_A_NR_FILES] = "nr_files", [LFS_A_UP_PORTID] = "up_portid",
	[LFS_A_UP_PENDING] = "up_pending", [LFS_A_UP_SENT] = "up_sent",
	[LFS_A_UP_REFUSED] = "up_refused", [LFS_A_NR_ACTIVE] = "nr_active",
	[LFS_A_FENCE_COUNT] = "fence_count", [LFS_A_FENCE_LAST_NS] = "fence_last_ns",
	[LFS_A_FENCE_MAX_NS] = "fence_max_ns", [LFS_A_FENCE_DONE_LAST_NS] = "fence_done_last_ns",
	[LFS_A_FENCE_DONE_MAX_NS] = "fence_done_max_ns", [LFS_A_FENCE_HIST] = "fence_hist",
	[LFS_A_FENCE_WATCHDOG_MS] = "fence_watchdog_ms",
};

static int lookup(const char *const *names, int max, const char *s)
{
	char *end;
	long v;
	int i;

	for (i = 0; i <= max; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	v = strtol(s, &end, 0);
	return *s && !*end && v >= 0 && v < 65536 ? v : -1;
}

static int put_attr(struct nl_msg *msg, char *spec)
{
	char *eq = strchr(spec, '='), *colon, *type, *val, err[256];
	unsigned long long v;
	struct lfs_book *books;
	unsigned char bytes[4096];
	size_t n, i;
	int a;

	if (!eq || !(colon = strchr(eq, ':')))
		return -1;
	*eq = *colon = '\0';
	type = eq + 1;
	val = colon + 1;
	a = lookup(attrs, LFS_A_MAX, spec);
	if (a < 0)
		return -1;
	v = strtoull(val, NULL, 0);
	if (!strcmp(type, "u8"))
		return nla_put_u8(msg, a, v);
	if (!strcmp(type, "u16"))
		return nla_put_u16(msg, a, v);
	if (!strcmp(type, "u32"))
		return nla_put_u32(msg, a, v);
	if (!strcmp(type, "u64"))
		return nla_put_u64(msg, a, v);
	if (!strcmp(type, "str"))
		return nla_put_string(msg, a, val);
	if (!strcmp(type, "raw"))
		return nla_put(msg, a, strlen(val), val);
	if (!strcmp(type, "flag"))
		return nla_put_flag(msg, a);
	if (!strcmp(type, "now")) {
		struct timespec ts;

		clock_gettime(CLOCK_BOOTTIME, &ts);
		return nla_put_u64(msg, a, ts.tv_sec * 1000000000ULL + ts.tv_nsec +
						   strtoll(val, NULL, 0) * 1000000LL);
	}
	if (!strcmp(type, "hex")) {
		n = strlen(val) / 2;
		if (n > sizeof(bytes))
			return -1;
		for (i = 0; i < n; i++)
			if (sscanf(val + 2 * i, "%2hhx", &bytes[i]) != 1)
				return -1;
		return nla_put(msg, a, n, bytes);
	}
	if (!strcmp(type, "books")) {
		if (lfs_parse_books(val, &books, &n, err, sizeof(err))) {
			fprintf(stderr, "nlraw: %s\n", err);
			return -1;
		}
		i = nla_put(msg, a, n * sizeof(*books), books);
		free(books);
		return i;
	}
	return -1;
}

/* One reply attribute as name=value. */
static void print_attr(const struct nlattr *a)
{
	int t = nla_type(a), len = nla_len(a), i;
	const unsigned char *d = nla_data(a);
	const char *name = t <= LFS_A_MAX && attrs[t] ? attrs[t] : "?";

	if (t == LFS_A_BOOKS) {
		char *s = lfs_format_books(nla_data(a), len / sizeof(struct lfs_book));

		printf("%s=%s\n", name, s ? s : "");
		free(s);
	} else if (t == LFS_A_DISK || t == LFS_A_NAME || t == LFS_A_PATH) {
		printf("%s=%.*s\n", name, len, (const char *)d);
	} else if (len == 1 || len == 4 || len == 8) {
		long long v = len == 1 ? *d : len == 4 ? (long long)nla_get_u32(a) :
				 (long long)nla_get_u64(a);

		printf("%s=%lld\n", name, t == LFS_A_LEASE_LEFT ? (long long)nla_get_s64(a) : v);
	} else {
		printf("%s=", name);
		for (i = 0; i < len; i++)
			printf("%02x", d[i]);
		printf("\n");
	}
}

static int print_reply(struct nlattr **tb, void *arg)
{
	(void)arg;
	for (int t = 1; t <= LFS_A_MAX; t++)
		if (tb[t])
			print_attr(tb[t]);
	return 0;
}

/* The driver's whole visible state, from its dumps, in one process. */
static int print_state(struct lfs_client *c)
{
	struct lfs_fabric_info *f = NULL;
	struct lfs_shelf_info *s = NULL;
	size_t nf = 0, ns = 0, i;
	char uuid[37], *books;
	int ret;

	ret = lfsnl_fabric_list(c, &f, &nf);
	if (!ret)
		ret = lfsnl_shelf_list(c, NULL, &s, &ns);
	if (ret) {
		printf("error %s: %s\n", strerrorname_np(-ret), lfs_client_error(c));
		return 1;
	}
	for (i = 0; i < nf; i++)
		printf("fabric %u %s %llu %llu %u %u %d\n", f[i].ig, f[i].path,
		       (unsigned long long)f[i].book_size, (unsigned long long)f[i].offset,
		       f[i].nr_books, f[i].books_used, f[i].dax);
	for (i = 0; i < ns; i++) {
		lfs_format_uuid(s[i].uuid, uuid);
		books = lfs_format_books(s[i].books, s[i].nr_books);
		printf("shelf %s %s %s %llu %u %d %s\n", s[i].name, uuid, s[i].disk,
		       (unsigned long long)s[i].book_size, s[i].nr_books, s[i].dax, books);
		free(books);
	}
	free(f);
	lfsnl_shelf_list_free(s, ns);
	return 0;
}

/* Scan one buffer of replies; returns 1 once NLMSG_DONE is seen. */
static int scan_replies(const void *buf, ssize_t len, int *intr)
{
	const struct nlmsghdr *h;

	for (h = buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_flags & NLM_F_DUMP_INTR)
			*intr = 1;
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
			return 1;
	}
	return 0;
}

static int dump_intr(struct lfs_client *c, const char *arg)
{
	static char buf[1 << 16];
	struct lfs_shelf_info info;
	struct lfs_client *other;
	struct lfs_book *books;
	int intr = 0, done, ret;
	char err[256];
	struct nl_msg *msg;
	size_t n;
	ssize_t r;

	if (lfs_parse_books(arg, &books, &n, err, sizeof(err))) {
		fprintf(stderr, "nlraw: %s\n", err);
		return 2;
	}
	msg = lfs_msg_new(c, LFS_CMD_SHELF_GET, NLM_F_DUMP, 4096);
	if (!msg || nl_send_auto(c->sk, msg) < 0)
		return 2;
	nlmsg_free(msg);
	r = recv(nl_socket_get_fd(c->sk), buf, sizeof(buf), 0);
	done = r <= 0 || scan_replies(buf, r, &intr);
	if (done) {
		fprintf(stderr, "nlraw: the dump ended in its first part\n");
		return 2;
	}
	if (lfs_client_open(&other))
		return 2;
	ret = lfsnl_shelf_create(other, "dumpintr", NULL, false, books, n, &info);
	if (!ret)
		ret = lfsnl_shelf_remove(other, "dumpintr");
	if (ret) {
		fprintf(stderr, "nlraw: %s\n", lfs_client_error(other));
		return 2;
	}
	lfs_client_close(other);
	free(books);
	while (!done) {
		r = recv(nl_socket_get_fd(c->sk), buf, sizeof(buf), 0);
		done = r <= 0 || scan_replies(buf, r, &intr);
	}
	printf("%s\n", intr ? "interrupted" : "consistent");
	return 0;
}

int main(int argc, char **argv)
{
	struct lfs_client *c;
	struct nl_msg *msg;
	bool print = false;
	int cmd, i, ret;

	if ((argc == 2 && !strcmp(argv[1], "state")) ||
	    (argc == 3 && !strcmp(argv[1], "dumpintr"))) {
		ret = lfs_client_open(&c);
		if (ret) {
			fprintf(stderr, "nlraw: cannot reach the lfs family: %s\n", strerror(-ret));
			return 2;
		}
		ret = argc == 2 ? print_state(c) : dump_intr(c, argv[2]);
		lfs_client_close(c);
		return ret;
	}

	if (argc > 1 && !strcmp(argv[1], "-p")) {
		print = true;
		argc--;
		argv++;
	}
	if (argc < 2 || (cmd = lookup(cmds, LFS_CMD_MAX, argv[1])) < 0 || cmd > 255) {
		fprintf(stderr, "usage: nlraw COMMAND [ATTR=TYPE:VALUE]...\n");
		return 2;
	}
	ret = lfs_client_open(&c);
	if (ret) {
		fprintf(stderr, "nlraw: cannot reach the lfs family: %s\n", strerror(-ret));
		return 2;
	}
	msg = lfs_msg_new(c, cmd, NLM_F_ACK, 70000);
	if (!msg)
		return 2;
	for (i = 2; i < argc; i++) {
		if (put_attr(msg, argv[i])) {
			fprintf(stderr, "nlraw: bad attribute `%s'\n", argv[i]);
			return 2;
		}
	}
	ret = lfs_request(c, msg, print ? print_reply : NULL, NULL);
	if (ret)
		printf("error %s: %s\n", strerrorname_np(-ret), lfs_client_error(c));
	else
		printf("ok\n");
	lfs_client_close(c);
	return ret ? 1 : 0;
}
