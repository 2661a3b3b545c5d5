// SPDX-License-Identifier: MIT
/* lfsctl attach, detach, fabric */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <jansson.h>

#include "lfsctl.h"

/* The options attach and label share: where the device sits in the fabric. */
struct fabric_args {
	uint32_t ig;
	uint64_t book_size, offset;
	uint8_t fabric[LFS_UUID_LEN];
	bool have_ig, have_bs, have_fabric;
};

static int fabric_options(const char *cmd, int argc, char **argv, struct fabric_args *fa)
{
	static const struct option opts[] = {
		{ "ig", required_argument, NULL, 'i' },
		{ "book-size", required_argument, NULL, 'b' },
		{ "offset", required_argument, NULL, 'o' },
		{ "fabric", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'i' && lfs_parse_u32(optarg, LFS_IG_MAX, &fa->ig)) {
			lfsctl_err("%s %s: invalid interleave group `%s' (0-%u)\n", prog, cmd,
				   optarg, LFS_IG_MAX);
			return -EINVAL;
		} else if (opt == 'b' && lfsctl_size(cmd, "--book-size", optarg, &fa->book_size)) {
			return -EINVAL;
		} else if (opt == 'o' && lfsctl_size(cmd, "--offset", optarg, &fa->offset)) {
			return -EINVAL;
		} else if (opt == 'f' && lfs_parse_uuid(optarg, fa->fabric)) {
			lfsctl_err("%s %s: invalid fabric UUID `%s'\n", prog, cmd, optarg);
			return -EINVAL;
		} else if (opt != 'i' && opt != 'b' && opt != 'o' && opt != 'f') {
			lfsctl_usage(cmd);
			return -EINVAL;
		}
		fa->have_ig |= opt == 'i';
		fa->have_bs |= opt == 'b';
		fa->have_fabric |= opt == 'f';
	}
	if (optind != argc - 1 || !fa->have_ig || !fa->have_bs) {
		lfsctl_usage(cmd);
		return -EINVAL;
	}
	return 0;
}

static json_t *fabric_json(const struct lfs_fabric_info *f);

/* Under --json: the device and the kernel's view of its IG now. */
static void attached_result(struct lfs_client *c, const char *dev, uint32_t ig)
{
	struct lfs_fabric_info *v = NULL;
	size_t n = 0;

	lfsctl_result("device", json_string(dev));
	lfsctl_result("ig", json_integer(ig));
	if (lfsnl_fabric_list(c, &v, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].ig == ig)
			lfsctl_result("fabric", fabric_json(&v[i]));
	free(v);
}

int cmd_attach(int argc, char **argv)
{
	struct fabric_args fa = { 0 };
	struct lfs_client *c;
	int ret;

	if (fabric_options("attach", argc, argv, &fa))
		return EXIT_USAGE;
	c = lfsctl_connect("attach");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_attach_labelled(c, argv[optind], fa.ig, fa.book_size, fa.offset,
				    fa.have_fabric ? fa.fabric : NULL);
	if (ret)
		return lfsctl_fail(c, "attach", argv[optind], ret);
	if (lfsctl_json)
		attached_result(c, argv[optind], fa.ig);
	lfs_client_close(c);
	return 0;
}

/* label DEVICE: the device must not be attached; an existing label is never overwritten. */
int cmd_label(int argc, char **argv)
{
	struct fabric_args fa = { .offset = LFS_OFFSET_ALIGN };
	struct lfs_client *c;
	char u[37];
	int ret;

	if (fabric_options("label", argc, argv, &fa))
		return EXIT_USAGE;
	if (!fa.have_fabric)
		return lfsctl_usage("label");
	c = lfsctl_connect("label");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_fabric_label(c, argv[optind], fa.ig, fa.book_size, fa.offset, fa.fabric);
	if (ret)
		return lfsctl_fail(c, "label", argv[optind], ret);
	lfs_client_close(c);
	lfs_format_uuid(fa.fabric, u);
	lfsctl_result("device", json_string(argv[optind]));
	lfsctl_result("ig", json_integer(fa.ig));
	lfsctl_result("fabric_uuid", json_string(u));
	if (!lfsctl_json)
		printf("%s: labelled IG %u of fabric %s\n", argv[optind], fa.ig, u);
	return 0;
}

