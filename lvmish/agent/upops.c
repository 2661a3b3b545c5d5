// SPDX-License-Identifier: GPL-2.0
/*
 * The upcall operations on the librarian (docs/NAMESPACE.md, "What the
 * node agent does"), on the worker's own session. A file is a shelf; the
 * kernel names it by UUID, which the librarian finds with shelf.get.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "upserver.h"

#define UP_LIST_PAGE 10000

/* Answer with the attributes (and the map) of a librarian reply. */
static int answer_shelf(struct up_worker *w, const struct up_req *r, json_t *j, bool map)
{
	struct up_shelf s;
	int ret = up_shelf_from(w, j, map, &s);

	if (!ret)
		ret = map ? up_answer_map(w, r, &s, false) : up_answer_attrs(w, r, &s, false);
	up_shelf_free(&s);
	return ret;
}

static int do_lookup(struct up_worker *w, const struct up_req *r)
{
	json_t *j;
	int ret;

	if (!r->name)
		return -EINVAL;
	ret = up_call(w, "shelf.get", json_pack("{s:s,s:i}", "name", r->name, "limit", 0), &j);
	if (!ret)
		ret = answer_shelf(w, r, j, false);
	json_decref(j);
	return ret;
}

/* Every shelf this node may see whose name the kernel takes (the rule), as [name, ino]. */
static int do_list(struct up_worker *w, const struct up_req *r)
{
	json_t *entries = json_array(), *page = NULL, *sh;
	json_int_t offset = 0, total;
	uint8_t u[LFS_UUID_LEN];
	char msg[128];
	size_t i;
	int ret = entries ? 0 : -ENOMEM;

	do {
		json_decref(page);
		if (!ret)
			ret = up_call(w, "shelf.list",
				      json_pack("{s:I,s:i}", "offset", offset, "limit",
						UP_LIST_PAGE),
				      &page);
		if (ret)
			break;
		json_array_foreach(json_object_get(page, "shelves"), i, sh) {
			const char *name = json_string_value(json_object_get(sh, "name"));
			const char *uuid = json_string_value(json_object_get(sh, "uuid"));

			if (!name || !uuid || lfs_parse_uuid(uuid, u) ||
			    lfs_rule_shelf_name(name, msg, sizeof(msg)) ||
			    json_array_size(entries) >= LFS_LIST_MAX)
				continue;
			json_array_append_new(entries,
					      json_pack("[sI]", name, (json_int_t)up_uuid_ino(u)));
		}
		total = json_integer_value(json_object_get(page, "total"));
		offset += (json_int_t)json_array_size(json_object_get(page, "shelves"));
	} while (json_array_size(json_object_get(page, "shelves")) && offset < total);
	json_decref(page);
	if (!ret)
		ret = up_answer_list(w, r->id, entries);
	json_decref(entries);
	return ret;
}

/* shelf.create with no books and the mount's policy; without EXCL an existing one is the answer. */
static int do_create(struct up_worker *w, const struct up_req *r)
{
	json_t *args = json_pack("{s:s,s:i}", "name", r->name, "books", 0), *j = NULL;
	int ret;

	if (r->policy)
		json_object_set_new(args, "policy", json_string(r->policy));
	ret = up_call(w, "shelf.create", args, &j);
	if (ret == -EEXIST && !(r->flags & LFS_UP_F_EXCL))
		ret = up_call(w, "shelf.get", json_pack("{s:s,s:i}", "name", r->name, "limit", 0),
			      &j);
	if (!ret)
		ret = answer_shelf(w, r, j, false);
	json_decref(j);
	return ret;
}

/* lfs.size (bytes), within the books; refused (ESTALE) if name is no longer uuid's. */
static int set_size(struct up_worker *w, const char *name, const uint8_t *uuid, uint64_t size)
{
	char v[32];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)size);
	return up_call_same(w, "attr.set",
			    json_pack("{s:s,s:s,s:s}", "name", name, "key", "lfs.size", "value", v),
			    uuid, NULL);
}

/* shelf.deactivate of the request's shelf, under its name now. */
static int deactivate(struct up_worker *w, const struct up_req *r, char *name, size_t len)
{
	const uint8_t *u = r->has_uuid ? r->uuid : NULL;
	int ret = up_call_same(w, "shelf.deactivate", json_pack("{s:s}", "name", name), u, NULL);

	if (up_renamed(w, r, ret, name, len))
		ret = up_call_same(w, "shelf.deactivate", json_pack("{s:s}", "name", name), u,
				   NULL);
	return ret;
}

