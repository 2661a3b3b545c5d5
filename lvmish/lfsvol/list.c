// SPDX-License-Identifier: GPL-2.0
/* list and show: the librarian's facts about shelves, and this node's. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"
#include "session.h"

/* This node's view of one shelf: the kernel's shelves here, by name. */
struct here {
	struct lfs_shelf_info *kv;
	size_t kn;
};

/* One shelf as the JSON object of list/show: librarian facts plus this node's. */
static json_t *shelf_object(json_t *ls, struct lfs_shelf_info *act)
{
	json_t *o = json_object(), *nodes = json_array(), *el;
	struct lfsvol_fsinfo fs = { 0 };
	char dev[80];
	size_t i;

	json_object_set(o, "name", json_object_get(ls, "name"));
	json_object_set(o, "uuid", json_object_get(ls, "uuid"));
	json_object_set(o, "size", json_object_get(ls, "size"));
	json_object_set(o, "books", json_object_get(ls, "books"));
	json_object_set(o, "policy", json_object_get(ls, "policy"));
	json_array_foreach(json_object_get(ls, "activations"), i, el)
		json_array_append(nodes, json_object_get(el, "node"));
	json_object_set_new(o, "active", nodes);
	json_object_set(o, "activations", json_object_get(ls, "activations"));
	if (act) {
		snprintf(dev, sizeof(dev), "/dev/lfs/%s", act->name);
		json_object_set_new(o, "device", json_string(dev));
		snprintf(dev, sizeof(dev), "/dev/%s", act->disk);
		json_object_set_new(o, "disk", json_string(dev));
		lfsvol_probe_fs(dev, 0, 0, &fs);
	} else {
		json_object_set_new(o, "device", json_null());
		json_object_set_new(o, "disk", json_null());
	}
	json_object_set_new(o, "fstype", fs.type[0] ? json_string(fs.type) : json_null());
	json_object_set_new(o, "label", fs.label[0] ? json_string(fs.label) : json_null());
	json_object_set_new(o, "fsuuid", fs.uuid[0] ? json_string(fs.uuid) : json_null());
	return o;
}

/* Every shelf, a page of shelf.list at a time, into out. */
static int list_shelves(struct lfsvol_lib *lib, struct here *h, json_t *out)
{
	json_int_t off = 0, total;
	json_t *res = NULL, *el;
	size_t i;
	int r;

	do {
		json_decref(res);
		r = lfsvol_lib_request(lib, "listing shelves", "shelf.list",
				       json_pack("{s:I,s:i}", "offset", off, "limit", 1000), &res);
		if (r)
			return r;
		json_array_foreach(json_object_get(res, "shelves"), i, el) {
			const char *n = json_string_value(json_object_get(el, "name"));

			json_array_append_new(
				out, shelf_object(el, lfsvol_find_active(h->kv, h->kn, n)));
		}
		total = json_integer_value(json_object_get(res, "total"));
		off += (json_int_t)json_array_size(json_object_get(res, "shelves"));
	} while (off < total && json_array_size(json_object_get(res, "shelves")));
	json_decref(res);
	return 0;
}

/* One shelf with its allocation, attributes, owner and map, into out. */
static int show_shelf(struct lfsvol_lib *lib, struct here *h, const char *name, json_t *out)
{
	json_t *res = NULL, *a = NULL, *alloc = NULL, *o;
	char what[128];
	int r;

	snprintf(what, sizeof(what), "showing shelf `%s'", name);
	r = lfsvol_lib_request(lib, what, "shelf.get", json_pack("{s:s}", "name", name), &res);
	if (r)
		return r;
	o = shelf_object(res, lfsvol_find_active(h->kv, h->kn, name));
	if (!lfsvol_lib_call(lib, "attr.get",
			     json_pack("{s:s,s:s}", "name", name, "key", "lfs.allocation"), &a))
		alloc = json_loads(json_string_value(json_object_get(a, "value")), 0, NULL);
	json_decref(a);
	json_object_set_new(o, "allocation", alloc ? alloc : json_null());
	json_object_set(o, "attrs", json_object_get(res, "attrs"));
	json_object_set(o, "owner", json_object_get(res, "owner"));
	json_object_set(o, "map", json_object_get(res, "map"));
	json_array_append_new(out, o);
	json_decref(res);
	return 0;
}

static const char *str_or(json_t *o, const char *key, const char *none)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : none;
}

static void print_list(json_t *out)
{
	size_t i, k;
	json_t *el, *n;

	printf("%-20s %10s %7s %-13s %-14s %-16s %s\n", "NAME", "SIZE", "BOOKS", "POLICY", "ACTIVE",
	       "DEVICE", "FSTYPE");
	json_array_foreach(out, i, el) {
		char sz[32], active[64] = "";

		json_array_foreach(json_object_get(el, "active"), k, n) {
			if (k)
				strncat(active, ",", sizeof(active) - strlen(active) - 1);
			strncat(active, json_string_value(n), sizeof(active) - strlen(active) - 1);
		}
		printf("%-20s %10s %7lld %-13s %-14s %-16s %s\n", str_or(el, "name", "?"),
		       lfs_size_human((uint64_t)json_integer_value(json_object_get(el, "size")), sz,
				      sizeof(sz)),
		       (long long)json_integer_value(json_object_get(el, "books")),
		       str_or(el, "policy", "?"), active[0] ? active : "-",
		       str_or(el, "device", "-"), str_or(el, "fstype", "-"));
	}
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

static void print_show(json_t *o)
{
	json_t *el;
	char sz[32];
	size_t i;

	printf("name:        %s\n", str_or(o, "name", "?"));
	printf("uuid:        %s\n", str_or(o, "uuid", "?"));
	printf("size:        %s (%lld books)\n",
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
}

static void print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

static int list_or_show(int argc, char **argv, struct lfsvol_ctx *ctx, bool show)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { NULL, 0, NULL, 0 } };
	const char *name = NULL;
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct here h = { 0 };
	json_t *out = json_array();
	bool json = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (c != 'j') {
			json_decref(out);
			return LFSVOL_EUSAGE;
		}
		json = true;
	}
	if (show ? optind != argc - 1 : optind != argc)
		r = lfsvol_usage("usage: %s %s [--json]", lfsvol_prog, show ? "show NAME" : "list");
	else
		r = 0;
	if (!r && show)
		r = lfsvol_check_name(name = argv[optind]);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r) {
		lfsvol_kernel_shelves(&drv, name, &h.kv, &h.kn);
		r = show ? show_shelf(lib, &h, name, out) : list_shelves(lib, &h, out);
	}
	if (!r && json)
		print_json(out);
	else if (!r)
		show ? print_show(json_array_get(out, 0)) : print_list(out);
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