int cmd_detach(int argc, char **argv)
{
	struct lfs_client *c;
	int ret;

	if (argc != 2 || argv[1][0] == '-')
		return lfsctl_usage("detach");
	c = lfsctl_connect("detach");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_detach(c, argv[1]);
	if (ret)
		return lfsctl_fail(c, "detach", argv[1], ret);
	lfsctl_result("device", json_string(argv[1]));
	lfs_client_close(c);
	return 0;
}

/* The device's bad ranges (docs/CXL.md "Poison"): book, offset in it, length. */
static json_t *bad_json(const struct lfs_fabric_info *f)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; i < f->nr_bad; i++)
		json_array_append_new(arr, json_pack("{s:I, s:I, s:I}", "book",
						     (json_int_t)f->bad[i].book, "offset",
						     (json_int_t)f->bad[i].offset, "length",
						     (json_int_t)f->bad[i].length));
	return arr;
}

static json_t *fabric_json(const struct lfs_fabric_info *f)
{
	char u[37];

	lfs_format_uuid(f->fabric_uuid, u);
	return json_pack("{s:I, s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:i, s:b, s:b, s:o, "
			 "s:o}",
			 "ig", (json_int_t)f->ig, "path", f->path, "major", major(f->devt), "minor",
			 minor(f->devt), "book_size", (json_int_t)f->book_size, "offset",
			 (json_int_t)f->offset, "size", (json_int_t)f->dev_size, "books",
			 (json_int_t)f->nr_books, "books_used", (json_int_t)f->books_used, "dax",
			 f->dax, "numa_node", f->numa_node, "devdax", f->devdax, "volatile",
			 f->volatile_mem, "fabric_uuid", f->labelled ? json_string(u) : json_null(),
			 "bad", bad_json(f));
}

/* Below the table, only if some device has bad ranges. */
static void bad_table(const struct lfs_fabric_info *v, size_t n)
{
	const struct lfs_bad_range *b;
	bool head = false;

	for (size_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < v[i].nr_bad; j++) {
			if (!head)
				printf("\nBAD RANGES\n%-4s %-10s %-14s %s\n", "IG", "BOOK",
				       "OFFSET", "LENGTH");
			head = true;
			b = &v[i].bad[j];
			printf("%-4u %-10u %-14llu %llu\n", v[i].ig, b->book,
			       (unsigned long long)b->offset, (unsigned long long)b->length);
		}
	}
}

static void fabric_table(const struct lfs_fabric_info *v, size_t n)
{
	char bs[32], off[32], size[32], u[37];
	size_t i;

	printf("%-4s %-20s %-9s %-7s %-9s %-7s %-7s %-4s %-5s %-10s %s\n", "IG", "DEVICE", "SIZE",
	       "BOOK", "OFFSET", "BOOKS", "USED", "DAX", "NODE", "MEMORY", "LABEL (FABRIC)");
	for (i = 0; i < n; i++) {
		lfs_size_short(v[i].book_size, bs, sizeof(bs));
		lfs_size_short(v[i].offset, off, sizeof(off));
		lfs_size_short(v[i].dev_size, size, sizeof(size));
		lfs_format_uuid(v[i].fabric_uuid, u);
		printf("%-4u %-20s %-9s %-7s %-9s %-7u %-7u %-4s %-5d %-10s %s\n", v[i].ig,
		       v[i].path, size, bs, off, v[i].nr_books, v[i].books_used,
		       v[i].dax ? "yes" : "no", v[i].numa_node,
		       v[i].volatile_mem ? "volatile" : "persistent", v[i].labelled ? u : "-");
	}
	bad_table(v, n);
}

int cmd_fabric(int argc, char **argv)
{
	struct lfs_fabric_info *v = NULL;
	struct lfs_client *c;
	json_t *arr;
	size_t i, n = 0;
	int json = lfsctl_json, ret;

	if (argc == 2 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc != 1)
		return lfsctl_usage("fabric");
	c = lfsctl_connect("fabric");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_fabric_list(c, &v, &n);
	if (ret)
		return lfsctl_fail(c, "fabric", "listing fabric devices", ret);
	lfs_client_close(c);
	if (json) {
		arr = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(arr, fabric_json(&v[i]));
		json_dumpf(arr, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(arr);
	} else {
		fabric_table(v, n);
	}
	free(v);
	return 0;
}
