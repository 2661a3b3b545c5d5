// SPDX-License-Identifier: MIT
/* lfsctl create, extend, shrink, remove, zero, check, list */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <jansson.h>

#include "lfsctl.h"

static int check_name(const char *cmd, const char *name)
{
	char msg[256];

	if (!lfs_rule_shelf_name(name, msg, sizeof(msg)))
		return 0;
	lfsctl_err("%s %s: %s\n", prog, cmd, msg);
	return -1;
}

static json_t *shelf_json(const struct lfs_shelf_info *s);

/* Under --json: the shelf NAME as list --json has it now. */
static void shelf_result(struct lfs_client *c, const char *name)
{
	struct lfs_shelf_info *v = NULL;
	size_t n = 0;

	if (!lfsctl_json || lfsnl_shelf_list(c, name, &v, &n) || !n)
		return;
	lfsctl_result("shelf", shelf_json(&v[0]));
	lfsnl_shelf_list_free(v, n);
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uuid", required_argument, NULL, 'u' },
		{ "zeroed", no_argument, NULL, 'z' },
		{ "leased", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct lfs_shelf_info info = { 0 };
	uint8_t uuid[LFS_UUID_LEN];
	struct lfs_book *books;
	struct lfs_client *c;
	unsigned int flags = 0;
	int have_uuid = 0, opt, ret;
	size_t n;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'z' || opt == 'l') {
			flags |= opt == 'z' ? LFS_CREATE_ZEROED : LFS_CREATE_LEASED;
			continue;
		}
		if (opt != 'u')
			return lfsctl_usage("create");
		if (lfs_parse_uuid(optarg, uuid)) {
			lfsctl_err("%s create: invalid UUID `%s'\n", prog, optarg);
			return EXIT_USAGE;
		}
		have_uuid = 1;
	}
	if (optind != argc - 2)
		return lfsctl_usage("create");
	if (check_name("create", argv[optind]) ||
	    lfsctl_books("create", argv[optind + 1], &books, &n))
		return EXIT_USAGE;
	c = lfsctl_connect("create");
	if (!c) {
		free(books);
		return EXIT_FAILURE;
	}
	ret = lfsnl_shelf_create_flags(c, argv[optind], have_uuid ? uuid : NULL, flags, books, n,
				       &info);
	free(books);
	if (ret)
		return lfsctl_fail(c, "create", argv[optind], ret);
	shelf_result(c, argv[optind]);
	lfs_client_close(c);
	if (!lfsctl_json)
		printf("/dev/%s\n", info.disk);
	return 0;
}

int cmd_extend(int argc, char **argv)
{
	struct lfs_book *books;
	struct lfs_client *c;
	size_t n;
	int ret;

	if (argc != 3)
		return lfsctl_usage("extend");
	if (check_name("extend", argv[1]) || lfsctl_books("extend", argv[2], &books, &n))
		return EXIT_USAGE;
	c = lfsctl_connect("extend");
	if (!c) {
		free(books);
		return EXIT_FAILURE;
	}
	ret = lfsnl_shelf_extend(c, argv[1], books, n);
	free(books);
	if (ret)
		return lfsctl_fail(c, "extend", argv[1], ret);
	shelf_result(c, argv[1]);
	lfs_client_close(c);
	return 0;
}

int cmd_shrink(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "books", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct lfs_client *c;
	uint32_t nr = 0;
	int have = 0, opt, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'b')
			return lfsctl_usage("shrink");
		if (lfs_parse_u32(optarg, UINT32_MAX, &nr) || !nr) {
			lfsctl_err("%s shrink: invalid book count `%s': give a number >= 1\n", prog,
				   optarg);
			return EXIT_USAGE;
		}
		have = 1;
	}
	if (optind != argc - 1 || !have)
		return lfsctl_usage("shrink");
	if (check_name("shrink", argv[optind]))
		return EXIT_USAGE;
	c = lfsctl_connect("shrink");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_shelf_shrink(c, argv[optind], nr);
	if (ret)
		return lfsctl_fail(c, "shrink", argv[optind], ret);
	shelf_result(c, argv[optind]);
	lfs_client_close(c);
	return 0;
}

int cmd_remove(int argc, char **argv)
{
	struct lfs_client *c;
	int ret;

	if (argc != 2 || argv[1][0] == '-')
		return lfsctl_usage("remove");
	if (check_name("remove", argv[1]))
		return EXIT_USAGE;
	c = lfsctl_connect("remove");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_shelf_remove(c, argv[1]);
	if (ret)
		return lfsctl_fail(c, "remove", argv[1], ret);
	lfsctl_result("name", json_string(argv[1]));
	lfs_client_close(c);
	return 0;
}

