// SPDX-License-Identifier: GPL-2.0
/*
 * Shelves: shelf.create, shelf.destroy, shelf.rename, shelf.list and
 * shelf.get (shelf.resize is ops_resize.c's). A grow takes books under the
 * shelf's policy (alloc.c) or none; a destroy (also of the shelf a rename
 * replaces) turns the shelf's books into ZOMBIE books for their nodes to
 * zero. Who may do what is access.c's, how much quota.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "ops.h"
#include "store_known.h"

static int64_t max_books(const struct lib_config *c)
{
	return (int64_t)c->total_books;
}

/* Grow by n books, every one of them known to be zero. */
int lib_shelf_grow(struct req *rq, struct lib_shelf *sh, int node, int64_t n,
		   const char *const placement[3], int64_t **taken)
{
	struct lib_shelf_ctx x;
	int r = lib_shelf_ctx_texts(rq, sh, node, placement, &x);

	if (r == 0)
		r = lib_alloc_books(rq->s, &x, n, &rq->err);
	if (r == 0 && taken) {
		*taken = x.taken;
		x.taken = NULL;
	}
	lib_shelf_ctx_free(&x);
	if (r == 0) {
		sh->books += n;
		r = lib_store_shelf_set_books(rq->s, sh->id, sh->books, time(NULL), &rq->err);
	}
	return r;
}

static int make_uuid(char out[37])
{
	unsigned char u[16];

	if (RAND_bytes(u, sizeof(u)) != 1)
		return -EIO;
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	return 0;
}

struct create {
	const char *name;
	int64_t books;
	const char *activate; /* a mode (activation_mode.c) or NULL */
	int node; /* placement and activation are relative to it */
	json_t *attrs;
	const char *owner; /* the caller, or the node the admin acts for */
	const char *tenant; /* the owner's */
};

static int create_args(struct req *rq, struct create *cr)
{
	int r;

	if ((r = lib_arg_str(rq, "name", true, &cr->name)) < 0 ||
	    (r = lib_check_new_name(rq, "", cr->name)) < 0 ||
	    (r = lib_arg_int(rq, "books", 0, max_books(rq->c), false, &cr->books)) < 0 ||
	    (r = lib_check_shelf_books(rq, cr->books)) < 0 ||
	    (r = lib_arg_str(rq, "activate", false, &cr->activate)) < 0)
		return r;
	if (cr->activate && (r = lib_mode_check(rq, "activate", cr->activate)) < 0)
		return r;
	if ((r = lib_arg_node(rq, cr->activate != NULL, &cr->node)) < 0)
		return r;
	cr->attrs = json_object_get(rq->args, "attrs");
	if (cr->attrs &&
	    (!json_is_object(cr->attrs) || json_object_size(cr->attrs) > LIB_ATTRS_PER_SHELF))
		return FAIL(rq, EINVAL, "argument 'attrs' must be an object of at most %d strings",
			    LIB_ATTRS_PER_SHELF);
	cr->owner = rq->who->admin && cr->node >= 0 ? rq->c->nodes[cr->node].name : rq->who->name;
	cr->tenant = "";
	if (lib_config_tenant_of(rq->c, cr->owner) >= 0)
		cr->tenant = rq->c->tenants[lib_config_tenant_of(rq->c, cr->owner)].name;
	return 0;
}

/*
 * The insert of the shelf's row did not happen: the name is taken (names
 * are one namespace for all tenants) or the catalogue holds max_shelves.
 * Asked only then: the insert's own condition checked both (docs/HA.md).
 */
