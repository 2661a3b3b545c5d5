// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what with a shelf. Its owner (the node that created it, or the
 * admin) and the admin may do everything. Each node is in a tenant
 * (librarian.conf; nodes in none are in the default tenant) and a shelf is
 * in its owner's: the tenant's other nodes see it and may use it as the
 * tenant's share says ("see", "ro", "rw"). The shelf's access list,
 * lfs.access, grants more to nodes or tenants ("n2:rw", "@blue:ro"), and
 * "all" lets a grantee destroy, rename and change lfs.access too. Nodes of
 * other tenants without a grant see nothing of the shelf: not in
 * shelf.list, ENOENT for everything else, as if it did not exist.
 *
 *   see  list it, shelf.get (without the book map), attr.get, attr.list
 *   ro   the book map, read-only activation
 *   rw   exclusive activation, resize, attributes
 *   all  destroy, rename, lfs.access
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define LIB_GRANTS_MAX 64

static const char *const level_names[] = {
	[ACC_NONE] = "none", [ACC_SEE] = "see", [ACC_RO] = "ro", [ACC_RW] = "rw", [ACC_ALL] = "all",
};

const char *lib_access_name(int level)
{
	return level >= ACC_NONE && level <= ACC_ALL ? level_names[level] : "?";
}

/* The caller's tenant: its name ("" for the default tenant). */
static const char *caller_tenant(struct req *rq)
{
	int k = rq->who->node;

	if (k < 0 || rq->c->nodes[k].tenant < 0)
		return "";
	return rq->c->tenants[rq->c->nodes[k].tenant].name;
}

static enum lib_access tenant_share(struct req *rq)
{
	int k = rq->who->node;

	if (k < 0 || rq->c->nodes[k].tenant < 0)
		return rq->c->share;
	return rq->c->tenants[rq->c->nodes[k].tenant].share;
}

int lib_access_of(struct req *rq, const struct lib_shelf *sh, enum lib_access *out)
{
	const char *tenant = caller_tenant(rq);
	char tag[LFS_NODE_NAME_MAX + 2];
	int level = ACC_NONE, r;

	*out = ACC_ALL;
	if (rq->who->admin || !strcmp(sh->owner, rq->who->name))
		return 0;
	snprintf(tag, sizeof(tag), "@%s", tenant);
	r = lib_store_access_level(rq->s, sh->id, rq->who->name, tenant[0] ? tag : NULL, &level,
				   &rq->err);
	if (r < 0)
		return r;
	if (!strcmp(sh->tenant, tenant) && (int)tenant_share(rq) > level)
		level = tenant_share(rq);
	*out = level;
	return 0;
}

/* The filter shelf.list applies for the caller (NULL: the admin sees all). */
const struct lib_shelf_filter *lib_access_filter(struct req *rq, struct lib_shelf_filter *f,
						 char *tag, size_t len)
{
	if (rq->who->admin)
		return NULL;
	f->tenant = caller_tenant(rq);
	f->node = rq->who->name;
	snprintf(tag, len, "@%s", f->tenant);
	f->tag = f->tenant[0] ? tag : NULL;
	return f;
}

int lib_require_access(struct req *rq, const struct lib_shelf *sh, enum lib_access need,
		       const char *what)
{
	enum lib_access have;
	char b[200];
	int r = lib_access_of(rq, sh, &have);

	if (r < 0 || have >= need)
		return r;
	if (have == ACC_NONE)
		return FAIL(rq, ENOENT, "no shelf named '%s'", lib_shown(sh->name, b, sizeof(b)));
	return FAIL(
		rq, EPERM,
		"node '%s' may not %s shelf '%s' (owner '%s'): that needs '%s' access, it has '%s'; the owner grants it with lfs.access",
		rq->who->name, what, sh->name, sh->owner, lib_access_name(need),
		lib_access_name(have));
}