int cmd_move(int argc, char **argv)
{
	struct lfs_book *to = NULL;
	struct lfs_client *c;
	uint32_t index;
	size_t n;
	int ret;

	if (argc != 4 || argv[1][0] == '-')
		return lfsctl_usage("move");
	if (check_name("move", argv[1]))
		return EXIT_USAGE;
	if (lfs_parse_u32(argv[2], UINT32_MAX, &index)) {
		lfsctl_err("%s move: invalid book index `%s': give a number >= 0\n", prog, argv[2]);
		return EXIT_USAGE;
	}
	if (lfsctl_books("move", argv[3], &to, &n))
		return EXIT_USAGE;
	if (n != 1) {
		free(to);
		lfsctl_err("%s move: `%s' is %zu books: give one IG:BOOK\n", prog, argv[3], n);
		return EXIT_USAGE;
	}
	c = lfsctl_connect("move");
	if (!c) {
		free(to);
		return EXIT_FAILURE;
	}
	ret = lfsnl_book_move(c, argv[1], index, to);
	free(to);
	if (ret)
		return lfsctl_fail(c, "move", argv[1], ret);
	shelf_result(c, argv[1]);
	lfs_client_close(c);
	return 0;
}

/* The books whose flag is want, as "IG:BOOK" strings. */
static json_t *books_json(const struct lfs_book *books, size_t n, const bool *flag, bool want)
{
	json_t *arr = json_array();
	char b[24];

	for (size_t i = 0; i < n; i++) {
		if (flag[i] != want)
			continue;
		snprintf(b, sizeof(b), "%u:%u", books[i].ig, books[i].book);
		json_array_append_new(arr, json_string(b));
	}
	return arr;
}

int cmd_zero(int argc, char **argv)
{
	struct lfs_book *books;
	struct lfs_client *c;
	size_t n, skipped = 0;
	bool *zeroed;
	int ret;

	if (argc != 2)
		return lfsctl_usage("zero");
	if (lfsctl_books("zero", argv[1], &books, &n))
		return EXIT_USAGE;
	c = lfsctl_connect("zero");
	if (!c) {
		free(books);
		return EXIT_FAILURE;
	}
	zeroed = calloc(n, sizeof(*zeroed));
	ret = zeroed ? lfsnl_books_zero(c, books, n, zeroed) : -ENOMEM;
	if (ret) {
		free(books);
		free(zeroed);
		return lfsctl_fail(c, "zero", argv[1], ret);
	}
	lfsctl_result("zeroed", books_json(books, n, zeroed, true));
	lfsctl_result("held", books_json(books, n, zeroed, false));
	for (size_t i = 0; i < n; i++) {
		if (zeroed[i])
			continue;
		lfsctl_err("%s zero: book %u:%u was not zeroed: a shelf holds it\n", prog,
			   books[i].ig, books[i].book);
		skipped++;
	}
	free(books);
	free(zeroed);
	lfs_client_close(c);
	return skipped ? EXIT_FAILURE : 0;
}

/* check BOOKS: print the books that read as zeroes, one IG:BOOK per line */
int cmd_check(int argc, char **argv)
{
	struct lfs_book *books;
	struct lfs_client *c;
	bool *zero;
	size_t n;
	int ret;

	if (argc != 2)
		return lfsctl_usage("check");
	if (lfsctl_books("check", argv[1], &books, &n))
		return EXIT_USAGE;
	zero = calloc(n ? n : 1, sizeof(*zero));
	c = zero ? lfsctl_connect("check") : NULL;
	if (!c) {
		free(zero);
		free(books);
		return EXIT_FAILURE;
	}
	ret = lfsnl_books_check_zero(c, books, n, zero);
	if (!ret && lfsctl_json) {
		json_t *arr = books_json(books, n, zero, true);

		lfsctl_print_json(arr);
		json_decref(arr);
	} else if (!ret)
		for (size_t i = 0; i < n; i++)
			if (zero[i])
				printf("%u:%u\n", books[i].ig, books[i].book);
	free(zero);
	free(books);
	if (ret)
		return lfsctl_fail(c, "check", argv[1], ret);
	lfs_client_close(c);
	return 0;
}

