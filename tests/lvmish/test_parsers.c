// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lfsvol's parsers, built with ASan/UBSan: SIZE, IG lists,
 * policies and names as lfsvol uses the shared rules module (the flags it
 * passes), and lfs.conf. Prints TAP. Run from tests/lvmish/parsers.t.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "lfs_rules.h"
#include "msg.h"

/* lfsvol's SIZE arguments: books, and a sign where resize takes one. */
static int parse_size(const char *s, bool sign, struct lfs_size *sz, char *m, size_t len)
{
	return lfs_size_parse(s, LFS_SIZE_BOOKS | (sign ? LFS_SIZE_SIGN : 0), sz, m, len);
}

/* create -p: any letter case; the exact name, or NULL and a hint. */
static const char *policy_lookup(const char *s, const char **hint)
{
	enum lfs_policy p;

	return lfs_policy_lookup(s, &p, hint, NULL, 0) ? NULL : lfs_policy_name(p);
}

static bool valid_name(const char *s)
{
	char m[256];

	return !lfs_rule_shelf_name(s, m, sizeof(m));
}

static int n, failed;

static void ok(int cond, const char *fmt, ...) __printf(2, 3);
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed += !cond;
}

static void size_ok(const char *s, bool sign, uint64_t want, bool books, int wsign)
{
	struct lfs_size sz;
	char m[256] = "";
	int r = parse_size(s, sign, &sz, m, sizeof(m));

	ok(!r && sz.value == want && sz.books == books && sz.sign == wsign,
	   "SIZE `%s' = %llu%s sign %d (got r=%d %llu%s %d %s)", s, (unsigned long long)want,
	   books ? " books" : "", wsign, r, (unsigned long long)sz.value, sz.books ? " books" : "",
	   sz.sign, m);
}

static void size_bad(const char *s, bool sign, const char *want_in_msg)
{
	struct lfs_size sz;
	char m[256] = "";
	int r = parse_size(s, sign, &sz, m, sizeof(m));

	ok(r < 0 && strstr(m, want_in_msg), "SIZE `%s' refused with `%s' (got r=%d: %s)", s,
	   want_in_msg, r, m);
}

static void test_sizes(void)
{
	struct lfs_size sz;
	uint64_t b;
	char buf[32];

	size_ok("64M", false, 64ULL << 20, false, 0);
	size_ok("64MiB", false, 64ULL << 20, false, 0);
	size_ok("2g", false, 2ULL << 30, false, 0);
	size_ok("1T", false, 1ULL << 40, false, 0);
	size_ok("512K", false, 512ULL << 10, false, 0);
	size_ok("8b", false, 8, true, 0);
	size_ok("+1G", true, 1ULL << 30, false, 1);
	size_ok("-2b", true, 2, true, -1);
	size_bad("+1G", false, "`+1G'");
	size_bad("64", false, "has no unit");
	size_bad("", false, "invalid SIZE");
	size_bad("0M", false, "is zero");
	size_bad("12X", false, "invalid unit `X'");
	size_bad("1.5G", false, "invalid unit `.5G'");
	size_bad("64MB5", false, "invalid unit");
	size_bad("99999999999999999999M", false, "too large");
	size_bad("17179869184G", false, "too large");
	size_bad("-", true, "invalid SIZE");
	size_bad("8B", false, "has no unit"); /* B alone is bytes in the shared syntax */

	parse_size("100M", false, &sz, buf, sizeof(buf));
	ok(!lfs_size_books(&sz, 64ULL << 20, &b) && b == 2, "100M rounds up to 2 books of 64M (got %llu)",
	   (unsigned long long)b);
	parse_size("128M", false, &sz, buf, sizeof(buf));
	ok(!lfs_size_books(&sz, 64ULL << 20, &b) && b == 2, "128M is exactly 2 books of 64M");
	parse_size("1K", false, &sz, buf, sizeof(buf));
	ok(!lfs_size_books(&sz, 2ULL << 20, &b) && b == 1, "1K rounds up to 1 book");
	parse_size("16T", false, &sz, buf, sizeof(buf));
	ok(lfs_size_books(&sz, 2ULL << 20, &b) == -ERANGE, "16T of 2M books exceeds the shelf limit");
	ok(!strcmp(lfs_size_human(64ULL << 20, buf, sizeof(buf)), "64 MiB"), "64M prints as 64 MiB (%s)", buf);
	ok(!strcmp(lfs_size_human(3ULL << 29, buf, sizeof(buf)), "1536 MiB"), "1.5G prints as 1536 MiB (%s)", buf);
	ok(!strcmp(lfs_size_human(12345, buf, sizeof(buf)), "12.1 KiB"), "12345 prints as 12.1 KiB (%s)", buf);
}

