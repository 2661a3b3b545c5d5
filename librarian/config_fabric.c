// SPDX-License-Identifier: GPL-2.0
/*
 * The fabric group of librarian.conf: racks of enclosures of nodes, each
 * node with a power domain, a key and its memory modules (IGs), given one by
 * one ("racks") or as counts ("compact"). Node keys are read here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_read.h"

static int add_str(char ***arr, int *n, const char *v)
{
	char **na = realloc(*arr, (*n + 1) * sizeof(**arr));

	if (!na)
		return -ENOMEM;
	*arr = na;
	na[*n] = strdup(v);
	if (!na[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int power_index(struct cfg_parse *p, const char *name)
{
	struct lib_config *c = p->cfg;

	for (int i = 0; i < c->npowers; i++)
		if (!strcmp(c->powers[i], name))
			return i;
	if (add_str(&c->powers, &c->npowers, name) < 0)
		return lib_fail(p->e, ENOMEM, "out of memory");
	return c->npowers - 1;
}

static int add_rack(struct cfg_parse *p, const config_setting_t *s, const char *name)
{
	struct lib_config *c = p->cfg;

	for (int i = 0; i < c->nracks; i++)
		if (!strcmp(c->racks[i], name))
			return lib_cfg_fail(p, s, "duplicate rack name '%s'", name);
	if (add_str(&c->racks, &c->nracks, name) < 0)
		return lib_fail(p->e, ENOMEM, "out of memory");
	return c->nracks - 1;
}

static int add_enc(struct cfg_parse *p, const config_setting_t *s, const char *name, int rack)
{
	struct lib_config *c = p->cfg;
	struct lib_enc *ne;

	for (int i = 0; i < c->nencs; i++)
		if (c->encs[i].rack == rack && !strcmp(c->encs[i].name, name))
			return lib_cfg_fail(p, s, "duplicate enclosure name '%s' in rack '%s'",
					    name, c->racks[rack]);
	ne = realloc(c->encs, (c->nencs + 1) * sizeof(*ne));
	if (!ne)
		return lib_fail(p->e, ENOMEM, "out of memory");
	c->encs = ne;
	ne[c->nencs].name = strdup(name);
	ne[c->nencs].rack = rack;
	if (!ne[c->nencs].name)
		return lib_fail(p->e, ENOMEM, "out of memory");
	return c->nencs++;
}

static int load_node_key(struct cfg_parse *p, const config_setting_t *s, struct lib_node *n,
			 const char *key_file)
{
	char msg[300], path[PATH_MAX];
	char *full;
	int r;

	if (key_file) {
		full = lib_cfg_path(p, key_file);
		if (!full)
			return lib_fail(p->e, ENOMEM, "out of memory");
		r = lfs_lib_read_key(full, n->key, sizeof(n->key), msg, sizeof(msg));
		free(full);
		if (r < 0)
			return lib_cfg_fail(p, s, "node '%s': %s", n->name, msg);
		n->keylen = r;
		return 0;
	}
	if (!p->keys_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s.key", p->keys_dir, n->name);
	r = lfs_lib_read_key(path, n->key, sizeof(n->key), msg, sizeof(msg));
	if (r == -ENOENT)
		return 0; /* this node cannot use TLS until it has a key */
	if (r < 0)
		return lib_cfg_fail(p, s, "node '%s': %s", n->name, msg);
	n->keylen = r;
	return 0;
}