static json_t *shelf_json(const struct lfs_shelf_info *s)
{
	char uuid[37], dev[48], book[24];
	json_t *books = json_array();
	uint32_t i;

	for (i = 0; i < s->nr_books; i++) {
		snprintf(book, sizeof(book), "%u:%u", s->books[i].ig, s->books[i].book);
		json_array_append_new(books, json_string(book));
	}
	lfs_format_uuid(s->uuid, uuid);
	snprintf(dev, sizeof(dev), "/dev/%s", s->disk);
	return json_pack(
		"{s:s, s:s, s:s, s:I, s:i, s:i, s:I, s:I, s:I, s:b, s:I, s:b, s:s, s:b, s:I, s:o}",
		"name", s->name, "uuid", uuid, "device", dev, "id", (json_int_t)s->id, "major",
		major(s->devt), "minor", minor(s->devt), "book_size", (json_int_t)s->book_size,
		"books", (json_int_t)s->nr_books, "size", (json_int_t)(s->book_size * s->nr_books),
		"dax", s->dax, "open", (json_int_t)s->open, "zeroed", s->zeroed, "state",
		lfsctl_state_name(s->state), "leased", s->leased, "created", (json_int_t)s->created,
		"map", books);
}

static void shelf_table(const struct lfs_shelf_info *v, size_t n)
{
	char uuid[37], dev[48], bs[32], size[32], *books;
	size_t i;

	printf("%-20s %-12s %-9s %-7s %-7s %-4s %-5s %-6s %-6s %-36s %s\n", "NAME", "DEVICE",
	       "SIZE", "BOOKS", "BOOK", "DAX", "OPEN", "STATE", "LEASED", "UUID", "LAYOUT");
	for (i = 0; i < n; i++) {
		lfs_format_uuid(v[i].uuid, uuid);
		snprintf(dev, sizeof(dev), "/dev/%s", v[i].disk);
		lfs_size_short(v[i].book_size, bs, sizeof(bs));
		lfs_size_short(v[i].book_size * v[i].nr_books, size, sizeof(size));
		books = lfs_format_books(v[i].books, v[i].nr_books);
		printf("%-20s %-12s %-9s %-7u %-7s %-4s %-5u %-6s %-6s %-36s %s\n", v[i].name, dev,
		       size, v[i].nr_books, bs, v[i].dax ? "yes" : "no", v[i].open,
		       lfsctl_state_name(v[i].state), v[i].leased ? "yes" : "no", uuid,
		       books ? books : "?");
		free(books);
	}
}

int cmd_list(int argc, char **argv)
{
	struct lfs_shelf_info *v = NULL;
	const char *name = NULL;
	struct lfs_client *c;
	int json = lfsctl_json, i, ret;
	size_t j, n = 0;
	json_t *arr;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] != '-' && !name)
			name = argv[i];
		else
			return lfsctl_usage("list");
	}
	if (name && check_name("list", name))
		return EXIT_USAGE;
	c = lfsctl_connect("list");
	if (!c)
		return EXIT_FAILURE;
	ret = lfsnl_shelf_list(c, name, &v, &n);
	if (ret)
		return lfsctl_fail(c, "list", name ? name : "listing shelves", ret);
	lfs_client_close(c);
	if (json) {
		arr = json_array();
		for (j = 0; j < n; j++)
			json_array_append_new(arr, shelf_json(&v[j]));
		json_dumpf(arr, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(arr);
	} else {
		shelf_table(v, n);
	}
	lfsnl_shelf_list_free(v, n);
	return 0;
}

int cmd_fence(int argc, char **argv)
{
	uint8_t uuid[LFS_UUID_LEN];
	bool by_uuid = argc == 3 && !strcmp(argv[1], "--uuid");
	struct lfs_client *c;
	int ret;

	if (by_uuid) {
		argc--;
		argv++;
		if (lfs_parse_uuid(argv[1], uuid)) {
			lfsctl_err("%s fence: invalid UUID `%s'\n", prog, argv[1]);
			return EXIT_USAGE;
		}
	}
	if (argc != 2 || argv[1][0] == '-')
		return lfsctl_usage("fence");
	if (!by_uuid && check_name("fence", argv[1]))
		return EXIT_USAGE;
	c = lfsctl_connect("fence");
	if (!c)
		return EXIT_FAILURE;
	ret = by_uuid ? lfsnl_file_fence(c, uuid) : lfsnl_shelf_fence(c, argv[1]);
	if (ret)
		return lfsctl_fail(c, "fence", argv[1], ret);
	lfsctl_result(by_uuid ? "uuid" : "name", json_string(argv[1]));
	lfs_client_close(c);
	return 0;
}