static void test_policy_ig_names(void)
{
	const char *hint;
	uint32_t igs[8];
	char m[256] = "";
	int r;

	ok(policy_lookup("localnode", &hint) && !strcmp(policy_lookup("localnode", &hint), "LocalNode"),
	   "policy names are case-insensitive");
	ok(!policy_lookup("LocalNod", &hint) && hint && !strcmp(hint, "LocalNode"),
	   "policy typo LocalNod suggests LocalNode");
	ok(!policy_lookup("Sprad", &hint) && hint && !strcmp(hint, "Spread"), "Sprad suggests Spread");
	ok(!policy_lookup("Bogus-Thing-Entirely", &hint) && !hint, "no suggestion for nonsense");

	r = lfs_ig_list_parse("0,2-4", igs, 8, m, sizeof(m));
	ok(r == 4 && igs[0] == 0 && igs[1] == 2 && igs[3] == 4, "IG list 0,2-4 -> 0 2 3 4 (r=%d)", r);
	r = lfs_ig_list_parse("1,1", igs, 8, m, sizeof(m));
	ok(r < 0 && strstr(m, "IG 1 listed twice"), "duplicate IG refused (%s)", m);
	r = lfs_ig_list_parse("0,", igs, 8, m, sizeof(m));
	ok(r < 0 && strstr(m, "`0,'"), "trailing comma refused naming the list (%s)", m);
	r = lfs_ig_list_parse("70000", igs, 8, m, sizeof(m));
	ok(r < 0, "IG 70000 refused (%s)", m);
	r = lfs_ig_list_parse("0-100", igs, 8, m, sizeof(m));
	ok(r == -E2BIG, "too many IGs refused (%s)", m);
	r = lfs_ig_list_parse("3-1", igs, 8, m, sizeof(m));
	ok(r < 0, "reversed range refused (%s)", m);

	ok(valid_name("db.01_x-y"), "name db.01_x-y is valid");
	ok(!valid_name("a/b") && !valid_name("") && !valid_name("-x") &&
	   !valid_name("..") && !valid_name("a b"), "names with / space leading - or .. refused");
	ok(!valid_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	   "65-character name refused");
}

static char dir[] = "/tmp/lfsvol-test-XXXXXX";

static int conf_try(const char *text, struct lfsvol_conf **c, char *m, size_t mlen)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/lfs.conf", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return lfsvol_conf_load(path, false, c, m, mlen);
}

static void conf_bad(const char *text, const char *want, const char *desc)
{
	struct lfsvol_conf *c = NULL;
	char m[512] = "";
	int r = conf_try(text, &c, m, sizeof(m));

	ok(r < 0 && !c && strstr(m, want), "%s: error contains `%s' (got r=%d: %s)", desc, want, r, m);
	lfsvol_conf_free(c);
}