static int add_node(struct cfg_parse *p, const config_setting_t *s, const char *name, int rack,
		    int enc, const char *power, const char *key_file)
{
	struct lib_config *c = p->cfg;
	struct lib_node *nn;
	int r;

	if (lib_config_find_node(c, name) >= 0)
		return lib_cfg_fail(p, s, "duplicate node name '%s'", name);
	if (c->nnodes >= LIB_MAX_NODES)
		return lib_cfg_fail(p, s, "too many nodes (at most %d)", LIB_MAX_NODES);
	/*
	 * The admin's shelves are owned by its name, "admin" without an admin
	 * group (the admin socket's identity): a node of that name would own them.
	 */
	if ((c->admin_name && !strcmp(c->admin_name, name)) || !strcmp(name, "admin"))
		return lib_cfg_fail(
			p, s,
			"node name '%s' is reserved for the admin identity (it owns the admin's shelves): rename the node",
			name);
	nn = realloc(c->nodes, (c->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return lib_fail(p->e, ENOMEM, "out of memory");
	c->nodes = nn;
	nn = &c->nodes[c->nnodes];
	memset(nn, 0, sizeof(*nn));
	nn->name = strdup(name);
	if (!nn->name)
		return lib_fail(p->e, ENOMEM, "out of memory");
	nn->rack = rack;
	nn->enc = enc;
	nn->tenant = -1;
	c->nnodes++;
	r = power_index(p, power);
	if (r < 0)
		return r;
	nn->power = r;
	r = load_node_key(p, s, nn, key_file);
	if (r < 0)
		return r;
	return c->nnodes - 1;
}

static int add_ig(struct cfg_parse *p, const config_setting_t *s, int node, long long ig,
		  uint64_t books)
{
	struct lib_config *c = p->cfg;
	struct lib_node *n = &c->nodes[node];
	struct lib_ig *ni;
	char msg[200];
	int *nl;

	if (lfs_rule_ig(ig, "IG", msg, sizeof(msg)) < 0)
		return lib_cfg_fail(p, s, "%s", msg);
	if (lib_config_find_ig(c, ig) >= 0)
		return lib_cfg_fail(p, s, "IG %lld is defined twice (second time on node '%s')", ig,
				    n->name);
	if (books == 0 || books > LIB_MAX_IG_BOOKS)
		return lib_cfg_fail(p, s, "IG %lld: %llu books is out of range [1, %llu]", ig,
				    (unsigned long long)books,
				    (unsigned long long)LIB_MAX_IG_BOOKS);
	ni = realloc(c->igs, (c->nigs + 1) * sizeof(*ni));
	if (!ni)
		return lib_fail(p->e, ENOMEM, "out of memory");
	c->igs = ni;
	nl = realloc(n->igs, (n->nigs + 1) * sizeof(*nl));
	if (!nl)
		return lib_fail(p->e, ENOMEM, "out of memory");
	n->igs = nl;
	nl[n->nigs++] = c->nigs;
	ni[c->nigs].ig = ig;
	ni[c->nigs].node = node;
	ni[c->nigs].books = books;
	c->ig_index[ig] = c->nigs + 1;
	c->nigs++;
	c->total_books += books;
	return 0;
}

static int ig_books(struct cfg_parse *p, const config_setting_t *s, uint64_t *books)
{
	const config_setting_t *b = config_setting_get_member(s, "books");
	const config_setting_t *sz = config_setting_get_member(s, "size");
	uint64_t bytes;
	int r;

	if (!!b == !!sz)
		return lib_cfg_fail(p, s,
				    "give exactly one of 'books' or 'size' for a memory module");
	if (b) {
		if (config_setting_type(b) != CONFIG_TYPE_INT &&
		    config_setting_type(b) != CONFIG_TYPE_INT64)
			return lib_cfg_fail(p, b, "'books' must be an integer");
		if (config_setting_get_int64(b) <= 0)
			return lib_cfg_fail(p, b, "'books' = %lld must be positive",
					    (long long)config_setting_get_int64(b));
		*books = config_setting_get_int64(b);
		return 0;
	}
	r = lib_cfg_size(p, sz, "memory module size", &bytes);
	if (r < 0)
		return r;
	if (bytes % p->cfg->book_size)
		return lib_cfg_fail(
			p, sz, "memory module size %llu is not a multiple of the book size %llu",
			(unsigned long long)bytes, (unsigned long long)p->cfg->book_size);
	*books = bytes / p->cfg->book_size;
	return 0;
}

static int parse_node(struct cfg_parse *p, const config_setting_t *s, int rack, int enc,
		      long long *next_ig)
{
	static const char *const known[] = { "name", "power_domain", "key_file", "igs", NULL };
	const config_setting_t *igs;
	const char *name = NULL, *power = NULL, *key = NULL;
	int r, node, n;

	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, s, "a node must be a group { name = ...; igs = (...); }");
	r = lib_cfg_known(p, s, known);
	if (r < 0)
		return r;
	if ((r = lib_cfg_string(p, s, "name", &name, true)) < 0 ||
	    (r = lib_cfg_name(p, s, "node name", name)) < 0 ||
	    (r = lib_cfg_string(p, s, "power_domain", &power, false)) < 0 ||
	    (r = lib_cfg_string(p, s, "key_file", &key, false)) < 0)
		return r;
	node = add_node(p, s, name, rack, enc, power ? power : name, key);
	if (node < 0)
		return node;
	igs = config_setting_get_member(s, "igs");
	if (!igs || config_setting_type(igs) != CONFIG_TYPE_LIST || !config_setting_length(igs))
		return lib_cfg_fail(
			p, igs ? igs : s,
			"node '%s' needs 'igs', a list of memory modules ( { ig = N; books = N; } )",
			name);
	n = config_setting_length(igs);
	for (int i = 0; i < n; i++) {
		static const char *const kig[] = { "ig", "books", "size", NULL };
		const config_setting_t *m = config_setting_get_elem(igs, i);
		long long ig = *next_ig;
		uint64_t books;

		if (config_setting_type(m) != CONFIG_TYPE_GROUP)
			return lib_cfg_fail(
				p, m, "a memory module must be a group { ig = N; books = N; }");
		if ((r = lib_cfg_known(p, m, kig)) < 0 ||
		    (r = lib_cfg_int(p, m, "ig", LLONG_MIN, LLONG_MAX, &ig, false)) < 0 ||
		    (r = ig_books(p, m, &books)) < 0 || (r = add_ig(p, m, node, ig, books)) < 0)
			return r;
		*next_ig = ig + 1;
	}
	return 0;
}

int lib_config_parse_racks(struct cfg_parse *p, const config_setting_t *racks)
{
	long long next_ig = 0;
	int r;

	if (config_setting_type(racks) != CONFIG_TYPE_LIST || !config_setting_length(racks))
		return lib_cfg_fail(
			p, racks,
			"'racks' must be a non-empty list ( { name = ...; enclosures = (...); } )");
	for (int i = 0; i < config_setting_length(racks); i++) {
		static const char *const kr[] = { "name", "enclosures", NULL };
		const config_setting_t *rs = config_setting_get_elem(racks, i);
		const config_setting_t *encs;
		const char *name = NULL;
		int rack;

		if (config_setting_type(rs) != CONFIG_TYPE_GROUP)
			return lib_cfg_fail(
				p, rs,
				"a rack must be a group { name = ...; enclosures = (...); }");
		if ((r = lib_cfg_known(p, rs, kr)) < 0 ||
		    (r = lib_cfg_string(p, rs, "name", &name, true)) < 0 ||
		    (r = lib_cfg_name(p, rs, "rack name", name)) < 0)
			return r;
		rack = add_rack(p, rs, name);
		if (rack < 0)
			return rack;
		encs = config_setting_get_member(rs, "enclosures");
		if (!encs || config_setting_type(encs) != CONFIG_TYPE_LIST ||
		    !config_setting_length(encs))
			return lib_cfg_fail(p, encs ? encs : rs,
					    "rack '%s' needs 'enclosures', a non-empty list", name);
		for (int j = 0; j < config_setting_length(encs); j++) {
			static const char *const ke[] = { "name", "nodes", NULL };
			const config_setting_t *es = config_setting_get_elem(encs, j);
			const config_setting_t *nodes;
			const char *ename = NULL;
			int enc;

			if (config_setting_type(es) != CONFIG_TYPE_GROUP)
				return lib_cfg_fail(
					p, es,
					"an enclosure must be a group { name = ...; nodes = (...); }");
			if ((r = lib_cfg_known(p, es, ke)) < 0 ||
			    (r = lib_cfg_string(p, es, "name", &ename, true)) < 0 ||
			    (r = lib_cfg_name(p, es, "enclosure name", ename)) < 0)
				return r;
			enc = add_enc(p, es, ename, rack);
			if (enc < 0)
				return enc;
			nodes = config_setting_get_member(es, "nodes");
			if (!nodes || config_setting_type(nodes) != CONFIG_TYPE_LIST ||
			    !config_setting_length(nodes))
				return lib_cfg_fail(
					p, nodes ? nodes : es,
					"enclosure '%s' needs 'nodes', a non-empty list", ename);
			for (int k = 0; k < config_setting_length(nodes); k++) {
				r = parse_node(p, config_setting_get_elem(nodes, k), rack, enc,
					       &next_ig);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

/* A whole fabric in one line: counts per parent, generated names. */
int lib_config_parse_compact(struct cfg_parse *p, const config_setting_t *s)
{
	static const char *const known[] = { "racks", "enclosures", "nodes",	    "igs",
					     "books", "size",	    "power_domain", NULL };
	long long racks = 1, encs = 1, nodes = 0, igs = 1;
	const char *pd = "node";
	const config_setting_t *b = config_setting_get_member(s, "books");
	uint64_t books;
	long long ig = 0;
	int r, nodeno = 0;
	char name[64], pname[64];

	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, s,
				    "'compact' must be a group { nodes = 40; books = 1000; }");
	if ((r = lib_cfg_known(p, s, known)) < 0 ||
	    (r = lib_cfg_int(p, s, "racks", 1, 1024, &racks, false)) < 0 ||
	    (r = lib_cfg_int(p, s, "enclosures", 1, 1024, &encs, false)) < 0 ||
	    (r = lib_cfg_int(p, s, "nodes", 1, LIB_MAX_NODES, &nodes, true)) < 0 ||
	    (r = lib_cfg_int(p, s, "igs", 1, 64, &igs, false)) < 0 ||
	    (r = lib_cfg_string(p, s, "power_domain", &pd, false)) < 0 ||
	    (r = ig_books(p, s, &books)) < 0)
		return r;
	(void)b;
	if (strcmp(pd, "node") && strcmp(pd, "enclosure") && strcmp(pd, "rack"))
		return lib_cfg_fail(p, config_setting_get_member(s, "power_domain"),
				    "power_domain '%s' must be \"node\", \"enclosure\" or \"rack\"",
				    pd);
	if (racks * encs * nodes > LIB_MAX_NODES || racks * encs * nodes * igs > LIB_MAX_IGS)
		return lib_cfg_fail(p, s, "compact fabric of %lld nodes x %lld IGs is too large",
				    racks * encs * nodes, igs);
	for (int i = 0; i < racks; i++) {
		snprintf(name, sizeof(name), "rack%d", i + 1);
		int rack = add_rack(p, s, name);

		if (rack < 0)
			return rack;
		for (int j = 0; j < encs; j++) {
			snprintf(name, sizeof(name), "enc%d", j + 1);
			int enc = add_enc(p, s, name, rack);

			if (enc < 0)
				return enc;
			for (int k = 0; k < nodes; k++) {
				int node;

				nodeno++;
				snprintf(name, sizeof(name), "node%02d", nodeno);
				if (!strcmp(pd, "node"))
					snprintf(pname, sizeof(pname), "%s", name);
				else if (!strcmp(pd, "enclosure"))
					snprintf(pname, sizeof(pname), "rack%d-enc%d", i + 1,
						 j + 1);
				else
					snprintf(pname, sizeof(pname), "rack%d", i + 1);
				node = add_node(p, s, name, rack, enc, pname, NULL);
				if (node < 0)
					return node;
				for (int m = 0; m < igs; m++) {
					r = add_ig(p, s, node, ig++, books);
					if (r < 0)
						return r;
				}
			}
		}
	}
	return 0;
}
