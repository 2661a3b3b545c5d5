// SPDX-License-Identifier: GPL-2.0
/*
 * The upcalls that activate a file on this node (docs/NAMESPACE.md "Many
 * nodes"): OPEN, CREATE_OPEN (open with O_CREAT of a new name: the shelf
 * made and activated in one librarian request) and the undoing of an
 * answer the kernel refused. Each activation is watched: the renewal
 * thread fences it when the librarian stops listing it (renew.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "upserver.h"

/*
 * Is the shelf a block device on this node? Its activation at the librarian
 * is then the block device's: activating it again for the file would change
 * its mode, and the kernel's refusal (EBUSY) would end it.
 */
static int kernel_shelf_list(struct up_worker *w, const char *name, struct lfs_shelf_info **v,
			     size_t *n)
{
	if (!w->drv && lfs_client_open(&w->drv)) {
		w->drv = NULL;
		return -ENOENT; /* driver not loaded: nothing is active here */
	}
	return lfsnl_shelf_list(w->drv, name, v, n);
}

/*
 * The worker keeps its netlink client (a new one per OPEN cost a socket and
 * a family lookup); one that fails (the driver was reloaded) is made again.
 */
static bool block_device_here(struct up_worker *w, const char *name)
{
	struct lfs_shelf_info *v = NULL;
	size_t n = 0;
	bool found;
	int r;

	r = kernel_shelf_list(w, name, &v, &n);
	if (r && r != -ENOENT) {
		lfs_client_close(w->drv);
		w->drv = NULL;
		r = kernel_shelf_list(w, name, &v, &n);
	}
	if (r)
		n = 0; /* none of that name, or none the kernel would tell */
	found = lfsvol_find_active(v, n, name);
	lfsnl_shelf_list_free(v, n);
	if (found)
		lfsvol_err(
			"upcall %s: '%s' is a block device on this node: not opened through the filesystem",
			w->what, name);
	return found;
}

/* shelf.activate of name, if still uuid (NULL: unchecked), mode in args. */
static int activate_as(struct up_worker *w, const char *name, const char *uuid, const char *mode,
		       json_t **j)
{
	json_t *args = json_pack("{s:s,s:s}", "name", name, "mode", mode);

	if (uuid)
		json_object_set_new(args, "uuid", json_string(uuid));
	return up_call(w, "shelf.activate", args, j);
}

/* Mode "shared" for a write (several nodes may hold it), "ro" otherwise. */
static int activate(struct up_worker *w, const char *name, const char *uuid, bool write, json_t **j)
{
	return activate_as(w, name, uuid, write ? "shared" : "ro", j);
}

/*
 * The first activation here of the shelf the kernel opens as r->name, in one
 * request: the librarian checks that the name is still the UUID's (ESTALE
 * otherwise, and for a name that is gone: the kernel looks the name up again
 * and opens what it names now). Without a name or UUID: the current name by
 * UUID first (shelf.get).
 */
static int activate_first(struct up_worker *w, const struct up_req *r, char *name, size_t len,
			  json_t **j)
{
	bool write = r->flags & LFS_UP_F_WRITE;
	char u[40];
	int ret;

	if (r->name && r->has_uuid) {
		snprintf(name, len, "%s", r->name);
		if (block_device_here(w, name))
			return -EBUSY;
		lfs_format_uuid(r->uuid, u);
		ret = activate(w, name, u, write, j);
		return ret == -ENOENT ? -ESTALE : ret;
	}
	ret = up_name_of(w, r, name, len);
	if (!ret && block_device_here(w, name))
		ret = -EBUSY;
	return ret ? ret : activate(w, name, NULL, write, j);
}

/*
 * The file is open here already (a write open upgrades a read-only
 * activation): by the name the agent knows, checked by UUID, and by its
 * name now if it was renamed while open (upname.c).
 */