static void test_config(void)
{
	struct lfsvol_conf *c = NULL;
	char m[512] = "", p[64];
	int r;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	r = conf_try("librarian = \"10.0.2.100:9093\";\nnode = \"node1\";\nkey_file = \"/tmp/k\";\n"
		     "default_policy = \"spread\";\nconnect_timeout = 3;\nprocess_priority = -5;\n"
		     "fabric = (\n { ig = 0; device = \"/dev/pmem0\"; },\n { ig = 1; numa_node = 1; offset = \"2M\"; }\n);\n"
		     "shelves = ( { name = \"db\"; policy = \"RequestIG\"; igs = [0, 1]; auto_activate = true; } );\n"
		     "agent = { state_dir = \"/tmp/st\"; scrub_batch = 16; check_free = false; check_interval = 30; };\n", &c, m, sizeof(m));
	ok(!r && c, "a full lfs.conf parses (%s)", m);
	if (c) {
		ok(!strcmp(c->librarian, "10.0.2.100:9093") && !strcmp(c->node, "node1") &&
		   c->connect_timeout == 3 && !strcmp(c->default_policy, "Spread") &&
		   c->process_priority == -5,
		   "top-level settings read, policy canonicalised");
		ok(c->nfabrics == 2 && c->fabrics[0].sel == LFSVOL_SEL_PATH && c->fabrics[1].sel == LFSVOL_SEL_NUMA &&
		   c->fabrics[1].numa_node == 1 && c->fabrics[1].offset == (2ULL << 20),
		   "fabric map: IG 0 by path, IG 1 by NUMA node with 2M offset");
		ok(c->nshelves == 1 && c->shelves[0].auto_activate && c->shelves[0].nigs == 2 &&
		   c->shelves[0].igs[1] == 1 && lfsvol_conf_shelf(c, "db") && !lfsvol_conf_shelf(c, "x"),
		   "per-shelf settings read");
		ok(c->scrub_batch == 16 && !strcmp(c->state_dir, "/tmp/st") && !c->check_free &&
		   c->check_interval == 30, "agent settings read");
		lfsvol_conf_free(c);
	}
	c = NULL;
	r = lfsvol_conf_load("/nonexistent/lfs.conf", true, &c, m, sizeof(m));
	ok(!r && c && !c->default_policy && c->connect_timeout == 5 && c->process_priority == -18 &&
	   c->check_free && c->check_interval == 600,
	   "missing default file gives defaults");
	lfsvol_conf_free(c);
	c = NULL;
	r = lfsvol_conf_load("/nonexistent/lfs.conf", false, &c, m, sizeof(m));
	ok(r == -ENOENT && strstr(m, "/nonexistent/lfs.conf"), "missing explicit file names it (%s)", m);

	snprintf(p, sizeof(p), "%s/lfs.conf:2:", dir);
	conf_bad("node = \"a\";\nlibrarian = 10.0.2.1:9093;\n", p, "syntax error names file:line");
	conf_bad("node = \"a\";\n\npolcy = \"Spread\";\n", ":3: unknown setting `polcy'", "unknown key");
	conf_bad("default_policy = \"LocalNod\";\n", ":1: unknown policy `LocalNod'; did you mean `LocalNode'?",
		 "policy typo");
	conf_bad("fabric = (\n { ig = 0; device = \"/dev/pmem0\"; },\n { ig = 0; device = \"/dev/pmem1\"; }\n);\n",
		 ":3: IG 0 is mapped twice (also at line 2)", "duplicate IG");
	conf_bad("fabric = ( { ig = 0; device = \"/dev/pmem0\"; numa_node = 0; } );\n",
		 "needs exactly one of device, numa_node or by_path", "two selectors");
	conf_bad("fabric = ( { device = \"/dev/pmem0\"; } );\n", "has no `ig'", "fabric without ig");
	conf_bad("agent = {\n check_interval = 5; };\n", ":2: `check_interval' = 5 is out of range 10..86400", "check_interval below 10 names the line and range");
	conf_bad("agent = { check_free = 1; };\n", ":1: `check_free' must be true or false", "check_free not a boolean");
	conf_bad("fabric = ( { ig = 0; device = \"pmem0\"; } );\n", "device `pmem0' is not an absolute path",
		 "relative device");
	conf_bad("fabric = ( { ig = 0; device = \"/dev/pmem0\"; offset = \"1M\"; } );\n",
		 "not a multiple of 2 MiB", "unaligned offset");
	conf_bad("fabric = ( { ig = 0; device = \"/dev/pmem0\"; offset = \"1Q\"; } );\n",
		 "invalid unit `Q'", "bad offset unit");
	conf_bad("shelves = ( { name = \"a/b\"; } );\n", "shelf name 'a/b' may contain only", "bad shelf name");
	conf_bad("shelves = ( { name = \"a\"; },\n { name = \"a\"; } );\n", ":2: shelf `a' is configured twice",
		 "duplicate shelf");
	conf_bad("shelves = ( { name = \"a\"; auto_activate = 1; } );\n", "must be true or false", "bool type");
	conf_bad("connect_timeout = 0;\n", "out of range 1..300", "timeout range");
	conf_bad("process_priority = -21;\n", "out of range -20..19", "priority range");
	conf_bad("book_size = \"3M\";\n", "not a power of two", "book size");
	conf_bad("node = \"\";\n", "`node' is empty", "empty node");
	conf_bad("agent = { statedir = \"/x\"; };\n", "unknown setting `statedir' in agent", "agent typo");
	/* librarian: one address, a comma list or a libconfig list (docs/HA.md) */
	r = conf_try("librarian = \" 10.0.2.1:9093 , 10.0.2.2:9094,[fd00::1]:9095\";\n", &c, m, sizeof(m));
	ok(!r && c && !strcmp(c->librarian, "10.0.2.1:9093,10.0.2.2:9094,[fd00::1]:9095"),
	   "librarian as a comma list, blanks dropped (%s)", c ? c->librarian : m);
	lfsvol_conf_free(c);
	c = NULL;
	r = conf_try("librarian = [ \"10.0.2.1:9093\", \"unix:/run/lfs/lib.sock\" ];\n", &c, m, sizeof(m));
	ok(!r && c && !strcmp(c->librarian, "10.0.2.1:9093,unix:/run/lfs/lib.sock"),
	   "librarian as a libconfig list (%s)", c ? c->librarian : m);
	lfsvol_conf_free(c);
	c = NULL;
	r = conf_try("librarian = ( \"10.0.2.1:9093\" );\n", &c, m, sizeof(m));
	ok(!r && c && !strcmp(c->librarian, "10.0.2.1:9093"), "librarian as a libconfig () list of one (%s)",
	   c ? c->librarian : m);
	lfsvol_conf_free(c);
	c = NULL;
	conf_bad("node = \"a\";\nlibrarian = \"10.0.2.1:9093,10.0.2.2\";\n",
		 ":2: librarian address '10.0.2.2' is not HOST:PORT or unix:/PATH", "address without a port named");
	conf_bad("librarian = \"10.0.2.1:9093,10.0.2.2:70000\";\n",
		 "librarian address '10.0.2.2:70000': the port must be 1 to 65535", "port out of range named");
	conf_bad("librarian = \"10.0.2.1:9093,,10.0.2.2:1\";\n",
		 "librarian address list '10.0.2.1:9093,,10.0.2.2:1' has an empty address", "empty list item");
	conf_bad("librarian = [ \"10.0.2.1:9093\", \"10.0.2.1:9093\" ];\n",
		 "librarian address '10.0.2.1:9093' is listed twice", "address listed twice");
	conf_bad("librarian = ( \"10.0.2.1:9093\", 5 );\n", ":1: `librarian' entry 2 must be a string",
		 "list entry not a string");
	conf_bad("librarian = [ ];\n", "`librarian' must list 1 to 16 addresses, not 0", "empty list");
	conf_bad("librarian = \"fd00::1:9093\";\n",
		 "librarian address 'fd00::1:9093': an IPv6 address is [ADDR]:PORT", "bare IPv6 address");
	conf_bad("librarian = \"unix:lib.sock\";\n", "librarian address 'unix:lib.sock': a unix socket is unix:/",
		 "relative unix socket");
	conf_bad("librarian = 9093;\n", "`librarian' must be a string in double quotes or a list of them",
		 "librarian not a string");
	conf_bad("shelves = ( { name = \"a\"; igs = [0, 70000]; } );\n", "`igs' entry 2", "igs range");
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/lfs.conf", dir);
		unlink(path);
		rmdir(dir);
	}
}

