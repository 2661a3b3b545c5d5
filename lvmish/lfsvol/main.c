// SPDX-License-Identifier: GPL-2.0
/*
 * lfsvol - manage LFS shelves: one command per intent.
 *
 * A table of {name, fn, usage, help} and a dispatch loop, as in
 * wireguard-tools' wg.c; each command group lives in its own file.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "lfs_rules.h"
#include "lfsagent.h"
#include "lfsvol.h"
#include "result.h"

/* kind: a report prints its own JSON; the agent has none (it is a daemon) */
enum { CHANGE, REPORT, DAEMON };

static const struct {
	const char *name;
	lfsvol_cmd_fn *fn;
	const char *usage;
	const char *help;
	int kind;
} commands[] = {
	{ "create", cmd_create,
	  "create NAME -s SIZE [-p POLICY] [--ig LIST] [--away-from SHELF] [-a]", "create a shelf",
	  CHANGE },
	{ "remove", cmd_remove, "remove NAME [-f]", "remove a shelf and free its books", CHANGE },
	{ "resize", cmd_resize, "resize NAME -s [+|-]SIZE [-f]", "grow or shrink a shelf", CHANGE },
	{ "rename", cmd_rename, "rename OLD NEW", "rename a shelf", CHANGE },
	{ "copy", cmd_copy, "copy [--max-rate SIZE] SRC DST | copy --wait DST",
	  "make shelf DST with SRC's size, policy, attributes and bytes", CHANGE },
	{ "list", cmd_list, "list [-o FIELDS] [--noheadings] [--separator S] [--bytes] [--json]",
	  "list shelves", REPORT },
	{ "show", cmd_show,
	  "show NAME [-o FIELDS] [--noheadings] [--separator S] [--bytes] [--json]",
	  "describe one shelf", REPORT },
	{ "activate", cmd_activate, "activate NAME...|--all|--auto [--shared] [--takeover]",
	  "make shelves block devices here", CHANGE },
	{ "deactivate", cmd_deactivate, "deactivate NAME...|--all",
	  "remove shelves' block devices here", CHANGE },
	{ "attr", cmd_attr, "attr list|get|set|rm NAME [KEY [VALUE]]", "shelf attributes", CHANGE },
	{ "fabric", cmd_fabric, "fabric [-o FIELDS] [--noheadings] [--separator S] [--json]",
	  "fabric geometry and book usage per node", REPORT },
	{ "attach", cmd_attach, "attach [--init]",
	  "attach this node's fabric devices; --init first labels new ones", CHANGE },
	{ "book", cmd_book, "book clear IG:BOOK...",
	  "return books whose bad memory was cleared to service (admin)", CHANGE },
	{ "scrub", cmd_scrub, "scrub [--free]",
	  "zero this node's ZOMBIE books now, with --free also its never-used FREE books", CHANGE },
	{ "status", cmd_status, "status [--json | --prometheus]",
	  "show this node's lease, fabric devices, shelves and agent progress", REPORT },
	{ "agent", cmd_agent, "agent [--once]", "run the node agent", DAEMON },
};

static void show_usage(FILE *f)
{
	fprintf(f, "Usage: %s [-c FILE] [--librarian ADDR] [--json] COMMAND [ARGS...]\n\n",
		lfsvol_prog);
	fprintf(f,
		"Options:\n"
		"  -c, --config FILE      configuration (default $LFS_CONF or %s)\n"
		"  --librarian ADDR       librarian HOST:PORT or unix:PATH (overrides the config)\n"
		"  --json                 one JSON document on stdout, errors too (also after\n"
		"                         COMMAND; every command but agent)\n"
		"  -h, --help             this help; COMMAND --help for a command's help\n"
		"  -V, --version          the version\n\n"
		"Commands:\n",
		LFSVOL_DEFAULT_CONF);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-11s %s: %s\n", commands[i].name, commands[i].help,
			commands[i].usage);
	fprintf(f, "\nSIZE is a number with K, M, G, T or P (powers of 1024) or b for books (8b);\n"
		   "sizes are rounded up to whole books. See lfsvol(8) for exit codes.\n");
}

static bool want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

/* The global options; returns the index of the command word, or -1 with *status set. */
static int global_options(int argc, char **argv, struct lfsvol_ctx *ctx, int *status)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					      { "librarian", required_argument, NULL, 'L' },
					      { "help", no_argument, NULL, 'h' },
					      { "version", no_argument, NULL, 'V' },
					      { "json", no_argument, NULL, 'J' },
					      { NULL, 0, NULL, 0 } };
	int c;

	/* '+': stop at the command; its options are its own. */
	while ((c = getopt_long(argc, argv, "+c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ctx->conf_path = optarg;
			break;
		case 'L':
			ctx->librarian = optarg;
			break;
		case 'h':
			show_usage(stdout);
			*status = LFSVOL_OK;
			return -1;
		case 'V':
			printf("lfsvol %s\n", LFS_VERSION);
			*status = LFSVOL_OK;
			return -1;
		case 'J':
			lfsvol_json_on();
			break;
		default:
			show_usage(stderr);
			*status = LFSVOL_EUSAGE;
			return -1;
		}
	}
	if (optind < argc)
		return optind;
	show_usage(stderr);
	*status = LFSVOL_EUSAGE;
	return -1;
}

/* --json among a command's arguments (up to `--'): taken out, for every command alike. */
static int take_json(int argc, char **argv)
{
	bool json = false;

	argc = lfs_args_take(argc, argv, "--json", &json);
	if (json)
		lfsvol_json_on();
	return argc;
}

int main(int argc, char **argv)
{
	struct lfsvol_ctx ctx = { 0 };
	int i, r = LFSVOL_EUSAGE;

	lfsvol_json = false; /* lfsvol.a runs main() again and again (nscycle) */
	lfsvol_trace_init();
	lfsvol_trace("lfsvol starts");
	i = global_options(argc, argv, &ctx, &r);
	if (i < 0)
		return r;
	argc -= i;
	argv += i;
	for (size_t k = 0; k < ARRAY_SIZE(commands); k++) {
		if (strcmp(argv[0], commands[k].name))
			continue;
		if (want_help(argc, argv)) {
			printf("Usage: %s %s\n%s.\n", lfsvol_prog, commands[k].usage,
			       commands[k].help);
			printf("See lfsvol(8) for the options and exit codes.\n");
			return LFSVOL_OK;
		}
		if (commands[k].kind != DAEMON)
			argc = take_json(argc, argv);
		/* the command parses with getopt from its own argv[0] */
		optind = 0; /* glibc: reinitialise, forget the "+" ordering */
		r = commands[k].fn(argc, argv, &ctx);
		if (commands[k].kind != DAEMON)
			lfsvol_result_print(commands[k].name, r, commands[k].kind == REPORT);
		lfsvol_conf_free(ctx.conf);
		lfsvol_trace("%s done: %d", commands[k].name, r);
		return r;
	}
	take_json(argc, argv);
	lfsvol_err("invalid command `%s'; run `%s --help' for the list", argv[0], lfsvol_prog);
	lfsvol_result_print(argv[0], LFSVOL_EUSAGE, false);
	return LFSVOL_EUSAGE;
}