static int do_close(struct up_worker *w, const struct up_req *r)
{
	char name[LFSVOL_UP_NAME_MAX + 1];
	bool write;
	int ret = up_name_of(w, r, name, sizeof(name));

	lfsvol_upactive_remove(r->uuid, &write);
	if (ret)
		return ret;
	/* the kernel stopped using the books: the activation ends whatever became of the size */
	if (r->has_size &&
	    up_renamed(w, r, set_size(w, name, r->uuid, r->size), name, sizeof(name)))
		set_size(w, name, r->uuid, r->size);
	ret = deactivate(w, r, name, sizeof(name));
	return ret ? ret : up_answer_errno(w, r->id, 0);
}

/*
 * shelf.resize of the request's shelf (ESTALE if name is no longer it) to
 * size bytes; *j its reply, with the new map where the librarian gives it.
 */
static int resize_to(struct up_worker *w, const struct up_req *r, const char *name, uint64_t size,
		     json_t **j)
{
	char u[40];
	int ret;

	lfs_format_uuid(r->uuid, u);
	ret = up_call(w, "shelf.resize",
		      json_pack("{s:s,s:s,s:I,s:i}", "name", name, "uuid", u, "bytes",
				(json_int_t)size, "limit", UP_MAP_PAGE),
		      j);
	return ret;
}

static int do_resize(struct up_worker *w, const struct up_req *r)
{
	char name[LFSVOL_UP_NAME_MAX + 1];
	json_t *j = NULL;
	int ret = up_name_of(w, r, name, sizeof(name));

	if (!ret)
		ret = resize_to(w, r, name, r->size, &j);
	if (up_renamed(w, r, ret, name, sizeof(name)))
		ret = resize_to(w, r, name, r->size, &j);
	if (!ret && !json_object_get(j, "map")) {
		json_decref(j);
		ret = up_find(w, r, true, &j);
	}
	if (!ret)
		ret = answer_shelf(w, r, j, true);
	json_decref(j);
	return ret;
}

static int do_setsize(struct up_worker *w, const struct up_req *r)
{
	struct up_shelf s;
	json_t *j;
	int ret = up_find(w, r, false, &j);

	if (!ret)
		ret = up_shelf_from(w, j, false, &s);
	json_decref(j);
	if (!ret && r->size > (uint64_t)s.nr_books * s.book_size)
		ret = -EINVAL;
	if (!ret)
		ret = set_size(w, s.name, r->uuid, r->size);
	return ret ? ret : up_answer_errno(w, r->id, 0);
}

/* The shelf named r->name, if it still has the request's UUID (ESTALE), for a same-name rename. */
static int still_named(struct up_worker *w, const struct up_req *r)
{
	json_t *j = NULL;
	int ret = up_find(w, r, false, &j);

	if (!ret && strcmp(json_string_value(json_object_get(j, "name")) ?: "", r->name))
		ret = -ESTALE;
	json_decref(j);
	return ret;
}

/* shelf.destroy or shelf.rename of r->name, refused (ESTALE) if it is no longer r's UUID. */
static int names_call(struct up_worker *w, const struct up_req *r, bool noreplace)
{
	char u[40];

	lfs_format_uuid(r->uuid, u);
	if (r->op == LFS_UP_DESTROY)
		return up_call(w, "shelf.destroy",
			       json_pack("{s:s,s:s}", "name", r->name, "uuid", u), NULL);
	return up_call(w, "shelf.rename",
		       json_pack("{s:s,s:s,s:s,s:b}", "name", r->name, "uuid", u, "new_name",
				 r->new_name, "replace", !noreplace),
		       NULL);
}