static int create_refused(struct req *rq, const struct create *cr, int r)
{
	struct lib_shelf o;
	int64_t count;

	if (!lib_store_mismatch(rq->s))
		return r;
	r = lib_store_shelf_find(rq->s, cr->name, &o, &rq->err);
	if (r == 0)
		return FAIL(rq, EEXIST, "shelf '%s' already exists", cr->name);
	if (r != -ENOENT)
		return r;
	r = lib_store_shelf_count(rq->s, NULL, NULL, &count, &rq->err);
	if (r == 0 && count >= rq->c->max_shelves)
		return FAIL(rq, ENOSPC, "the catalogue already holds %lld shelves (max_shelves)",
			    (long long)count);
	return r < 0 ? r : FAIL(rq, EIO, "shelf '%s' was not made", cr->name);
}

/* lfs.policy (the default if not given), lfs.igs, lfs.anti_affinity, lfs.access, the user's. */
static int create_attrs(struct req *rq, const struct lib_shelf *sh, json_t *attrs)
{
	static const char *const sys[][2] = { { "igs", "lfs.igs" },
					      { "anti_affinity", "lfs.anti_affinity" },
					      { "access", "lfs.access" } };
	json_t *v = json_object_get(rq->args, "policy");
	const char *key;
	int r;

	if (v)
		r = lib_attr_set(rq, sh, "lfs.policy", v);
	else
		r = lib_store_attr_put(rq->s, sh->id, "lfs.policy",
				       lfs_policy_name(rq->c->default_policy), &rq->err);
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]) && r == 0; i++)
		if ((v = json_object_get(rq->args, sys[i][0])))
			r = lib_attr_set(rq, sh, sys[i][1], v);
	/* lfsvol copy's mark, set here only: activate refuses the shelf until it is removed */
	if (r == 0 && (v = json_object_get(rq->args, "incomplete")))
		r = json_is_string(v) ? lib_store_attr_put(rq->s, sh->id, "lfs.incomplete",
							   json_string_value(v), &rq->err) :
					FAIL(rq, EINVAL, "argument 'incomplete' must be a string");
	if (r < 0)
		return r;
	json_object_foreach(attrs, key, v) {
		if (!strncmp(key, "lfs.", 4))
			return FAIL(
				rq, EINVAL,
				"set system attribute '%s' with its own argument (policy, igs, anti_affinity, access)",
				key);
		r = lib_attr_set(rq, sh, key, v);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A create failed: if its insert waits (PostgreSQL), whether the insert is why. */
static int create_failed(struct req *rq, const struct create *cr, int r)
{
	struct lib_err keep = rq->err;

	if (!lib_store_mismatch(rq->s) && lib_store_flush(rq->s, &rq->err) == 0)
		return r;
	if (!lib_store_mismatch(rq->s)) {
		rq->err = keep;
		return r;
	}
	return create_refused(rq, cr, r);
}

/*
 * The reply from what the request made, as lib_reply_shelf_map() would read
 * it back (the row, its policy, its activation, its books; lfs.access read
 * back if the request granted any): no round trip.
 */
static json_t *create_reply(struct req *rq, const struct create *cr, const struct lib_shelf *sh,
			    const char *uuid, int64_t now, const int64_t *ids)
{
	json_t *v = json_object_get(rq->args, "policy"), *acts = json_array();
	struct lib_shelf_row row = {
		.name = sh->name,
		.uuid = uuid,
		.owner = sh->owner,
		.tenant = sh->tenant,
		.policy = v ? json_string_value(v) : lfs_policy_name(rq->c->default_policy),
		.ctime = now,
		.mtime = now,
		.books = sh->books,
		.gen = sh->books ? 1 : 0,
	};

	if (json_object_get(rq->args, "access"))
		return lib_reply_shelf_map(rq, sh->id, 0, LIB_BOOKS_LIMIT);
	if (cr->activate)
		json_array_append_new(acts, json_pack("{s:s,s:s,s:I}", "node",
						      rq->c->nodes[cr->node].name, "mode",
						      cr->activate, "since", (json_int_t)now));
	return lib_reply_map_known(rq, lib_reply_shelf_known(rq, sh->id, &row, acts), ids,
				   sh->books, LIB_BOOKS_LIMIT);
}

/*
 * One round trip on PostgreSQL (docs/HA.md, "Round trips"): the row's
 * insert (which checks the name and max_shelves itself), the attributes and
 * the takes go in one pipeline; the reply is built, not read back.
 */
int lib_op_shelf_create(struct req *rq)
{
	struct create cr = { 0 };
	struct lib_shelf sh = { 0 };
	int64_t now = time(NULL), *ids = NULL;
	json_t *pol = json_object_get(rq->args, "policy");
	/* its placement is the request's: read back only if lfs.igs or partners were set */
	const char *known[3] = { pol ? json_string_value(pol) : NULL, NULL, NULL };
	bool asked = json_object_get(rq->args, "igs") || json_object_get(rq->args, "anti_affinity");
	char uuid[37];
	int r;

	if ((r = create_args(rq, &cr)) < 0 ||
	    (r = lib_quota_check(rq, cr.owner, cr.tenant, 1, cr.books)) < 0)
		return r;
	if (make_uuid(uuid) < 0)
		return FAIL(rq, EIO, "no random numbers for a UUID");
	snprintf(sh.name, sizeof(sh.name), "%s", cr.name);
	snprintf(sh.owner, sizeof(sh.owner), "%s", cr.owner);
	snprintf(sh.tenant, sizeof(sh.tenant), "%s", cr.tenant);
	if ((r = lib_store_next_shelf(rq->s, &sh.id, &rq->err)) < 0 ||
	    (r = lib_store_shelf_insert(rq->s, &sh, uuid, now, rq->c->max_shelves, &rq->err)) < 0 ||
	    (r = create_attrs(rq, &sh, cr.attrs)) < 0 ||
	    (cr.books &&
	     (r = lib_shelf_grow(rq, &sh, cr.node, cr.books, asked ? NULL : known, &ids)) < 0) ||
	    /* create and activate in one request: a new shelf has no other holder */
	    (cr.activate && (r = lib_store_activation_put(rq->s, sh.id, rq->c->nodes[cr.node].name,
							  cr.activate, now, &rq->err)) < 0) ||
	    (r = lib_store_flush(rq->s, &rq->err)) < 0) {
		free(ids);
		return create_failed(rq, &cr, r);
	}
	rq->result = create_reply(rq, &cr, &sh, uuid, now, ids);
	free(ids);
	/* only books known zero are allocated: the node may skip probing them */
	json_object_set_new(rq->result, "zeroed", json_true());
	return 0;
}

struct holder_walk {
	struct req *rq;
	const char *shelf;
	int r;
};

static int holder_not_live(void *arg, const struct lib_activation *a)
{
	struct holder_walk *w = arg;

	w->r = lib_require_not_live(w->rq, w->shelf, a->node, a->mode, "destroy");
	return w->r;
}

/*
 * Destroy needs no activation; "force" (admin) destroys a shelf whose
 * holders are no longer live, never one a live node may still write.
 */
static int destroy_unheld(struct req *rq, struct lib_shelf *sh, bool force)
{
	char holder[LFS_NODE_NAME_MAX + 1], mode[8];
	struct holder_walk w = { .rq = rq, .shelf = sh->name };
	int n, r;

	if (!sh->active) /* counted by the lookup: no activation to read */
		return 0;
	if (force) {
		r = lib_store_activations_of_shelf(rq->s, sh->id, holder_not_live, &w, &rq->err);
		return w.r ? w.r : r;
	}
	n = lib_store_activation_others(rq->s, sh->id, NULL, holder, sizeof(holder), mode,
					sizeof(mode), &rq->err);
	if (n > 0)
		return FAIL(
			rq, EBUSY,
			"cannot destroy shelf '%s': it is active on node '%s' (%s)%s; deactivate it first",
			sh->name, holder, mode, n > 1 ? " and others" : "");
	return n;
}

/*
 * The shelf is gone, its books ZOMBIE: how many (its row's count: librarian
 * check holds it to its books). Writes nobody reads: on PostgreSQL they go
 * with the next round trip, so a destroy costs its lookup alone.
 */
static int64_t shelf_remove(struct req *rq, const struct lib_shelf *sh)
{
	int r = lib_store_shelf_release(rq->s, sh->id, 0, &rq->err);

	if (r == 0)
		r = lib_store_shelf_delete(rq->s, sh->id, &rq->err);
	return r < 0 ? r : sh->books;
}

int lib_op_shelf_destroy(struct req *rq)
{
	struct lib_shelf sh;
	bool force;
	int64_t z;
	int r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = lib_arg_bool(rq, "force", &force)) < 0)
		return r;
	if (force && !rq->who->admin)
		return FAIL(rq, EPERM, "\"force\" needs the admin identity");
	if ((r = lib_require_access(rq, &sh, ACC_ALL, "destroy")) < 0 ||
	    (r = destroy_unheld(rq, &sh, force)) < 0)
		return r;
	z = shelf_remove(rq, &sh);
	if (z < 0)
		return z;
	rq->result = json_pack("{s:s,s:I}", "name", sh.name, "zombies", (json_int_t)z);
	return 0;
}

