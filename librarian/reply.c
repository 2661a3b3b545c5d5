// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON several operations reply with: a shelf's summary, its book map,
 * its attributes and lfs.allocation. Books are [ig, book] pairs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

json_t *lib_book_pair(int64_t id)
{
	return json_pack("[II]", (json_int_t)(id >> 32), (json_int_t)(id & 0xffffffff));
}

int lib_append_book(void *arg, int64_t id)
{
	return json_array_append_new(arg, lib_book_pair(id)) ? -1 : 0;
}

json_t *lib_reply_map(struct req *rq, int64_t shelf, int64_t offset, int64_t limit)
{
	json_t *a = json_array();

	if (a &&
	    lib_store_shelf_books(rq->s, shelf, offset, limit, lib_append_book, a, &rq->err) < 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* shelf.list's activations, "node:mode,...", as [{node, mode}, ...]. */
static json_t *activations_from_text(const char *text)
{
	json_t *a = json_array();
	char *dup, *save = NULL, *tok;

	if (!text || !a)
		return a;
	dup = strdup(text);
	for (tok = dup ? strtok_r(dup, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon)
			continue;
		*colon = 0;
		json_array_append_new(a, json_pack("{s:s,s:s}", "node", tok, "mode", colon + 1));
	}
	free(dup);
	return a;
}

json_t *lib_reply_shelf_row(struct req *rq, const struct lib_shelf_row *row)
{
	const char *policy = row->policy ? row->policy : lfs_policy_name(rq->c->default_policy);

	return json_pack("{s:s,s:s,s:s,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o}", "name", row->name,
			 "uuid", row->uuid, "owner", row->owner, "tenant",
			 row->tenant && row->tenant[0] ? json_string(row->tenant) : json_null(),
			 "access", lib_access_from_text(row->access), "ctime",
			 (json_int_t)row->ctime, "mtime", (json_int_t)row->mtime, "books",
			 (json_int_t)row->books, "size",
			 (json_int_t)lib_shelf_capacity(rq->c, row->books), "bytes",
			 (json_int_t)lib_shelf_bytes(rq->c, row->books, row->size), "gen",
			 (json_int_t)row->gen, "policy", policy, "activations",
			 activations_from_text(row->activations));
}

static int append_activation(void *arg, const struct lib_activation *a)
{
	return json_array_append_new(arg, json_pack("{s:s,s:s,s:I}", "node", a->node, "mode",
						    a->mode, "since", (json_int_t)a->since)) ?
		       -1 :
		       0;
}

struct shelf_walk {
	struct req *rq;
	json_t *o;
};

static int shelf_object(void *arg, const struct lib_shelf_row *row)
{
	struct shelf_walk *w = arg;

	w->o = lib_reply_shelf_row(w->rq, row);
	return 0;
}

/* What the caller may do with the shelf of summary o (its owner and tenant). */
static json_t *caller_access(struct req *rq, int64_t id, json_t *o)
{
	struct lib_shelf sh = { .id = id };
	enum lib_access level;

	snprintf(sh.owner, sizeof(sh.owner), "%s",
		 json_string_value(json_object_get(o, "owner")) ?: "");
	snprintf(sh.tenant, sizeof(sh.tenant), "%s",
		 json_string_value(json_object_get(o, "tenant")) ?: "");
	if (lib_access_of(rq, &sh, &level) < 0)
		return NULL;
	return json_string(lib_access_name(level));
}

/*
 * The shelf's summary: what shelf.list shows of it, with "since" in
 * activations and what the caller may do with it ("caller_access").
 */
json_t *lib_reply_shelf(struct req *rq, int64_t shelf)
{
	struct shelf_walk w = { .rq = rq };
	json_t *acts;

	if (lib_store_shelf_show(rq->s, shelf, shelf_object, &w, &rq->err) < 0 || !w.o)
		return NULL;
	acts = json_array();
	if (acts &&
	    lib_store_activations_of_shelf(rq->s, shelf, append_activation, acts, &rq->err) < 0)
		json_array_clear(acts);
	json_object_set_new(w.o, "activations", acts);
	json_object_set_new(w.o, "caller_access", caller_access(rq, shelf, w.o));
	return w.o;
}

json_t *lib_reply_shelf_known(struct req *rq, int64_t id, const struct lib_shelf_row *row,
			      json_t *acts)
{
	json_t *o = lib_reply_shelf_row(rq, row);

	if (!o) {
		json_decref(acts);
		return NULL;
	}
	json_object_set_new(o, "activations", acts);
	json_object_set_new(o, "caller_access", caller_access(rq, id, o));
	return o;
}

json_t *lib_books_array(const int64_t *ids, int64_t n)
{
	json_t *a = json_array();

	for (int64_t k = 0; a && k < n; k++)
		lib_append_book(a, ids[k]);
	return a;
}

json_t *lib_reply_map_known(struct req *rq, json_t *o, const int64_t *ids, int64_t n, int64_t limit)
{
	(void)rq;
	if (!o)
		return NULL;
	json_object_set_new(o, "map_offset", json_integer(0));
	json_object_set_new(o, "map", lib_books_array(ids, n < limit ? n : limit));
	json_object_set_new(o, "map_complete", json_boolean(limit >= n));
	return o;
}

/* Summary plus the book map (up to limit books from offset). */
json_t *lib_reply_shelf_map(struct req *rq, int64_t shelf, int64_t offset, int64_t limit)
{
	json_t *o = lib_reply_shelf(rq, shelf);
	int64_t n;

	if (!o)
		return NULL;
	n = json_integer_value(json_object_get(o, "books"));
	json_object_set_new(o, "map_offset", json_integer(offset));
	json_object_set_new(o, "map", lib_reply_map(rq, shelf, offset, limit));
	json_object_set_new(o, "map_complete", json_boolean(offset + limit >= n));
	return o;
}

struct alloc_walk {
	const struct lib_config *c;
	json_t *igs, *nodes;
};

static int count_allocation(void *arg, int64_t ig, int64_t n)
{
	struct alloc_walk *w = arg;
	int k = lib_config_find_ig(w->c, ig);
	const char *node = k >= 0 ? w->c->nodes[w->c->igs[k].node].name : "?";
	char key[24];

	snprintf(key, sizeof(key), "%" PRId64, ig);
	json_object_set_new(w->igs, key, json_integer(n));
	json_object_set_new(w->nodes, node,
			    json_integer(n + json_integer_value(json_object_get(w->nodes, node))));
	return 0;
}

/* lfs.allocation: the shelf's books per IG and per node, as JSON text. */
char *lib_reply_allocation(struct req *rq, int64_t shelf)
{
	struct alloc_walk w = { .c = rq->c, .igs = json_object(), .nodes = json_object() };
	json_t *o;
	char *txt;

	lib_store_shelf_igs(rq->s, shelf, count_allocation, &w, &rq->err);
	o = json_pack("{s:o,s:o}", "igs", w.igs, "nodes", w.nodes);
	txt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return txt;
}

static int set_attr(void *arg, const char *key, const char *value)
{
	json_object_set_new(arg, key, json_string(value));
	return 0;
}

/* Every attribute of the shelf, lfs.access and lfs.allocation included. */
json_t *lib_reply_attrs(struct req *rq, int64_t shelf)
{
	json_t *o = json_object(), *acl = lib_access_list(rq, shelf), *el;
	char *alloc, *text = NULL;
	size_t i;

	lib_store_attr_each(rq->s, shelf, set_attr, o, &rq->err);
	json_array_foreach(acl, i, el) {
		char *t = NULL;

		if (asprintf(&t, "%s%s%s", text ? text : "", text ? "," : "",
			     json_string_value(el)) < 0)
			break;
		free(text);
		text = t;
	}
	if (text)
		json_object_set_new(o, "lfs.access", json_string(text));
	free(text);
	json_decref(acl);
	alloc = lib_reply_allocation(rq, shelf);
	if (alloc)
		json_object_set_new(o, "lfs.allocation", json_string(alloc));
	free(alloc);
	return o;
}
