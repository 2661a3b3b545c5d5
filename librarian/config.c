// SPDX-License-Identifier: GPL-2.0
/*
 * librarian.conf parsing (libconfig). Every error names file:line and the
 * offending value; unknown settings are refused so typos do not pass silently.
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "librarian.h"

int lib_fail(struct lib_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		e->err = err;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -err;
}

struct cfg_parse {
	config_t lc;
	struct lib_config *cfg;
	struct lib_err *e;
	char *dir;		/* directory of the config file, for relative paths */
	char *keys_dir;
};

static const char *src_file(struct cfg_parse *p, const config_setting_t *s)
{
	const char *f = s ? config_setting_source_file(s) : NULL;

	return f ? f : p->cfg->path;
}

static int cfail(struct cfg_parse *p, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int cfail(struct cfg_parse *p, const config_setting_t *s, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return lib_fail(p->e, EINVAL, "%s:%d: %s", src_file(p, s),
			s ? config_setting_source_line(s) : 0, buf);
}

static char *resolve_path(struct cfg_parse *p, const char *v)
{
	char *out;

	if (v[0] == '/' || !p->dir)
		return strdup(v);
	if (asprintf(&out, "%s/%s", p->dir, v) < 0)
		return NULL;
	return out;
}

/* Refuse settings we do not know: a typo must not be silently ignored. */
static int check_known(struct cfg_parse *p, const config_setting_t *grp,
		       const char *const *known)
{
	int n = config_setting_length(grp);

	for (int i = 0; i < n; i++) {
		const config_setting_t *c = config_setting_get_elem(grp, i);
		const char *name = config_setting_name(c);
		int k;

		if (!name)
			continue;
		for (k = 0; known[k]; k++)
			if (!strcmp(known[k], name))
				break;
		if (!known[k])
			return cfail(p, c, "unknown setting '%s' in '%s'", name,
				     config_setting_name(grp) ? config_setting_name(grp) : "(top)");
	}
	return 0;
}

static int get_string(struct cfg_parse *p, const config_setting_t *grp, const char *name,
		      const char **out, bool required)
{
	const config_setting_t *s = config_setting_get_member(grp, name);

	if (!s) {
		if (required)
			return cfail(p, grp, "missing setting '%s'", name);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return cfail(p, s, "'%s' must be a string", name);
	*out = config_setting_get_string(s);
	if (!**out)
		return cfail(p, s, "'%s' must not be empty", name);
	return 0;
}

static int get_int(struct cfg_parse *p, const config_setting_t *grp, const char *name,
		   long long lo, long long hi, long long *out, bool required)
{
	const config_setting_t *s = config_setting_get_member(grp, name);
	long long v;

	if (!s) {
		if (required)
			return cfail(p, grp, "missing setting '%s'", name);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return cfail(p, s, "'%s' must be an integer", name);
	v = config_setting_get_int64(s);
	if (v < lo || v > hi)
		return cfail(p, s, "'%s' = %lld is out of range [%lld, %lld]", name, v, lo, hi);
	*out = v;
	return 0;
}

/* A size: integer bytes or a string such as "8G". */
static int get_size(struct cfg_parse *p, const config_setting_t *s, const char *what,
		    uint64_t *out)
{
	int t = config_setting_type(s);

	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long v = config_setting_get_int64(s);

		if (v <= 0)
			return cfail(p, s, "%s %lld must be positive", what, v);
		*out = v;
		return 0;
	}
	if (t == CONFIG_TYPE_STRING) {
		const char *v = config_setting_get_string(s);
		struct lfs_size sz;
		char msg[300];

		if (lfs_size_parse(v, LFS_SIZE_BARE, &sz, msg, sizeof(msg)) < 0)
			return cfail(p, s, "%s '%s' is not a size: %s", what, v, msg);
		*out = sz.value;
		return 0;
	}
	return cfail(p, s, "%s must be a size such as \"8G\"", what);
}

/*
 * Node names follow the shared rule (they are PSK identities and appear in
 * every component); the admin's name, racks and enclosures follow it too.
 */
static int check_name(struct cfg_parse *p, const config_setting_t *s, const char *what,
		      const char *v)
{
	char msg[300];
	const char *rest = msg;

	if (!lfs_rule_node_name(v, msg, sizeof(msg)))
		return 0;
	/* the rule's message starts "node name": say which name it is */
	if (!strncmp(msg, "node name", 9))
		rest = msg + 9;
	return cfail(p, s, "%s%s", what, rest);
}

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
			return cfail(p, s, "duplicate rack name '%s'", name);
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
			return cfail(p, s, "duplicate enclosure name '%s' in rack '%s'", name,
				     c->racks[rack]);
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
		full = resolve_path(p, key_file);
		if (!full)
			return lib_fail(p->e, ENOMEM, "out of memory");
		r = lfs_lib_read_key(full, n->key, sizeof(n->key), msg, sizeof(msg));
		free(full);
		if (r < 0)
			return cfail(p, s, "node '%s': %s", n->name, msg);
		n->keylen = r;
		return 0;
	}
	if (!p->keys_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s.key", p->keys_dir, n->name);
	r = lfs_lib_read_key(path, n->key, sizeof(n->key), msg, sizeof(msg));
	if (r == -ENOENT)
		return 0;	/* this node cannot use TLS until it has a key */
	if (r < 0)
		return cfail(p, s, "node '%s': %s", n->name, msg);
	n->keylen = r;
	return 0;
}

static int add_node(struct cfg_parse *p, const config_setting_t *s, const char *name,
		    int rack, int enc, const char *power, const char *key_file)
{
	struct lib_config *c = p->cfg;
	struct lib_node *nn;
	int r;

	if (lib_config_find_node(c, name) >= 0)
		return cfail(p, s, "duplicate node name '%s'", name);
	if (c->nnodes >= LIB_MAX_NODES)
		return cfail(p, s, "too many nodes (at most %d)", LIB_MAX_NODES);
	if (c->admin_name && !strcmp(c->admin_name, name))
		return cfail(p, s, "node name '%s' is the admin identity's name", name);
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
		return cfail(p, s, "%s", msg);
	if (lib_config_find_ig(c, ig) >= 0)
		return cfail(p, s, "IG %lld is defined twice (second time on node '%s')", ig,
			     n->name);
	if (books == 0 || books > LIB_MAX_IG_BOOKS)
		return cfail(p, s, "IG %lld: %llu books is out of range [1, %llu]", ig,
			     (unsigned long long)books, (unsigned long long)LIB_MAX_IG_BOOKS);
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
		return cfail(p, s, "give exactly one of 'books' or 'size' for a memory module");
	if (b) {
		if (config_setting_type(b) != CONFIG_TYPE_INT &&
		    config_setting_type(b) != CONFIG_TYPE_INT64)
			return cfail(p, b, "'books' must be an integer");
		if (config_setting_get_int64(b) <= 0)
			return cfail(p, b, "'books' = %lld must be positive",
				     (long long)config_setting_get_int64(b));
		*books = config_setting_get_int64(b);
		return 0;
	}
	r = get_size(p, sz, "memory module size", &bytes);
	if (r < 0)
		return r;
	if (bytes % p->cfg->book_size)
		return cfail(p, sz, "memory module size %llu is not a multiple of the book size %llu",
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
		return cfail(p, s, "a node must be a group { name = ...; igs = (...); }");
	r = check_known(p, s, known);
	if (r < 0)
		return r;
	if ((r = get_string(p, s, "name", &name, true)) < 0 ||
	    (r = check_name(p, s, "node name", name)) < 0 ||
	    (r = get_string(p, s, "power_domain", &power, false)) < 0 ||
	    (r = get_string(p, s, "key_file", &key, false)) < 0)
		return r;
	node = add_node(p, s, name, rack, enc, power ? power : name, key);
	if (node < 0)
		return node;
	igs = config_setting_get_member(s, "igs");
	if (!igs || config_setting_type(igs) != CONFIG_TYPE_LIST || !config_setting_length(igs))
		return cfail(p, igs ? igs : s,
			     "node '%s' needs 'igs', a list of memory modules ( { ig = N; books = N; } )",
			     name);
	n = config_setting_length(igs);
	for (int i = 0; i < n; i++) {
		static const char *const kig[] = { "ig", "books", "size", NULL };
		const config_setting_t *m = config_setting_get_elem(igs, i);
		long long ig = *next_ig;
		uint64_t books;

		if (config_setting_type(m) != CONFIG_TYPE_GROUP)
			return cfail(p, m, "a memory module must be a group { ig = N; books = N; }");
		if ((r = check_known(p, m, kig)) < 0 ||
		    (r = get_int(p, m, "ig", LLONG_MIN, LLONG_MAX, &ig, false)) < 0 ||
		    (r = ig_books(p, m, &books)) < 0 ||
		    (r = add_ig(p, m, node, ig, books)) < 0)
			return r;
		*next_ig = ig + 1;
	}
	return 0;
}

static int parse_explicit(struct cfg_parse *p, const config_setting_t *racks)
{
	long long next_ig = 0;
	int r;

	if (config_setting_type(racks) != CONFIG_TYPE_LIST || !config_setting_length(racks))
		return cfail(p, racks, "'racks' must be a non-empty list ( { name = ...; enclosures = (...); } )");
	for (int i = 0; i < config_setting_length(racks); i++) {
		static const char *const kr[] = { "name", "enclosures", NULL };
		const config_setting_t *rs = config_setting_get_elem(racks, i);
		const config_setting_t *encs;
		const char *name = NULL;
		int rack;

		if (config_setting_type(rs) != CONFIG_TYPE_GROUP)
			return cfail(p, rs, "a rack must be a group { name = ...; enclosures = (...); }");
		if ((r = check_known(p, rs, kr)) < 0 ||
		    (r = get_string(p, rs, "name", &name, true)) < 0 ||
		    (r = check_name(p, rs, "rack name", name)) < 0)
			return r;
		rack = add_rack(p, rs, name);
		if (rack < 0)
			return rack;
		encs = config_setting_get_member(rs, "enclosures");
		if (!encs || config_setting_type(encs) != CONFIG_TYPE_LIST ||
		    !config_setting_length(encs))
			return cfail(p, encs ? encs : rs, "rack '%s' needs 'enclosures', a non-empty list",
				     name);
		for (int j = 0; j < config_setting_length(encs); j++) {
			static const char *const ke[] = { "name", "nodes", NULL };
			const config_setting_t *es = config_setting_get_elem(encs, j);
			const config_setting_t *nodes;
			const char *ename = NULL;
			int enc;

			if (config_setting_type(es) != CONFIG_TYPE_GROUP)
				return cfail(p, es, "an enclosure must be a group { name = ...; nodes = (...); }");
			if ((r = check_known(p, es, ke)) < 0 ||
			    (r = get_string(p, es, "name", &ename, true)) < 0 ||
			    (r = check_name(p, es, "enclosure name", ename)) < 0)
				return r;
			enc = add_enc(p, es, ename, rack);
			if (enc < 0)
				return enc;
			nodes = config_setting_get_member(es, "nodes");
			if (!nodes || config_setting_type(nodes) != CONFIG_TYPE_LIST ||
			    !config_setting_length(nodes))
				return cfail(p, nodes ? nodes : es,
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
static int parse_compact(struct cfg_parse *p, const config_setting_t *s)
{
	static const char *const known[] = { "racks", "enclosures", "nodes", "igs", "books",
					     "size", "power_domain", NULL };
	long long racks = 1, encs = 1, nodes = 0, igs = 1;
	const char *pd = "node";
	const config_setting_t *b = config_setting_get_member(s, "books");
	uint64_t books;
	long long ig = 0;
	int r, nodeno = 0;
	char name[64], pname[64];

	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return cfail(p, s, "'compact' must be a group { nodes = 40; books = 1000; }");
	if ((r = check_known(p, s, known)) < 0 ||
	    (r = get_int(p, s, "racks", 1, 1024, &racks, false)) < 0 ||
	    (r = get_int(p, s, "enclosures", 1, 1024, &encs, false)) < 0 ||
	    (r = get_int(p, s, "nodes", 1, LIB_MAX_NODES, &nodes, true)) < 0 ||
	    (r = get_int(p, s, "igs", 1, 64, &igs, false)) < 0 ||
	    (r = get_string(p, s, "power_domain", &pd, false)) < 0 ||
	    (r = ig_books(p, s, &books)) < 0)
		return r;
	(void)b;
	if (strcmp(pd, "node") && strcmp(pd, "enclosure") && strcmp(pd, "rack"))
		return cfail(p, config_setting_get_member(s, "power_domain"),
			     "power_domain '%s' must be \"node\", \"enclosure\" or \"rack\"", pd);
	if (racks * encs * nodes > LIB_MAX_NODES || racks * encs * nodes * igs > LIB_MAX_IGS)
		return cfail(p, s, "compact fabric of %lld nodes x %lld IGs is too large",
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
					snprintf(pname, sizeof(pname), "rack%d-enc%d", i + 1, j + 1);
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

static int parse_librarian(struct cfg_parse *p, const config_setting_t *g)
{
	static const char *const known[] = {
		"database", "listen", "book_size", "heartbeat_interval", "lease_time",
		"default_policy", "max_connections", "max_message", "idle_timeout",
		"handshake_timeout", "max_shelves", "synchronous", "unix_mode", "keys_dir",
		"admin", NULL
	};
	struct lib_config *c = p->cfg;
	const config_setting_t *s;
	const char *v = NULL;
	long long n;
	int r;

	r = check_known(p, g, known);
	if (r < 0)
		return r;
	if ((r = get_string(p, g, "database", &v, false)) < 0)
		return r;
	if (v && !(c->db_path = resolve_path(p, v)))
		return lib_fail(p->e, ENOMEM, "out of memory");
	s = config_setting_get_member(g, "listen");
	if (s) {
		if (config_setting_type(s) == CONFIG_TYPE_STRING) {
			c->listen[c->nlisten++] = strdup(config_setting_get_string(s));
		} else if (config_setting_type(s) == CONFIG_TYPE_ARRAY ||
			   config_setting_type(s) == CONFIG_TYPE_LIST) {
			if (config_setting_length(s) > LIB_MAX_LISTEN)
				return cfail(p, s, "at most %d listen addresses", LIB_MAX_LISTEN);
			for (int i = 0; i < config_setting_length(s); i++) {
				const char *a = config_setting_get_string_elem(s, i);

				if (!a)
					return cfail(p, s, "'listen' must hold strings");
				c->listen[c->nlisten++] = strdup(a);
			}
		} else {
			return cfail(p, s, "'listen' must be a string or an array of strings");
		}
	}
	s = config_setting_get_member(g, "book_size");
	if (s) {
		char msg[200];

		r = get_size(p, s, "book_size", &c->book_size);
		if (r < 0)
			return r;
		if (lfs_rule_book_size(c->book_size, msg, sizeof(msg)) < 0)
			return cfail(p, s, "%s", msg);
	}
	n = c->heartbeat_interval;
	if ((r = get_int(p, g, "heartbeat_interval", 1, 3600, &n, false)) < 0)
		return r;
	c->heartbeat_interval = n;
	n = c->lease_time;
	if ((r = get_int(p, g, "lease_time", 1, 86400, &n, false)) < 0)
		return r;
	c->lease_time = n;
	if (c->lease_time <= c->heartbeat_interval)
		return cfail(p, g, "lease_time %d must be longer than heartbeat_interval %d",
			     c->lease_time, c->heartbeat_interval);
	n = c->max_connections;
	if ((r = get_int(p, g, "max_connections", 1, 65536, &n, false)) < 0)
		return r;
	c->max_connections = n;
	n = c->max_message;
	if ((r = get_int(p, g, "max_message", 4096, 64 << 20, &n, false)) < 0)
		return r;
	c->max_message = n;
	n = c->idle_timeout;
	if ((r = get_int(p, g, "idle_timeout", 1, 86400 * 7, &n, false)) < 0)
		return r;
	c->idle_timeout = n;
	n = c->handshake_timeout;
	if ((r = get_int(p, g, "handshake_timeout", 1, 3600, &n, false)) < 0)
		return r;
	c->handshake_timeout = n;
	n = c->max_shelves;
	if ((r = get_int(p, g, "max_shelves", 1, 100000000, &n, false)) < 0)
		return r;
	c->max_shelves = n;
	n = c->unix_mode;
	if ((r = get_int(p, g, "unix_mode", 0, 0777, &n, false)) < 0)
		return r;
	c->unix_mode = n;
	v = NULL;
	if ((r = get_string(p, g, "default_policy", &v, false)) < 0)
		return r;
	if (v && (lfs_policy_parse(v, &c->default_policy) < 0 ||
		  c->default_policy == LFS_POL_REQUEST_IG))
		return cfail(p, config_setting_get_member(g, "default_policy"),
			     "default_policy '%s' is not a policy usable as default (see librarian.conf(5))",
			     v);
	v = NULL;
	if ((r = get_string(p, g, "synchronous", &v, false)) < 0)
		return r;
	if (v) {
		if (!strcmp(v, "full"))
			c->sync_full = 1;
		else if (!strcmp(v, "normal"))
			c->sync_full = 0;
		else
			return cfail(p, config_setting_get_member(g, "synchronous"),
				     "synchronous '%s' must be \"full\" or \"normal\"", v);
	}
	v = NULL;
	if ((r = get_string(p, g, "keys_dir", &v, false)) < 0)
		return r;
	if (v && !(p->keys_dir = resolve_path(p, v)))
		return lib_fail(p->e, ENOMEM, "out of memory");
	s = config_setting_get_member(g, "admin");
	if (s) {
		static const char *const ka[] = { "name", "key_file", NULL };
		const char *name = "admin", *key = NULL;
		char msg[300];
		char *full;

		if (config_setting_type(s) != CONFIG_TYPE_GROUP)
			return cfail(p, s, "'admin' must be a group { name = \"admin\"; key_file = ...; }");
		if ((r = check_known(p, s, ka)) < 0 ||
		    (r = get_string(p, s, "name", &name, false)) < 0 ||
		    (r = check_name(p, s, "admin name", name)) < 0 ||
		    (r = get_string(p, s, "key_file", &key, true)) < 0)
			return r;
		c->admin_name = strdup(name);
		full = resolve_path(p, key);
		if (!c->admin_name || !full) {
			free(full);
			return lib_fail(p->e, ENOMEM, "out of memory");
		}
		r = lfs_lib_read_key(full, c->admin_key, sizeof(c->admin_key), msg, sizeof(msg));
		free(full);
		if (r < 0)
			return cfail(p, s, "admin: %s", msg);
		c->admin_keylen = r;
	}
	return 0;
}

int lib_config_load(const char *path, struct lib_config **out, struct lib_err *e)
{
	static const char *const ktop[] = { "librarian", "fabric", NULL };
	static const char *const kfab[] = { "racks", "compact", NULL };
	struct cfg_parse p = { 0 };
	struct lib_config *c;
	const config_setting_t *g, *racks, *compact;
	const char *slash;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return lib_fail(e, ENOMEM, "out of memory");
	c->path = strdup(path);
	c->ig_index = calloc(LIB_MAX_IGS, sizeof(*c->ig_index));
	if (!c->path || !c->ig_index) {
		lib_config_free(c);
		return lib_fail(e, ENOMEM, "out of memory");
	}
	c->book_size = 8ULL << 30;
	c->heartbeat_interval = 5;
	c->lease_time = 30;
	c->default_policy = LFS_POL_RANDOM_BOOKS;
	c->max_connections = 1024;
	c->max_message = LFS_MAX_MESSAGE_DEFAULT;
	c->idle_timeout = 900;
	c->handshake_timeout = 10;
	c->max_shelves = 1000000;
	c->sync_full = 1;
	c->unix_mode = 0600;
	p.cfg = c;
	p.e = e;
	slash = strrchr(path, '/');
	if (slash)
		p.dir = strndup(path, slash - path ? (size_t)(slash - path) : 1);
	config_init(&p.lc);
	if (!config_read_file(&p.lc, path)) {
		if (config_error_type(&p.lc) == CONFIG_ERR_FILE_IO)
			r = lib_fail(e, errno ? errno : EIO, "%s: cannot read: %s", path,
				     strerror(errno ? errno : EIO));
		else
			r = lib_fail(e, EINVAL, "%s:%d: %s",
				     config_error_file(&p.lc) ? config_error_file(&p.lc) : path,
				     config_error_line(&p.lc), config_error_text(&p.lc));
		goto out;
	}
	r = check_known(&p, config_root_setting(&p.lc), ktop);
	if (r < 0)
		goto out;
	g = config_lookup(&p.lc, "librarian");
	if (g) {
		if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
			r = cfail(&p, g, "'librarian' must be a group");
			goto out;
		}
		r = parse_librarian(&p, g);
		if (r < 0)
			goto out;
	}
	g = config_lookup(&p.lc, "fabric");
	if (!g || config_setting_type(g) != CONFIG_TYPE_GROUP) {
		r = cfail(&p, g, "missing group 'fabric' (racks or compact geometry)");
		goto out;
	}
	r = check_known(&p, g, kfab);
	if (r < 0)
		goto out;
	racks = config_setting_get_member(g, "racks");
	compact = config_setting_get_member(g, "compact");
	if (!!racks == !!compact) {
		r = cfail(&p, g, "'fabric' needs exactly one of 'racks' (explicit) or 'compact'");
		goto out;
	}
	r = racks ? parse_explicit(&p, racks) : parse_compact(&p, compact);
	if (r < 0)
		goto out;
	if (!c->db_path)
		c->db_path = strdup("/var/lib/lfs/librarian.db");
	if (!c->nlisten)
		c->listen[c->nlisten++] = strdup(LFS_DEFAULT_ADDR);
	*out = c;
	c = NULL;
	r = 0;
out:
	config_destroy(&p.lc);
	free(p.dir);
	free(p.keys_dir);
	lib_config_free(c);
	return r;
}

void lib_config_free(struct lib_config *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->db_path);
	for (int i = 0; i < c->nlisten; i++)
		free(c->listen[i]);
	free(c->admin_name);
	for (int i = 0; i < c->nracks; i++)
		free(c->racks[i]);
	free(c->racks);
	for (int i = 0; i < c->nencs; i++)
		free(c->encs[i].name);
	free(c->encs);
	for (int i = 0; i < c->npowers; i++)
		free(c->powers[i]);
	free(c->powers);
	for (int i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].igs);
	}
	free(c->nodes);
	free(c->igs);
	free(c->ig_index);
	free(c);
}

int lib_config_find_node(const struct lib_config *c, const char *name)
{
	for (int i = 0; i < c->nnodes; i++)
		if (!strcmp(c->nodes[i].name, name))
			return i;
	return -1;
}

int lib_config_find_ig(const struct lib_config *c, int64_t ig)
{
	if (ig < 0 || ig >= LIB_MAX_IGS)
		return -1;
	return c->ig_index[ig] - 1;
}