/*
 * The shelf named nn, if any: EEXIST, or with "replace" destroyed as
 * shelf.destroy would (the caller's access, no holder) and *replaced says so.
 * A shelf the caller does not see is not replaced: the name is just taken.
 */
static int rename_target(struct req *rq, const struct lib_shelf *sh, const char *nn, bool replace,
			 json_t **replaced)
{
	enum lib_access acc = ACC_NONE;
	struct lib_shelf o;
	int64_t z;
	int r = lib_store_shelf_find(rq->s, nn, &o, &rq->err);

	if (r == -ENOENT)
		return 0;
	if (r < 0 || (replace && (r = lib_access_of(rq, &o, &acc)) < 0))
		return r;
	if (acc == ACC_NONE)
		return FAIL(rq, EEXIST, "cannot rename shelf '%s': shelf '%s' already exists%s",
			    sh->name, nn, replace ? "" : " (\"replace\": true destroys it)");
	if ((r = lib_require_access(rq, &o, ACC_ALL, "destroy")) < 0 ||
	    (r = destroy_unheld(rq, &o, false)) < 0)
		return r;
	z = shelf_remove(rq, &o);
	if (z < 0)
		return z;
	*replaced = json_pack("{s:s,s:I}", "name", o.name, "zombies", (json_int_t)z);
	return 0;
}

