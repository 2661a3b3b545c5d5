// SPDX-License-Identifier: MIT
/*
 * Unit test of liblfsnl's parsers and formatters, and of the shared rules
 * module as lfsctl uses it (SIZE in bytes, shelf names); prints TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "liblfsnl.h"
#include "lfs_rules.h"

static int n, failed;

static void ok(int cond, const char *what)
{
	n++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
	if (!cond)
		failed++;
}

static void size_case(const char *s, int want_ret, uint64_t want)
{
	char err[256] = "", desc[300];
	struct lfs_size sz = { 0 };
	int ret = lfs_size_parse(s, LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err));
	uint64_t v = sz.value;

	snprintf(desc, sizeof(desc), "size `%s' -> %d %llu (got %d %llu %s)", s, want_ret,
		 (unsigned long long)want, ret, (unsigned long long)v, err);
	ok(ret == want_ret && (ret || v == want) && (!ret || strstr(err, s)), desc);
}

static void books_case(const char *s, int want_ret, const char *want_fmt, size_t want_n)
{
	struct lfs_book *b = NULL;
	char err[256] = "", desc[400], *fmt = NULL;
	size_t cnt = 0;
	int ret = lfs_parse_books(s, &b, &cnt, err, sizeof(err));

	if (!ret)
		fmt = lfs_format_books(b, cnt);
	snprintf(desc, sizeof(desc), "books `%s' -> %d `%s' (got %d `%s' n=%zu %s)", s,
		 want_ret, want_fmt ? want_fmt : "", ret, fmt ? fmt : "", cnt, err);
	ok(ret == want_ret && (ret || (!strcmp(fmt, want_fmt) && cnt == want_n)) &&
	   (!ret || *err), desc);
	free(fmt);
	free(b);
}

static int name_check(const char *name)
{
	char msg[256];

	return lfs_rule_shelf_name(name, msg, sizeof(msg));
}

/*
 * lfs_genl_family() on the host's own controller family "nlctrl" (version 2
 * on every kernel since 2.6.19): the version check the lfs family gets,
 * without the module. Another version is refused naming both.
 */
static void family_cases(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	char msg[256] = "", want[300];
	int id;

	if (!sk || genl_connect(sk)) {
		ok(0, "a generic netlink socket");
		nl_socket_free(sk);
		return;
	}
	id = lfs_genl_family(sk, "nlctrl", 2, msg, sizeof(msg));
	ok(id == GENL_ID_CTRL, "lfs_genl_family: nlctrl version 2 is resolved");
	id = lfs_genl_family(sk, "nlctrl", 1, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s", msg);
	ok(id == -EPROTONOSUPPORT &&
		   !strcmp(msg, "the kernel's generic netlink family 'nlctrl' is version 2; "
				"this tool speaks version 1"),
	   "lfs_genl_family: another version is refused naming both");
	if (id != -EPROTONOSUPPORT)
		printf("# got %d: %s\n", id, want);
	id = lfs_genl_family(sk, "lfs-no-such-family", 1, msg, sizeof(msg));
	ok(id == -ENOENT && !strcmp(msg, "no generic netlink family 'lfs-no-such-family'"),
	   "lfs_genl_family: a missing family is ENOENT");
	nl_socket_free(sk);
}

int main(void)
{
	uint8_t u[16];
	char buf[80];

	size_case("0", 0, 0);
	size_case("4096", 0, 4096);
	size_case("2M", 0, 2ULL << 20);
	size_case("64m", 0, 64ULL << 20);
	size_case("8G", 0, 8ULL << 30);
	size_case("1T", 0, 1ULL << 40);
	size_case("", -EINVAL, 0);
	size_case("M", -EINVAL, 0);
	size_case("2X", -EINVAL, 0);
	size_case("2MB", 0, 2ULL << 20);	/* the shared SIZE syntax takes B and iB */
	size_case("-1", -EINVAL, 0);
	size_case("18446744073709551616", -ERANGE, 0);
	size_case("17179869184G", -ERANGE, 0);

	books_case("0:0", 0, "0:0", 1);
	books_case("0:0-3,1:0-3", 0, "0:0-3,1:0-3", 8);
	books_case("0:5,0:6,0:7", 0, "0:5-7", 3);
	books_case("1:3,0:1", 0, "1:3,0:1", 2);
	books_case("0:0-0", 0, "0:0", 1);
	books_case("0:0-99999", 0, "0:0-99999", 100000);
	books_case("", -EINVAL, NULL, 0);
	books_case("0", -EINVAL, NULL, 0);
	books_case("0:", -EINVAL, NULL, 0);
	books_case(":1", -EINVAL, NULL, 0);
	books_case("0:1,", -EINVAL, NULL, 0);
	books_case("0:1,,0:2", -EINVAL, NULL, 0);
	books_case("0:3-1", -EINVAL, NULL, 0);
	books_case("0:1-", -EINVAL, NULL, 0);
	books_case("a:1", -EINVAL, NULL, 0);
	books_case("65536:0", -EINVAL, NULL, 0);
	books_case("0:4294967296", -EINVAL, NULL, 0);
	books_case("0:1 ", -EINVAL, NULL, 0);
	books_case("0:0-4294967295", -E2BIG, NULL, 0);

	lfs_size_short(64ULL << 20, buf, sizeof(buf));
	ok(!strcmp(buf, "64M"), "format 64M");
	lfs_size_short(1536ULL << 20, buf, sizeof(buf));
	ok(!strcmp(buf, "1536M"), "format 1536M");
	lfs_size_short(1000, buf, sizeof(buf));
	ok(!strcmp(buf, "1000"), "format 1000");

	ok(!lfs_parse_uuid("0123abcd-4567-89ef-0123-456789abcdef", u), "uuid parses");
	lfs_format_uuid(u, buf);
	ok(!strcmp(buf, "0123abcd-4567-89ef-0123-456789abcdef"), "uuid round trip");
	ok(lfs_parse_uuid("0123abcd-4567-89ef-0123-456789abcdeg", u) == -EINVAL, "bad uuid");
	ok(lfs_parse_uuid("0123abcd", u) == -EINVAL, "short uuid");

	ok(!name_check("db-1.x_y"), "name db-1.x_y valid");
	ok(name_check(""), "empty name invalid");
	ok(name_check(".."), "name .. invalid");
	ok(name_check("a b"), "name with space invalid");
	ok(name_check("a/b"), "name with slash invalid");
	memset(buf, 'a', 64);
	buf[64] = '\0';
	ok(!name_check(buf), "64-character name valid");
	buf[64] = 'a';
	buf[65] = '\0';
	ok(name_check(buf), "65-character name invalid");

	family_cases();
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