/* A sysfs with pmem devices on NUMA nodes: block/NAME/device/numa_node. */
static void fake_pmem(const char *root, const char *name, int node)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/block/%s/device", root, name);
	for (char *c = p + strlen(root) + 1; (c = strchr(c, '/')); c++) {
		*c = 0;
		mkdir(p, 0755);
		*c = '/';
	}
	mkdir(p, 0755);
	strcat(p, "/numa_node");
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", node);
		fclose(f);
	}
}

/*
 * numa_node picks the one pmem device on that node; two there (an NVDIMM
 * and a CXL window on node 0, as under QEMU) are refused, named in order.
 */
static void test_numa_resolve(void)
{
	struct lfsvol_fabric_conf f = { .ig = 1, .sel = LFSVOL_SEL_NUMA };
	char root[] = "/tmp/lfs-sysfs-XXXXXX", path[256], cmd[300];
	int r;

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	fake_pmem(root, "pmem10", 0);
	fake_pmem(root, "pmem1", 1);
	fake_pmem(root, "pmem2", 0);
	fake_pmem(root, "sda", 2);
	lfsvol_sysfs = root;
	f.numa_node = 1;
	r = lfsvol_fabric_resolve(&f, path, sizeof(path));
	ok(!r && !strcmp(path, "/dev/pmem1"), "numa_node = 1: the one pmem device there (%s)", path);
	f.numa_node = 0;
	r = lfsvol_fabric_resolve(&f, path, sizeof(path));
	ok(r == -ENOTUNIQ && !strcmp(path, "/dev/pmem2, /dev/pmem10"),
	   "numa_node = 0 with two pmem devices: ENOTUNIQ, both named in order (%d, %s)", r, path);
	f.numa_node = 2;
	r = lfsvol_fabric_resolve(&f, path, sizeof(path));
	ok(r == -ENODEV, "numa_node = 2, only a disk that is not pmem there: ENODEV (%d)", r);
	lfsvol_sysfs = "/sys";
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ok(system(cmd) == 0, "fake sysfs removed");
}

int main(void)
{
	test_sizes();
	test_policy_ig_names();
	test_config();
	test_numa_resolve();
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