/* Onto its own name: nothing changes. The shelf and the one replaced in one transaction. */
int lib_op_shelf_rename(struct req *rq)
{
	json_t *replaced = NULL;
	struct lib_shelf sh;
	const char *nn;
	bool replace;
	int r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = lib_arg_str(rq, "new_name", true, &nn)) < 0 ||
	    (r = lib_arg_bool(rq, "replace", &replace)) < 0 ||
	    (r = lib_check_new_name(rq, "new_name: ", nn)) < 0 ||
	    (r = lib_require_access(rq, &sh, ACC_ALL, "rename")) < 0)
		return r;
	if (strcmp(nn, sh.name) &&
	    ((r = lib_require_unshared(rq, &sh, "rename")) < 0 ||
	     (r = rename_target(rq, &sh, nn, replace, &replaced)) < 0 ||
	     (r = lib_store_shelf_rename(rq->s, sh.id, nn, time(NULL), &rq->err)) < 0)) {
		json_decref(replaced);
		return r;
	}
	rq->result = lib_reply_shelf(rq, sh.id);
	if (rq->result && replaced)
		json_object_set_new(rq->result, "replaced", replaced);
	else
		json_decref(replaced);
	return 0;
}

struct list_walk {
	struct req *rq;
	bool first;
};

static int list_shelf(void *arg, const struct lib_shelf_row *row)
{
	struct list_walk *w = arg;

	if (!w->first)
		lib_text_add(&w->rq->text, ",", 1);
	w->first = false;
	lib_text_shelf_row(w->rq, &w->rq->text, row);
	return 0;
}