/* DESTROY and RENAME: the name must still be the UUID's (ESTALE), checked by the librarian. */
static int do_names(struct up_worker *w, const struct up_req *r)
{
	bool noreplace = r->flags & LFS_UP_F_NOREPLACE;
	int ret;

	if (!r->has_uuid || !r->name || (r->op == LFS_UP_RENAME && !r->new_name))
		return -EINVAL;
	if (r->op == LFS_UP_RENAME && !strcmp(r->name, r->new_name)) {
		ret = still_named(w, r);
		if (!ret && noreplace)
			ret = -EEXIST;
	} else {
		ret = names_call(w, r, noreplace);
	}
	if (!ret && r->op == LFS_UP_RENAME)
		lfsvol_upactive_rename(r->uuid, r->new_name);
	return ret ? ret : up_answer_errno(w, r->id, 0);
}

/* The fabric's books and those free (known zero, the only ones allocated); this node's shelves. */
static int do_statfs(struct up_worker *w, const struct up_req *r)
{
	json_t *st = NULL, *list = NULL;
	uint64_t total, free;
	int ret = up_call(w, "stats", NULL, &st);

	if (!ret)
		ret = up_call(w, "shelf.list", json_pack("{s:i}", "limit", 1), &list);
	if (!ret) {
		total = (uint64_t)json_integer_value(
			json_object_get(json_object_get(st, "books"), "total"));
		free = (uint64_t)json_integer_value(json_object_get(st, "free_known_zero"));
		ret = up_answer_statfs(
			w, r->id, total * w->book_size,
			(free < total ? free : total) * w->book_size,
			(uint64_t)json_integer_value(json_object_get(list, "total")));
	}
	json_decref(st);
	json_decref(list);
	return ret;
}

static const char *const op_names[LFS_UP_MAX + 1] = {
	[LFS_UP_LOOKUP] = "LOOKUP",
	[LFS_UP_LIST] = "LIST",
	[LFS_UP_CREATE] = "CREATE",
	[LFS_UP_OPEN] = "OPEN",
	[LFS_UP_CLOSE] = "CLOSE",
	[LFS_UP_RESIZE] = "RESIZE",
	[LFS_UP_SETSIZE] = "SETSIZE",
	[LFS_UP_DESTROY] = "DESTROY",
	[LFS_UP_RENAME] = "RENAME",
	[LFS_UP_GETXATTR] = "GETXATTR",
	[LFS_UP_SETXATTR] = "SETXATTR",
	[LFS_UP_LISTXATTR] = "LISTXATTR",
	[LFS_UP_REMOVEXATTR] = "REMOVEXATTR",
	[LFS_UP_STATFS] = "STATFS",
	[LFS_UP_CREATE_OPEN] = "CREATE_OPEN",
};

static int dispatch(struct up_worker *w, const struct up_req *r)
{
	snprintf(w->what, sizeof(w->what), "%s %s",
		 r->op == LFSVOL_UP_UNDO_OPEN		? "undo OPEN" :
		 r->op <= LFS_UP_MAX && op_names[r->op] ? op_names[r->op] :
							  "?",
		 r->name ? r->name : "-");
	lfsvol_trace("upcall %u: %s", r->id, w->what);
	switch (r->op) {
	case LFS_UP_LOOKUP:
		return do_lookup(w, r);
	case LFS_UP_LIST:
		return do_list(w, r);
	case LFS_UP_CREATE:
		return r->name ? do_create(w, r) : -EINVAL;
	case LFS_UP_OPEN:
		return up_do_open(w, r);
	case LFS_UP_CREATE_OPEN:
		return r->name ? up_do_create_open(w, r) : -EINVAL;
	case LFS_UP_CLOSE:
		return do_close(w, r);
	case LFS_UP_RESIZE:
		return do_resize(w, r);
	case LFS_UP_SETSIZE:
		return do_setsize(w, r);
	case LFS_UP_DESTROY:
	case LFS_UP_RENAME:
		return do_names(w, r);
	case LFS_UP_STATFS:
		return do_statfs(w, r);
	case LFS_UP_GETXATTR:
	case LFS_UP_SETXATTR:
	case LFS_UP_LISTXATTR:
	case LFS_UP_REMOVEXATTR:
		return up_xattr(w, r);
	case LFSVOL_UP_UNDO_OPEN:
		return up_undo_open(w, r);
	default:
		return -EOPNOTSUPP;
	}
}

int up_dispatch(struct up_worker *w, const struct up_req *r)
{
	int err = dispatch(w, r);

	if (err && r->op != LFSVOL_UP_UNDO_OPEN)
		up_answer_errno(w, r->id, -err);
	return err;
}
