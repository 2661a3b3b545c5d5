// SPDX-License-Identifier: GPL-2.0
/*
 * Shelves as list and show describe them: the librarian's facts and this
 * node's (device, filesystem). Also the resulting shelf of a changing
 * command under --json.
 */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "kernel.h"
#include "lfsvol.h"
#include "session.h"

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
int lfsvol_list_shelves(struct lfsvol_lib *lib, struct lfsvol_here *h, json_t *out)
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
int lfsvol_show_shelf(struct lfsvol_lib *lib, struct lfsvol_here *h, const char *name, json_t *out)
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
	json_object_set_new(o, "bad", lfsvol_bad_of_shelf(lib, name));
	json_array_append_new(out, o);
	json_decref(res);
	return 0;
}

json_t *lfsvol_shelf_describe(struct lfsvol_lib *lib, const char *name)
{
	struct lfs_client *drv = NULL;
	struct lfsvol_here h = { 0 };
	json_t *out = json_array(), *o;

	lfsvol_kernel_shelves(&drv, name, &h.kv, &h.kn, false);
	if (lfsvol_show_shelf(lib, &h, name, out))
		o = json_null();
	else
		o = json_incref(json_array_get(out, 0));
	json_decref(out);
	lfsnl_shelf_list_free(h.kv, h.kn);
	lfs_client_close(drv);
	return o;
}