/*
 * Sorted by name, by the name index (a tenant's: its own, merged with the
 * granted). The result is written as JSON text from the rows of the one
 * query (reply_text.c), not built as objects.
 */
int lib_op_shelf_list(struct req *rq)
{
	const char *prefix = NULL;
	int64_t offset = 0, limit = 1000, total = 0;
	struct list_walk w = { .rq = rq, .first = true };
	const struct lib_shelf_filter *f;
	struct lib_shelf_filter fs;
	char tag[LFS_NODE_NAME_MAX + 2];
	int r;

	if ((r = lib_arg_str(rq, "prefix", false, &prefix)) < 0 ||
	    (r = lib_arg_int(rq, "offset", 0, INT64_MAX / 2, false, &offset)) < 0 ||
	    (r = lib_arg_int(rq, "limit", 1, LIB_LIST_LIMIT, false, &limit)) < 0)
		return r;
	f = lib_access_filter(rq, &fs, tag, sizeof(tag));
	lib_text_add(&rq->text, "{\"shelves\":[", 12);
	r = lib_store_shelf_list(rq->s, prefix, f, offset, limit, list_shelf, &w, &rq->err);
	if (r == 0)
		r = lib_store_shelf_count(rq->s, prefix, f, &total, &rq->err);
	if (r == 0)
		lib_text_printf(&rq->text, "],\"total\":%lld,\"offset\":%lld}", (long long)total,
				(long long)offset);
	if (r == 0 && rq->text.oom)
		r = FAIL(rq, ENOMEM, "out of memory building the reply");
	if (r < 0) {
		free(rq->text.p);
		memset(&rq->text, 0, sizeof(rq->text));
	}
	return r;
}

/* The book map only for callers that may read the shelf ("ro" access). */
int lib_op_shelf_get(struct req *rq)
{
	const char *name = NULL, *uuid = NULL;
	int64_t offset = 0, limit = LIB_BOOKS_LIMIT;
	enum lib_access acc = ACC_NONE;
	struct lib_shelf sh;
	char b[100];
	int r;

	if ((r = lib_arg_str(rq, "name", false, &name)) < 0 ||
	    (r = lib_arg_str(rq, "uuid", false, &uuid)) < 0 ||
	    (r = lib_arg_int(rq, "offset", 0, INT64_MAX / 2, false, &offset)) < 0 ||
	    (r = lib_arg_int(rq, "limit", 0, LIB_BOOKS_LIMIT, false, &limit)) < 0)
		return r;
	if (!!name == !!uuid)
		return FAIL(rq, EINVAL, "shelf.get needs exactly one of \"name\" or \"uuid\"");
	if (name)
		r = lib_shelf_lookup(rq, name, &sh);
	else if ((r = lib_store_shelf_find_uuid(rq->s, uuid, &sh, &rq->err)) == 0 &&
		 ((r = lib_access_of(rq, &sh, &acc)) == 0 && acc == ACC_NONE))
		r = -ENOENT;
	if (r == -ENOENT && uuid)
		r = FAIL(rq, ENOENT, "no shelf with UUID '%s'", lib_shown(uuid, b, sizeof(b)));
	if (r < 0 || (r = lib_access_of(rq, &sh, &acc)) < 0)
		return r;
	if (acc >= ACC_RO)
		rq->result = lib_reply_shelf_map(rq, sh.id, offset, limit);
	else
		rq->result = lib_reply_shelf(rq, sh.id);
	if (rq->result)
		json_object_set_new(rq->result, "attrs", lib_reply_attrs(rq, sh.id));
	return 0;
}
