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

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ig", required_argument, NULL, 'i' },
		{ "book-size", required_argument, NULL, 'b' },
		{ "offset", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t book_size = 0, offset = 0;
	int have_ig = 0, have_bs = 0, opt, ret;
	struct lfs_client *c;
	uint32_t ig = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (lfs_parse_u32(optarg, LFS_IG_MAX, &ig)) {
				fprintf(stderr, "%s attach: invalid interleave group `%s' (0-%u)\n",
					prog, optarg, LFS_IG_MAX);
				return EXIT_USAGE;
			}
			have_ig = 1;
			break;
		case 'b':
			if (lfsctl_size("attach", "--book-size", optarg, &book_size))
				return EXIT_USAGE;
			have_bs = 1;
			break;
		case 'o':
			if (lfsctl_size("attach", "--offset", optarg, &offset))
				return EXIT_USAGE;
			break;
		default:
			return lfsctl_usage("attach");
		}
	}
	if (optind != argc - 1 || !have_ig || !have_bs)
		return lfsctl_usage("attach");

	c = lfsctl_connect("attach");
	if (!c)
		return EXIT_FAILURE;
	ret = lfs_attach(c, argv[optind], ig, book_size, offset);
	if (ret)
		return lfsctl_fail(c, "attach", argv[optind], ret);
	lfs_client_close(c);
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
	ret = lfs_detach(c, argv[1]);
	if (ret)
		return lfsctl_fail(c, "detach", argv[1], ret);
	lfs_client_close(c);
	return 0;
}

static json_t *fabric_json(const struct lfs_fabric_info *f)
{
	return json_pack("{s:I, s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:i}", "ig",
			 (json_int_t)f->ig, "device", f->path, "major", major(f->devt), "minor",
			 minor(f->devt), "book_size", (json_int_t)f->book_size, "offset",
			 (json_int_t)f->offset, "size", (json_int_t)f->dev_size, "nr_books",
			 (json_int_t)f->nr_books, "books_used", (json_int_t)f->books_used, "dax",
			 f->dax, "numa_node", f->numa_node);
}

static void fabric_table(const struct lfs_fabric_info *v, size_t n)
{
	char bs[32], off[32], size[32];
	size_t i;

	printf("%-4s %-20s %-9s %-7s %-9s %-7s %-7s %-4s %s\n", "IG", "DEVICE", "SIZE", "BOOK",
	       "OFFSET", "BOOKS", "USED", "DAX", "NODE");
	for (i = 0; i < n; i++) {
		lfs_size_short(v[i].book_size, bs, sizeof(bs));
		lfs_size_short(v[i].offset, off, sizeof(off));
		lfs_size_short(v[i].dev_size, size, sizeof(size));
		printf("%-4u %-20s %-9s %-7s %-9s %-7u %-7u %-4s %d\n", v[i].ig, v[i].path, size,
		       bs, off, v[i].nr_books, v[i].books_used, v[i].dax ? "yes" : "no",
		       v[i].numa_node);
	}
}

int cmd_fabric(int argc, char **argv)
{
	struct lfs_fabric_info *v = NULL;
	struct lfs_client *c;
	json_t *arr;
	size_t i, n = 0;
	int json = 0, ret;

	if (argc == 2 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc != 1)
		return lfsctl_usage("fabric");
	c = lfsctl_connect("fabric");
	if (!c)
		return EXIT_FAILURE;
	ret = lfs_fabric_list(c, &v, &n);
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
