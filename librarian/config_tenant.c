// SPDX-License-Identifier: GPL-2.0
/*
 * Who may see and use whose shelves, and how much they may hold: the
 * librarian group's share and node_quota, and the tenants list of
 * librarian.conf. A tenant is a group of nodes; each node is in at most one,
 * and nodes in none form the default tenant. A tenant's nodes see each
 * other's shelves and may use them as its share says; other tenants see
 * nothing of them (access.c).
 *
 *   tenants = ( { name = "blue"; nodes = [ "n1", "n2" ]; share = "rw";
 *		   quota = { books = 1000; shelves = 100; }; } );
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_read.h"

/* share: what a tenant's nodes may do with each other's shelves. */
static int parse_share(struct cfg_parse *p, const config_setting_t *grp, enum lib_access *out)
{
	static const struct {
		const char *name;
		enum lib_access acc;
	} shares[] = { { "see", ACC_SEE }, { "ro", ACC_RO }, { "rw", ACC_RW } };
	const char *v = NULL;
	int r = lib_cfg_string(p, grp, "share", &v, false);

	if (r < 0 || !v)
		return r;
	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
		if (!strcmp(v, shares[i].name)) {
			*out = shares[i].acc;
			return 0;
		}
	}
	return lib_cfg_fail(p, config_setting_get_member(grp, "share"),
			    "share '%s' must be \"see\", \"ro\" or \"rw\"", v);
}

/* quota = { books = N; shelves = N; }: both optional, none means no limit. */
static int parse_quota(struct cfg_parse *p, const config_setting_t *grp, const char *name,
		       struct lib_quota *q)
{
	static const char *const known[] = { "books", "shelves", NULL };
	const config_setting_t *s = config_setting_get_member(grp, name);
	long long books = -1, shelves = -1;
	int r;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, s, "'%s' must be a group { books = N; shelves = N; }", name);
	if ((r = lib_cfg_known(p, s, known)) < 0 ||
	    (r = lib_cfg_int(p, s, "books", 0, INT64_MAX / 2, &books, false)) < 0 ||
	    (r = lib_cfg_int(p, s, "shelves", 0, INT64_MAX / 2, &shelves, false)) < 0)
		return r;
	q->books = books;
	q->shelves = shelves;
	return 0;
}

int lib_cfg_access(struct cfg_parse *p, const config_setting_t *grp)
{
	int r = parse_share(p, grp, &p->cfg->share);

	return r < 0 ? r : parse_quota(p, grp, "node_quota", &p->cfg->node_quota);
}

/* nodes = [ "n1", ... ]: each a node of the fabric, in no other tenant. */
static int tenant_nodes(struct cfg_parse *p, const config_setting_t *s, int t)
{
	struct lib_config *c = p->cfg;
	const config_setting_t *ns = config_setting_get_member(s, "nodes");

	if (!ns || (config_setting_type(ns) != CONFIG_TYPE_ARRAY &&
		    config_setting_type(ns) != CONFIG_TYPE_LIST))
		return lib_cfg_fail(p, ns ? ns : s,
				    "tenant '%s' needs 'nodes', a list of node names",
				    c->tenants[t].name);
	for (int i = 0; i < config_setting_length(ns); i++) {
		const char *n = config_setting_get_string_elem(ns, i);
		int k = n ? lib_config_find_node(c, n) : -1;

		if (k < 0)
			return lib_cfg_fail(p, ns, "tenant '%s': '%s' is not a node of the fabric",
					    c->tenants[t].name, n ? n : "(not a string)");
		if (c->nodes[k].tenant >= 0)
			return lib_cfg_fail(p, ns, "node '%s' is in tenant '%s' and tenant '%s'", n,
					    c->tenants[c->nodes[k].tenant].name,
					    c->tenants[t].name);
		c->nodes[k].tenant = t;
	}
	return 0;
}

static int parse_tenant(struct cfg_parse *p, const config_setting_t *s)
{
	static const char *const known[] = { "name", "nodes", "share", "quota", NULL };
	struct lib_config *c = p->cfg;
	struct lib_tenant *nt;
	const char *name = NULL;
	int r;

	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, s,
				    "a tenant must be a group { name = ...; nodes = [...]; }");
	if ((r = lib_cfg_known(p, s, known)) < 0 ||
	    (r = lib_cfg_string(p, s, "name", &name, true)) < 0 ||
	    (r = lib_cfg_name(p, s, "tenant name", name)) < 0)
		return r;
	if (lib_config_find_tenant(c, name) >= 0)
		return lib_cfg_fail(p, s, "duplicate tenant name '%s'", name);
	nt = realloc(c->tenants, (c->ntenants + 1) * sizeof(*nt));
	if (!nt)
		return lib_fail(p->e, ENOMEM, "out of memory");
	c->tenants = nt;
	nt = &c->tenants[c->ntenants];
	memset(nt, 0, sizeof(*nt));
	nt->name = strdup(name);
	nt->share = ACC_SEE;
	nt->quota.books = nt->quota.shelves = -1;
	if (!nt->name)
		return lib_fail(p->e, ENOMEM, "out of memory");
	c->ntenants++;
	if ((r = parse_share(p, s, &nt->share)) < 0 ||
	    (r = parse_quota(p, s, "quota", &nt->quota)) < 0)
		return r;
	return tenant_nodes(p, s, c->ntenants - 1);
}

int lib_config_parse_tenants(struct cfg_parse *p, const config_setting_t *s)
{
	int r;

	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return lib_cfg_fail(p, s,
				    "'tenants' must be a list ( { name = ...; nodes = [...]; } )");
	for (int i = 0; i < config_setting_length(s); i++)
		if ((r = parse_tenant(p, config_setting_get_elem(s, i))) < 0)
			return r;
	return 0;
}