/* One entry of lfs.access, "WHO:LEVEL": a node of the fabric or "@tenant"; ro, rw or all. */
static int grant_parse(struct req *rq, const char *v, char *who, size_t len, int *level)
{
	const char *colon = strrchr(v, ':');
	char b[120];
	int l;

	if (!colon || (size_t)(colon - v) >= len)
		goto bad;
	memcpy(who, v, colon - v);
	who[colon - v] = 0;
	for (l = ACC_RO; l <= ACC_ALL; l++)
		if (!strcmp(colon + 1, level_names[l]))
			break;
	if (l > ACC_ALL)
		goto bad;
	*level = l;
	if (who[0] == '@' ? lib_config_find_tenant(rq->c, who + 1) >= 0 :
			    lib_config_find_node(rq->c, who) >= 0)
		return 0;
	return FAIL(rq, EINVAL, "lfs.access: '%s' is not a %s of librarian.conf",
		    lib_shown(who, b, sizeof(b)), who[0] == '@' ? "tenant" : "node");
bad:
	return FAIL(rq, EINVAL,
		    "lfs.access: '%s' must be NODE:LEVEL or @TENANT:LEVEL, LEVEL ro, rw or all",
		    lib_shown(v, b, sizeof(b)));
}

/* lfs.access as a JSON array of "WHO:LEVEL", or that text comma-separated. */
static json_t *grants_array(struct req *rq, json_t *v)
{
	json_t *arr;
	const char *p;

	if (!json_is_string(v))
		return json_is_array(v) ? json_incref(v) : NULL;
	arr = json_array();
	for (p = json_string_value(v); *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		json_array_append_new(arr, json_stringn(p, l));
		p += l + (c ? 1 : 0);
	}
	return arr;
}

/* Replace the shelf's access list; an empty list removes it. */
int lib_access_set(struct req *rq, int64_t shelf, json_t *v)
{
	json_t *arr = grants_array(rq, v), *el;
	size_t i;
	int r = 0;

	if (!arr || json_array_size(arr) > LIB_GRANTS_MAX) {
		json_decref(arr);
		return FAIL(rq, EINVAL, "lfs.access must be a list of at most %d NODE:LEVEL",
			    LIB_GRANTS_MAX);
	}
	if ((r = lib_store_access_clear(rq->s, shelf, &rq->err)) < 0)
		goto out;
	json_array_foreach(arr, i, el) {
		char who[LFS_NODE_NAME_MAX + 2];
		int level = ACC_NONE, old = ACC_NONE;

		if (!json_is_string(el))
			r = FAIL(rq, EINVAL, "lfs.access must be a list of strings NODE:LEVEL");
		else if ((r = grant_parse(rq, json_string_value(el), who, sizeof(who), &level)) ==
				 0 &&
			 (r = lib_store_access_level(rq->s, shelf, who, NULL, &old, &rq->err)) == 0)
			r = old ? FAIL(rq, EINVAL, "lfs.access names '%s' twice", who) :
				  lib_store_access_put(rq->s, shelf, who, level, &rq->err);
		if (r < 0)
			break;
	}
out:
	json_decref(arr);
	return r;
}

static int grant_text(void *arg, const char *who, int level)
{
	json_array_append_new(arg, json_sprintf("%s:%s", who, lib_access_name(level)));
	return 0;
}

/* The access list as an array of "WHO:LEVEL" (empty if none). */
json_t *lib_access_list(struct req *rq, int64_t shelf)
{
	json_t *a = json_array();

	if (lib_store_access_each(rq->s, shelf, grant_text, a, &rq->err) < 0)
		json_array_clear(a);
	return a;
}

/* The stored "who:N,who:N" of a shelf row as an array of "WHO:LEVEL". */
json_t *lib_access_from_text(const char *text)
{
	json_t *a = json_array();
	char *dup = text ? strdup(text) : NULL, *save = NULL, *tok;

	for (tok = dup ? strtok_r(dup, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');

		if (!colon)
			continue;
		*colon = 0;
		json_array_append_new(a,
				      json_sprintf("%s:%s", tok, lib_access_name(atoi(colon + 1))));
	}
	free(dup);
	return a;
}
