// SPDX-License-Identifier: GPL-2.0
/*
 * lfsvol - manage LFS shelves: one command per intent.
 *
 * A table of {name, fn, help} and a dispatch loop, as in wireguard-tools'
 * wg.c; each subcommand group lives in its own file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfsvol.h"

const char *lfsvol_prog = "lfsvol";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv, struct lfsvol_ctx *ctx);
	const char *help;	/* "what it does: usage" */
} commands[] = {
	{ "create", cmd_create, "create a shelf: create NAME -s SIZE [-p POLICY] [--ig LIST] [--away-from SHELF] [-a]" },
	{ "remove", cmd_remove, "remove a shelf and free its books: remove NAME [-f]" },
	{ "resize", cmd_resize, "grow or shrink a shelf: resize NAME -s [+|-]SIZE [-f]" },
	{ "rename", cmd_rename, "rename a shelf: rename OLD NEW" },
	{ "list", cmd_list, "list shelves: list [--json]" },
	{ "show", cmd_show, "describe one shelf: show NAME [--json]" },
	{ "activate", cmd_activate, "make shelves block devices here: activate NAME...|--all|--auto [--shared] [--takeover]" },
	{ "deactivate", cmd_deactivate, "remove shelves' block devices here: deactivate NAME...|--all" },
	{ "attr", cmd_attr, "shelf attributes: attr list|get|set|rm NAME [KEY [VALUE]]" },
	{ "fabric", cmd_fabric, "fabric geometry and book usage per node: fabric [--json]" },
	{ "scrub", cmd_scrub, "zero this node's ZOMBIE books now, with --free also its never-used FREE books: scrub [--free]" },
	{ "status", cmd_status, "show this node's fabric devices, active shelves and agent progress: status [--json]" },
	{ "agent", cmd_agent, "run the node agent: agent [--once]" },
};

static void show_usage(FILE *f)
{
	fprintf(f, "Usage: %s [-c FILE] [--librarian ADDR] COMMAND [ARGS...]\n\n", lfsvol_prog);
	fprintf(f, "Options:\n"
		"  -c, --config FILE      configuration (default $LFS_CONF or %s)\n"
		"  --librarian ADDR       librarian HOST:PORT or unix:PATH (overrides the config)\n"
		"  -h, --help             this help; COMMAND --help for a command's help\n\n"
		"Commands:\n", LFSVOL_DEFAULT_CONF);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nSIZE is a number with K, M, G or T (powers of 1024) or b for books (8b);\n"
		"sizes are rounded up to whole books. See lfsvol(8) for exit codes.\n");
}

void lfsvol_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", lfsvol_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void lfsvol_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

bool lfsvol_want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int lfsvol_need_conf(struct lfsvol_ctx *ctx)
{
	char msg[512];
	bool explicit = ctx->conf_path != NULL;
	const char *path = ctx->conf_path;
	int r;

	if (ctx->conf)
		return 0;
	if (!path)
		path = getenv("LFS_CONF");
	if (path && *path)
		explicit = true;
	else
		path = LFSVOL_DEFAULT_CONF;
	r = lfsvol_conf_load(path, !explicit, &ctx->conf, msg, sizeof(msg));
	lfsvol_trace("config %s read: %d", path, r);
	if (r) {
		lfsvol_err("%s", msg);
		if (r == -ENOENT)
			lfsvol_err("give an existing file with -c FILE or LFS_CONF (see lfs.conf(5))");
		else if (r == -EINVAL)
			lfsvol_err("fix that line of the configuration (see lfs.conf(5))");
		return LFSVOL_ECONFIG;
	}
	if (ctx->librarian) {
		char *l = strdup(ctx->librarian);

		if (!l)
			return LFSVOL_EFAIL;
		free(ctx->conf->librarian);
		ctx->conf->librarian = l;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "librarian", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct lfsvol_ctx ctx = { 0 };
	const char *tr = getenv("LFSVOL_TRACE");
	int c, r;

	lfsvol_tracing = tr && *tr && strcmp(tr, "0");
	lfsvol_trace("lfsvol starts");

	/* '+': stop at the command; its options are its own. */
	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ctx.conf_path = optarg;
			break;
		case 'L':
			ctx.librarian = optarg;
			break;
		case 'h':
			show_usage(stdout);
			return LFSVOL_OK;
		default:
			show_usage(stderr);
			return LFSVOL_EUSAGE;
		}
	}
	if (optind >= argc) {
		show_usage(stderr);
		return LFSVOL_EUSAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		if (lfsvol_want_help(argc - optind, argv + optind)) {
			const char *colon = strchr(commands[i].help, ':');

			printf("Usage: %s %s\n", lfsvol_prog, colon + 2);
			printf("%.*s.\n", (int)(colon - commands[i].help), commands[i].help);
			printf("See lfsvol(8) for the options and exit codes.\n");
			return LFSVOL_OK;
		}
		/* subcommands parse with getopt from their own argv[0] */
		argc -= optind;
		argv += optind;
		optind = 0;	/* glibc: reinitialise, forget the "+" ordering */
		r = commands[i].fn(argc, argv, &ctx);
		lfsvol_conf_free(ctx.conf);
		lfsvol_trace("%s done: %d", commands[i].name, r);
		return r;
	}
	lfsvol_err("invalid command `%s'; run `%s --help' for the list", argv[optind], lfsvol_prog);
	return LFSVOL_EUSAGE;
}
