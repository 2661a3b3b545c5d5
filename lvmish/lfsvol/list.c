// SPDX-License-Identifier: GPL-2.0
/* list and show: the shelf report (report.h) and show's own page. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"
#include "report.h"
#include "session.h"

static const char *str_or(json_t *o, const char *key, const char *none)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : none;
}

static void print_allocation(json_t *alloc)
{
	const char *k;
	json_t *v;

	printf("allocation:");
	json_object_foreach(json_object_get(alloc, "igs"), k, v)
		printf(" IG %s: %lld", k, (long long)json_integer_value(v));
	printf(" |");
	json_object_foreach(json_object_get(alloc, "nodes"), k, v)
		printf(" node %s: %lld", k, (long long)json_integer_value(v));
	printf("\n");
}

static void print_show(json_t *o, bool bytes)
{
	json_t *el;
	char sz[32];
	size_t i;

	printf("name:        %s\n", str_or(o, "name", "?"));
	printf("uuid:        %s\n", str_or(o, "uuid", "?"));
	if (bytes)
		snprintf(sz, sizeof(sz), "%lld",
			 (long long)json_integer_value(json_object_get(o, "size")));
	printf("size:        %s (%lld books)\n",
	       bytes ? sz :
		       lfs_size_human((uint64_t)json_integer_value(json_object_get(o, "size")), sz,
				      sizeof(sz)),
	       (long long)json_integer_value(json_object_get(o, "books")));
	printf("policy:      %s (requested)\n", str_or(o, "policy", "?"));
	print_allocation(json_object_get(o, "allocation"));
	printf("active on:  ");
	json_array_foreach(json_object_get(o, "activations"), i, el)
		printf(" %s (%s)", str_or(el, "node", "?"), str_or(el, "mode", "?"));
	printf("%s\n", json_array_size(json_object_get(o, "activations")) ? "" : " -");
	printf("device:      %s\n", str_or(o, "device", "- (not active here)"));
	printf("filesystem:  %s", str_or(o, "fstype", "-"));
	if (json_is_string(json_object_get(o, "label")))
		printf(" LABEL=%s", str_or(o, "label", ""));
	if (json_is_string(json_object_get(o, "fsuuid")))
		printf(" UUID=%s", str_or(o, "fsuuid", ""));
	printf("\n");
	lfsvol_bad_show(json_object_get(o, "bad"));
}

/* "node01:rw,node02:ro" */
static const char *activations_text(json_t *v, char *buf, size_t len)
{
	size_t i, n = 0;
	json_t *el;

	buf[0] = '\0';
	json_array_foreach(v, i, el) {
		if (n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, "%s%s:%s", i ? "," : "",
				      str_or(el, "node", "?"), str_or(el, "mode", "?"));
	}
	return buf;
}

/* The shelf's fields: list's and show's JSON keys, and their columns. */
static const struct lfsvol_field shelf_fields[] = {
	{ "name", "NAME", -20, LFSVOL_F_STR, NULL, "?", false, "the shelf's name" },
	{ "uuid", "UUID", -36, LFSVOL_F_STR, NULL, NULL, false, "the shelf's UUID" },
	{ "size", "SIZE", 10, LFSVOL_F_SIZE, NULL, NULL, false, "its size (books x book size)" },
	{ "books", "BOOKS", 7, LFSVOL_F_INT, NULL, NULL, false, "its number of books" },
	{ "policy", "POLICY", -13, LFSVOL_F_STR, NULL, "?", false, "the requested policy" },
	{ "active", "ACTIVE", -14, LFSVOL_F_LIST, NULL, NULL, false,
	  "the nodes where it is active" },
	{ "activations", "ACTIVATIONS", -20, LFSVOL_F_JSON, activations_text, NULL, false,
	  "each activation: node and mode (rw, ro)" },
	{ "device", "DEVICE", -16, LFSVOL_F_STR, NULL, NULL, false,
	  "its /dev/lfs name, if active on this node" },
	{ "disk", "DISK", -10, LFSVOL_F_STR, NULL, NULL, false,
	  "its /dev/lfsN disk, if active on this node" },
	{ "fstype", "FSTYPE", -8, LFSVOL_F_STR, NULL, NULL, false,
	  "the filesystem on it (active here)" },
	{ "label", "LABEL", -16, LFSVOL_F_STR, NULL, NULL, false, "the filesystem's label" },
	{ "fsuuid", "FSUUID", -36, LFSVOL_F_STR, NULL, NULL, false, "the filesystem's UUID" },
	{ "allocation", "ALLOCATION", -24, LFSVOL_F_JSON, NULL, NULL, true,
	  "books per IG and per node, as placed" },
	{ "attrs", "ATTRS", -24, LFSVOL_F_JSON, NULL, NULL, true, "the shelf's attributes" },
	{ "owner", "OWNER", -12, LFSVOL_F_STR, NULL, NULL, true, "the node that created it" },
	{ "map", "MAP", -24, LFSVOL_F_JSON, NULL, NULL, true,
	  "its books as [IG, book] (the first page)" },
	{ "bad", "BAD", -24, LFSVOL_F_JSON, NULL, NULL, true,
	  "its bad memory: book (seq), IG, book, offset and length in it, offset in the shelf" },
};

static int list_options(int argc, char **argv, struct lfsvol_report_opts *ro)
{
	int c;

	while ((c = getopt_long(argc, argv, LFSVOL_REPORT_SHORT, lfsvol_report_long, NULL)) != -1)
		if (!lfsvol_report_option(ro, c, optarg))
			return lfsvol_exit_as(LFSVOL_EUSAGE, -EINVAL);
	return 0;
}

static int list_or_show(int argc, char **argv, struct lfsvol_ctx *ctx, bool show)
{
	const struct lfsvol_report rep = { show ? "show" : "list", shelf_fields,
					   ARRAY_SIZE(shelf_fields),
					   "name,size,books,policy,active,device,fstype", show };
	struct lfsvol_report_opts ro = { 0 };
	const char *name = NULL;
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfsvol_here h = { 0 };
	json_t *out;
	int r;

	r = list_options(argc, argv, &ro);
	if (!r && (show ? optind != argc - 1 : optind != argc))
		r = lfsvol_usage("usage: %s %s [-o FIELDS] [--json]", lfsvol_prog,
				 show ? "show NAME" : "list");
	if (!r)
		r = lfsvol_report_select(&rep, &ro);
	if (r)
		return r > 0 ? LFSVOL_OK : lfsvol_exit_code(r);
	if (show)
		r = lfsvol_check_name(name = argv[optind]);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	out = json_array();
	if (!r)
		r = lfsvol_kernel_shelves(&drv, name, &h.kv, &h.kn, true);
	if (!r)
		r = show ? lfsvol_show_shelf(lib, &h, name, out) :
			   lfsvol_list_shelves(lib, &h, out);
	if (!r && show && !lfsvol_json && !ro.spec && !ro.noheadings && !ro.separator)
		print_show(json_array_get(out, 0), ro.bytes);
	else if (!r)
		lfsvol_report_print(&ro, out, NULL);
	json_decref(out);
	lfsnl_shelf_list_free(h.kv, h.kn);
	lfs_client_close(drv);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}

int cmd_list(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	return list_or_show(argc, argv, ctx, false);
}

int cmd_show(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	return list_or_show(argc, argv, ctx, true);
}
