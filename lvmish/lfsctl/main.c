// SPDX-License-Identifier: MIT
/*
 * lfsctl: the low-level tool of the lfs kernel module, what dmsetup is to
 * device-mapper. One function per subcommand, a table, a dispatch loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfsctl.h"

const char *prog = "lfsctl";

static const struct lfsctl_cmd commands[] = {
	{ "attach", cmd_attach, "DEVICE --ig N --book-size SIZE [--offset SIZE] [--fabric UUID]",
	  "attach a fabric memory device as interleave group N", false },
	{ "label", cmd_label, "DEVICE --ig N --book-size SIZE --fabric UUID [--offset SIZE]",
	  "write a fabric label on a device that has none (not attached)", false },
	{ "detach", cmd_detach, "DEVICE", "detach a fabric device no shelf uses", false },
	{ "create", cmd_create, "NAME BOOKS [--uuid UUID] [--zeroed] [--leased]",
	  "create a shelf from BOOKS and print its device path", false },
	{ "extend", cmd_extend, "NAME BOOKS", "append BOOKS to a shelf (also while mounted)",
	  false },
	{ "shrink", cmd_shrink, "NAME --books N",
	  "keep the first N books of a shelf (not while open)", false },
	{ "remove", cmd_remove, "NAME", "remove a shelf (not while open or mounted)", false },
	{ "move", cmd_move, "NAME INDEX IG:BOOK",
	  "move book INDEX of a shelf to book IG:BOOK while it stays in use (Linux 6.1)", false },
	{ "zero", cmd_zero, "BOOKS", "write zeroes over books no shelf holds", false },
	{ "check", cmd_check, "BOOKS",
	  "print the books (no shelf holds) that read as zeroes; writes nothing", true },
	{ "list", cmd_list, "[--json] [NAME]", "show shelves", true },
	{ "fence", cmd_fence, "NAME | --uuid UUID",
	  "fence a shelf now: I/O fails, it can only be removed; or a file open through the\n"
	  "      lfs filesystem, by name or by UUID",
	  false },
	{ "lease", cmd_lease, "[--json] | --renew MS [--action reset|eio] | --release",
	  "show the node's lease; renew it from now (tests, recovery) or give it up", true },
	{ "fabric", cmd_fabric, "[--json]", "show attached fabric devices", true },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void show_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s [--json] COMMAND [ARGS...]\n\ncommands:\n", prog);
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %s %s\n      %s\n", commands[i].name, commands[i].args,
			commands[i].help);
	fprintf(f,
		"\nBOOKS is a comma list of IG:BOOK or IG:FIRST-LAST, e.g. 0:0-3,1:0-3.\n"
		"SIZE is a number of bytes with an optional K, M, G, T or P suffix.\n"
		"--json (also after COMMAND): one JSON document on stdout, errors too.\n"
		"`%s COMMAND --help' describes one command; `%s --version' the version;\n"
		"see lfsctl(8).\n",
		prog, prog);
}

int lfsctl_usage(const char *cmd)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++) {
		if (!strcmp(commands[i].name, cmd)) {
			lfsctl_err("usage: %s %s %s\n", prog, cmd, commands[i].args);
			break;
		}
	}
	return EXIT_USAGE;
}

int lfsctl_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

struct lfs_client *lfsctl_connect(const char *cmd)
{
	struct lfs_client *c;
	int ret = lfs_client_open(&c);

	if (ret)
		lfsctl_errno_is(ret);
	if (ret == -ENOENT) {
		lfsctl_err("%s %s: the lfs kernel module is not loaded (modprobe lfs)\n", prog,
			   cmd);
		return NULL;
	}
	if (ret == -EPROTONOSUPPORT) {
		lfsctl_err("%s %s: %s\n", prog, cmd, lfs_client_open_error());
		return NULL;
	}
	if (ret) {
		lfsctl_err("%s %s: cannot open a generic netlink socket: %s\n", prog, cmd,
			   strerror(-ret));
		return NULL;
	}
	return c;
}

/* Report a failed request with the kernel's own words, once. */
int lfsctl_fail(struct lfs_client *c, const char *cmd, const char *what, int err)
{
	const char *msg = lfs_client_error(c);

	lfsctl_errno_is(err);
	lfsctl_err("%s %s: %s: %s (%s)\n", prog, cmd, what, *msg ? msg : strerror(-err),
		   strerror(-err));
	lfs_client_close(c);
	return EXIT_FAILURE;
}

int lfsctl_books(const char *cmd, const char *arg, struct lfs_book **books, size_t *n)
{
	char err[256];

	if (lfs_parse_books(arg, books, n, err, sizeof(err))) {
		lfsctl_err("%s %s: %s\n", prog, cmd, err);
		return -1;
	}
	return 0;
}

int lfsctl_size(const char *cmd, const char *opt, const char *arg, uint64_t *bytes)
{
	struct lfs_size sz;
	char err[256];

	if (lfs_size_parse(arg, LFS_SIZE_BARE | LFS_SIZE_ZERO, &sz, err, sizeof(err))) {
		lfsctl_err("%s %s: %s: %s\n", prog, cmd, opt, err);
		return -1;
	}
	*bytes = sz.value;
	return 0;
}

/* --json anywhere before `--' (or before COMMAND): taken out of argv. */
static int take_json(int argc, char **argv)
{
	return lfs_args_take(argc, argv, "--json", &lfsctl_json);
}

int main(int argc, char **argv)
{
	size_t i;
	int r;

	argc = take_json(argc, argv);
	if (argc < 2) {
		show_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s %s\n", prog, LFS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		show_usage(stdout);
		return 0;
	}
	for (i = 0; i < NR_COMMANDS; i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			if (lfsctl_wants_help(argc - 1, argv + 1)) {
				printf("usage: %s %s %s\n  %s\n", prog, commands[i].name,
				       commands[i].args, commands[i].help);
				return 0;
			}
			r = commands[i].fn(argc - 1, argv + 1);
			lfsctl_json_done(commands[i].name, r, commands[i].listing);
			return r;
		}
	}
	lfsctl_err("%s: unknown command `%s' (see %s --help)\n", prog, argv[1], prog);
	lfsctl_json_done(argv[1], EXIT_USAGE, false);
	return EXIT_USAGE;
}
