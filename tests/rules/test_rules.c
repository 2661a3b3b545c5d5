// SPDX-License-Identifier: MIT
/*
 * Unit test of the shared rules module (common/lfs_rules.h), TAP output.
 * "test_rules --text" prints the rules in words, one per line, for rules.t
 * to find in the documents.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lfs_rules.h"

static int n, failed;

static void ok(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

static void test_names(void)
{
	char msg[256], long65[66], long64[65];

	memset(long65, 'a', 65);
	long65[65] = '\0';
	memset(long64, 'a', 64);
	long64[64] = '\0';
	ok(!lfs_rule_shelf_name("db.01_x-y", msg, sizeof(msg)), "shelf name db.01_x-y is valid");
	ok(!lfs_rule_shelf_name(long64, msg, sizeof(msg)), "a 64-character shelf name is valid");
	ok(lfs_rule_shelf_name(long65, msg, sizeof(msg)) == -ENAMETOOLONG &&
		   strstr(msg, "65 characters long: at most 64"),
	   "a 65-character shelf name: ENAMETOOLONG, the message gives both lengths");
	ok(lfs_rule_shelf_name("a+b", msg, sizeof(msg)) == -EINVAL && strstr(msg, "'a+b'"),
	   "a+b is refused, named");
	ok(lfs_rule_shelf_name("", msg, sizeof(msg)) == -EINVAL, "the empty name is refused");
	ok(lfs_rule_shelf_name(".", msg, sizeof(msg)) &&
		   lfs_rule_shelf_name("..", msg, sizeof(msg)) &&
		   lfs_rule_shelf_name(".x", msg, sizeof(msg)) &&
		   lfs_rule_shelf_name("-x", msg, sizeof(msg)),
	   ". .. .x -x are refused");
	ok(lfs_rule_shelf_name("a/b", msg, sizeof(msg)) &&
		   lfs_rule_shelf_name("a b", msg, sizeof(msg)),
	   "names with / or space are refused");
	ok(lfs_rule_shelf_name("a\nb", msg, sizeof(msg)) && strstr(msg, "a\\x0ab"),
	   "a control character is shown escaped in the message");
	ok(!lfs_rule_node_name("node01", msg, sizeof(msg)) &&
		   lfs_rule_node_name("-n", msg, sizeof(msg)) == -EINVAL,
	   "node names follow the same characters");
	ok(!lfs_rule_attr_key(".hidden-ok", msg, sizeof(msg)) &&
		   lfs_rule_attr_key("a=b", msg, sizeof(msg)) == -EINVAL,
	   "attribute keys: any first character, no '='");
}

static void test_ranges(void)
{
	char msg[256];

	ok(!lfs_rule_ig(0, "IG", msg, sizeof(msg)) && !lfs_rule_ig(65535, "IG", msg, sizeof(msg)),
	   "IG 0 and 65535 are valid");
	ok(lfs_rule_ig(65536, "IG", msg, sizeof(msg)) == -ERANGE && strstr(msg, "65536"),
	   "IG 65536 is out of range, named");
	ok(lfs_rule_ig(1LL << 32, "IG", msg, sizeof(msg)) == -ERANGE, "IG 2^32 does not wrap to 0");
	ok(lfs_rule_ig(-1, "IG", msg, sizeof(msg)) == -ERANGE, "IG -1 is refused");
	ok(!lfs_rule_book_size(2 << 20, msg, sizeof(msg)) &&
		   !lfs_rule_book_size(8ULL << 30, msg, sizeof(msg)),
	   "book sizes 2M and 8G are valid");
	ok(lfs_rule_book_size(3 << 20, msg, sizeof(msg)) == -EINVAL &&
		   lfs_rule_book_size(1 << 20, msg, sizeof(msg)) == -EINVAL &&
		   lfs_rule_book_size(2ULL << 40, msg, sizeof(msg)) == -EINVAL,
	   "book sizes 3M, 1M and 2T are refused");
	ok(lfs_rule_shelf_books(LFS_SHELF_BOOKS_MAX + 1ULL, msg, sizeof(msg)) == -E2BIG,
	   "more books than a shelf may hold is refused");
}

static void test_policies(void)
{
	enum lfs_policy p;
	const char *hint;
	char msg[256];

	ok(!lfs_policy_parse("LocalNode", &p) && p == LFS_POL_LOCAL_NODE, "LocalNode parses");
	ok(lfs_policy_parse("localnode", &p) == -EINVAL, "the wire spelling is exact");
	ok(!lfs_policy_lookup("localnode", &p, &hint, msg, sizeof(msg)) && p == LFS_POL_LOCAL_NODE,
	   "command lines take any case");
	ok(lfs_policy_lookup("LocalNod", &p, &hint, msg, sizeof(msg)) == -EINVAL && hint &&
		   !strcmp(hint, "LocalNode") && strstr(msg, "did you mean LocalNode"),
	   "a near miss gets a hint");
	ok(!strcmp(lfs_policy_name(LFS_POL_NONLOCAL_ENC), "NonLocal_Enc") && !lfs_policy_name(99),
	   "names by number");
}

static void test_sizes(void)
{
	struct lfs_size sz;
	char msg[256], b[32];
	uint64_t books;

	ok(!lfs_size_parse("64M", 0, &sz, msg, sizeof(msg)) && sz.value == 64ULL << 20,
	   "64M is 64 MiB");
	ok(!lfs_size_parse("2GiB", 0, &sz, msg, sizeof(msg)) && sz.value == 2ULL << 30 &&
		   !lfs_size_parse("1tb", 0, &sz, msg, sizeof(msg)) && sz.value == 1ULL << 40,
	   "2GiB and 1tB");
	ok(lfs_size_parse("64", 0, &sz, msg, sizeof(msg)) == -EINVAL && strstr(msg, "no unit"),
	   "a bare number needs LFS_SIZE_BARE");
	ok(!lfs_size_parse("4096", LFS_SIZE_BARE, &sz, msg, sizeof(msg)) && sz.value == 4096,
	   "with LFS_SIZE_BARE it is bytes");
	ok(!lfs_size_parse("8b", LFS_SIZE_BOOKS, &sz, msg, sizeof(msg)) && sz.books &&
		   sz.value == 8,
	   "8b is eight books");
	ok(lfs_size_parse("8b", 0, &sz, msg, sizeof(msg)) == -EINVAL, "books only where taken");
	ok(!lfs_size_parse("-512M", LFS_SIZE_SIGN, &sz, msg, sizeof(msg)) && sz.sign == -1 &&
		   lfs_size_parse("+1G", 0, &sz, msg, sizeof(msg)) == -EINVAL,
	   "signs only where taken");
	ok(lfs_size_parse("0M", 0, &sz, msg, sizeof(msg)) == -EINVAL &&
		   !lfs_size_parse("0", LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, msg, sizeof(msg)),
	   "zero only where taken");
	ok(lfs_size_parse("99999999999999999999", LFS_SIZE_BARE, &sz, msg, sizeof(msg)) ==
			   -ERANGE &&
		   lfs_size_parse("17000000P", 0, &sz, msg, sizeof(msg)) == -ERANGE,
	   "overflow is ERANGE");
	ok(lfs_size_parse("1X", 0, &sz, msg, sizeof(msg)) == -EINVAL && strstr(msg, "`X'"),
	   "a bad unit is named");
	lfs_size_parse("65M", 0, &sz, msg, sizeof(msg));
	ok(!lfs_size_books(&sz, 32ULL << 20, &books) && books == 3, "65M in 32M books is 3 books");
	ok(!strcmp(lfs_size_human(3ULL << 30, b, sizeof(b)), "3 GiB") &&
		   !strcmp(lfs_size_short(3ULL << 30, b, sizeof(b)), "3G"),
	   "sizes print as 3 GiB and 3G");
}

static void test_ig_lists(void)
{
	uint32_t igs[8];
	char msg[256];

	ok(lfs_ig_list_parse("0,2-4", igs, 8, msg, sizeof(msg)) == 4 && igs[3] == 4, "0,2-4");
	ok(lfs_ig_list_parse("1,1", igs, 8, msg, sizeof(msg)) == -EINVAL && strstr(msg, "twice"),
	   "duplicates refused");
	ok(lfs_ig_list_parse("0-9", igs, 8, msg, sizeof(msg)) == -E2BIG, "too many refused");
	ok(lfs_ig_list_parse("65536", igs, 8, msg, sizeof(msg)) == -EINVAL &&
		   lfs_ig_list_parse("1,", igs, 8, msg, sizeof(msg)) == -EINVAL &&
		   lfs_ig_list_parse("3-1", igs, 8, msg, sizeof(msg)) == -EINVAL,
	   "out of range, trailing comma, reversed range refused");
}

int main(int argc, char **argv)
{
	char buf[512];

	if (argc > 1 && !strcmp(argv[1], "--text")) {
		for (int r = 0; r < LFS_RULE_COUNT; r++)
			printf("%s\n", lfs_rule_text(r, buf, sizeof(buf)));
		return 0;
	}
	test_names();
	test_ranges();
	test_policies();
	test_sizes();
	test_ig_lists();
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