static int activate_again(struct up_worker *w, const struct up_req *r, char *name, size_t len,
			  json_t **j)
{
	bool write = r->flags & LFS_UP_F_WRITE;
	char u[40];
	int ret;

	lfs_format_uuid(r->uuid, u);
	ret = activate(w, name, u, write, j);
	if (up_renamed(w, r, ret, name, len))
		ret = activate(w, name, u, write, j);
	return ret;
}

/*
 * Activate for this node and answer the map, leased (the renewal thread
 * fences it when the librarian stops listing it); a reply the kernel
 * refuses is undone (upcall.c). A shelf that is a block device here is
 * refused (EBUSY) before the librarian is asked anything.
 */
int up_do_open(struct up_worker *w, const struct up_req *r)
{
	char name[LFSVOL_UP_NAME_MAX + 1];
	bool write = r->flags & LFS_UP_F_WRITE, had, activated;
	struct up_shelf s = { 0 };
	uint64_t granted;
	json_t *j = NULL;
	int ret;

	had = r->has_uuid && lfsvol_upactive_name(r->uuid, name, sizeof(name));
	ret = had ? activate_again(w, r, name, sizeof(name), &j) :
		    activate_first(w, r, name, sizeof(name), &j);
	activated = !ret && !had;
	/*
	 * Granted once the librarian's answer is here, not when it was asked:
	 * a heartbeat sent after this instant was handled after the grant
	 * and lists it; one sent while the request was on its way may not,
	 * and must not make the renewal thread fence the file (renew.c).
	 */
	granted = lfs_boottime_ns();
	if (!ret)
		ret = up_shelf_from(w, j, true, &s);
	json_decref(j);
	if (!ret && memcmp(s.uuid, r->uuid, LFS_UUID_LEN))
		ret = -ESTALE; /* renamed and replaced since: the kernel looks again */
	if (ret) {
		/* activated here by this request, but no map for the kernel: undone */
		if (activated)
			up_call(w, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
		goto out;
	}
	lfsvol_upactive_add(s.name, s.uuid, granted, write);
	w->watch = !had;
	ret = up_answer_map(w, r, &s, true);
	w->watch = false;
out:
	up_shelf_free(&s);
	return ret;
}

/* An OPEN whose reply the kernel refused: the node has no activation. */
int up_undo_open(struct up_worker *w, const struct up_req *r)
{
	bool write;

	if (!lfsvol_upactive_remove(r->uuid, &write))
		return 0;
	lfsvol_err("upcall: the kernel refused the OPEN of %s: deactivating it again", r->name);
	up_call(w, "shelf.deactivate", json_pack("{s:s}", "name", r->name), NULL);
	return 0;
}

/*
 * CREATE_OPEN: shelf.create of r->name with no books and the mount's
 * policy, activated on this node in the same transaction ("activate"),
 * answered as an OPEN. An existing name is EEXIST (the kernel then opens it
 * as any open). A new shelf has no holder and is no block device here.
 */
int up_do_create_open(struct up_worker *w, const struct up_req *r)
{
	bool write = r->flags & LFS_UP_F_WRITE;
	json_t *args = json_pack("{s:s,s:i,s:s}", "name", r->name, "books", 0, "activate",
				 write ? "shared" : "ro");
	struct up_shelf s = { 0 };
	uint64_t granted;
	json_t *j = NULL;
	int ret;

	if (r->policy)
		json_object_set_new(args, "policy", json_string(r->policy));
	ret = up_call(w, "shelf.create", args, &j);
	granted = lfs_boottime_ns(); /* as for OPEN: once the answer is here */
	if (ret)
		return ret;
	ret = up_shelf_from(w, j, true, &s);
	json_decref(j);
	if (ret) {
		/* created and activated, but no map for the kernel: the activation ends */
		up_call(w, "shelf.deactivate", json_pack("{s:s}", "name", r->name), NULL);
		goto out;
	}
	lfsvol_upactive_add(s.name, s.uuid, granted, write);
	w->watch = true;
	ret = up_answer_map(w, r, &s, true);
	w->watch = false;
out:
	up_shelf_free(&s);
	return ret;
}
