// SPDX-License-Identifier: GPL-2.0
/*
 * lfs.conf (libconfig). Every error is "FILE:LINE: what, with the value";
 * unknown settings are errors too, so a typo never silently means "default".
 */
#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uapi/lfs.h>

#include "conf.h"
#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"

struct conf_err {
	char *msg;
	size_t len;
	const char *file;
};

static int conf_fail(struct conf_err *e, const config_setting_t *s, const char *fmt, ...)
	__printf(3, 4);

static int conf_fail(struct conf_err *e, const config_setting_t *s, const char *fmt, ...)
{
	const char *file = s ? config_setting_source_file(s) : NULL;
	int line = s ? (int)config_setting_source_line(s) : 0;
	size_t n;
	va_list ap;

	n = (size_t)snprintf(e->msg, e->len, "%s:%d: ", file ? file : e->file, line);
	if (n >= e->len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(e->msg + n, e->len - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int check_keys(struct conf_err *e, const config_setting_t *grp, const char *const *keys,
		      const char *where)
{
	int n = config_setting_length(grp);

	for (int i = 0; i < n; i++) {
		config_setting_t *s = config_setting_get_elem(grp, (unsigned int)i);
		const char *name = config_setting_name(s);
		bool ok = false;

		for (int k = 0; keys[k]; k++)
			ok |= name && !strcmp(name, keys[k]);
		if (!ok)
			return conf_fail(e, s, "unknown setting `%s'%s", name ? name : "?", where);
	}
	return 0;
}

/* The getters return 1 if the setting is there, 0 if not, or a negative errno. */
static int get_string(struct conf_err *e, const config_setting_t *grp, const char *key, char **out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	const char *v;

	if (!s)
		return 0;
	v = config_setting_get_string(s);
	if (!v)
		return conf_fail(e, s, "`%s' must be a string in double quotes", key);
	if (!*v)
		return conf_fail(e, s, "`%s' is empty", key);
	free(*out);
	*out = strdup(v);
	return *out ? 1 : -ENOMEM;
}

static int get_int(struct conf_err *e, const config_setting_t *grp, const char *key, int min,
		   int max, int *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	long long v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return conf_fail(e, s, "`%s' must be an integer", key);
	v = config_setting_get_int64(s);
	if (v < min || v > max)
		return conf_fail(e, s, "`%s' = %lld is out of range %d..%d", key, v, min, max);
	*out = (int)v;
	return 1;
}

static int get_bool(struct conf_err *e, const config_setting_t *grp, const char *key, bool *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return conf_fail(e, s, "`%s' must be true or false", key);
	*out = config_setting_get_bool(s);
	return 1;
}

/* A size in bytes: an integer, or a string in the shared SIZE syntax (a bare number is bytes). */
static int get_size(struct conf_err *e, const config_setting_t *grp, const char *key,
		    bool allow_zero, uint64_t *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	struct lfs_size sz;
	char m[256];
	const char *v;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT ||
	    config_setting_type(s) == CONFIG_TYPE_INT64) {
		long long n = config_setting_get_int64(s);

		if (n < 0 || (n == 0 && !allow_zero))
			return conf_fail(e, s, "`%s' = %lld is not a valid size", key, n);
		*out = (uint64_t)n;
		return 1;
	}
	v = config_setting_get_string(s);
	if (!v)
		return conf_fail(e, s, "`%s' must be a size such as \"2M\" or \"8G\"", key);
	if (lfs_size_parse(v, LFS_SIZE_BARE | (allow_zero ? LFS_SIZE_ZERO : 0), &sz, m, sizeof(m)))
		return conf_fail(e, s, "`%s': %s", key, m);
	*out = sz.value;
	return 1;
}

/* A policy name, any letter case; *out is the table's exact spelling. */
static int get_policy(struct conf_err *e, const config_setting_t *grp, const char *key,
		      const char **out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	enum lfs_policy p;
	const char *v, *hint;

	if (!s)
		return 0;
	v = config_setting_get_string(s);
	if (!v)
		return conf_fail(e, s, "`%s' must be a policy name in double quotes", key);
	if (lfs_policy_lookup(v, &p, &hint, NULL, 0)) {
		if (hint)
			return conf_fail(e, s, "unknown policy `%s'; did you mean `%s'?", v, hint);
		return conf_fail(e, s, "unknown policy `%s' (see lfs.conf(5) for the list)", v);
	}
	*out = lfs_policy_name(p);
	return 1;
}

/* ig = N: required, an IG number of the shared rules, and not mapped twice. */
static int fabric_ig(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *g, int i,
		     struct lfsvol_fabric_conf *f)
{
	char m[256];
	int ig, r;

	r = get_int(e, g, "ig", INT_MIN, INT_MAX, &ig);
	if (r < 0)
		return r;
	if (!r)
		return conf_fail(e, g, "fabric entry %d has no `ig'", i + 1);
	if (lfs_rule_ig(ig, "IG", m, sizeof(m)))
		return conf_fail(e, g, "%s", m);
	f->ig = (uint32_t)ig;
	for (int j = 0; j < c->nfabrics; j++)
		if (c->fabrics[j].ig == f->ig)
			return conf_fail(e, g, "IG %d is mapped twice (also at line %d)", ig,
					 c->fabrics[j].line);
	return 0;
}

/* Exactly one of device, by_path or numa_node says which device is the IG. */
static int fabric_selector(struct conf_err *e, const config_setting_t *g,
			   struct lfsvol_fabric_conf *f)
{
	int sel = 0, r;

	r = get_string(e, g, "device", &f->path);
	if (r < 0)
		return r;
	if (r) {
		sel++;
		f->sel = LFSVOL_SEL_PATH;
		if (f->path[0] != '/')
			return conf_fail(e, g, "device `%s' is not an absolute path", f->path);
	}
	r = get_string(e, g, "by_path", &f->path);
	if (r < 0)
		return r;
	if (r) {
		sel++;
		f->sel = LFSVOL_SEL_BY_PATH;
		if (strchr(f->path, '/'))
			return conf_fail(e, g,
					 "by_path `%s' must be a name under /dev/disk/by-path",
					 f->path);
	}
	r = get_int(e, g, "numa_node", 0, 4095, &f->numa_node);
	if (r < 0)
		return r;
	if (r) {
		sel++;
		f->sel = LFSVOL_SEL_NUMA;
	}
	if (sel != 1)
		return conf_fail(
			e, g,
			"fabric entry for IG %u needs exactly one of device, numa_node or by_path",
			f->ig);
	return 0;
}

static int fabric_entry(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *g, int i)
{
	static const char *const keys[] = { "ig",     "device", "numa_node", "by_path",
					    "offset", "force",	NULL };
	struct lfsvol_fabric_conf *f = &c->fabrics[c->nfabrics];
	int r;

	if (!config_setting_is_group(g))
		return conf_fail(e, g,
				 "fabric entry %d must be a group { ig = N; device = \"...\"; }",
				 i + 1);
	r = check_keys(e, g, keys,
		       " in a fabric entry (known: ig, device, numa_node, by_path, offset, force)");
	if (r)
		return r;
	f->line = (int)config_setting_source_line(g);
	f->numa_node = -1;
	/*
	 * Default data offset 2 MiB: a filesystem made on a shelf whose
	 * first book is the device's first book would otherwise look
	 * like a foreign signature of the fabric device itself.
	 */
	f->offset = 2ULL << 20;
	r = fabric_ig(e, c, g, i, f);
	if (!r)
		r = fabric_selector(e, g, f);
	if (r)
		return r;
	if (get_size(e, g, "offset", true, &f->offset) < 0)
		return -EINVAL;
	if (f->offset % (2ULL << 20))
		return conf_fail(e, g, "offset %llu of IG %u is not a multiple of 2 MiB",
				 (unsigned long long)f->offset, f->ig);
	if (get_bool(e, g, "force", &f->force) < 0)
		return -EINVAL;
	c->nfabrics++;
	return 0;
}

static int parse_fabric(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	int n, r;

	if (!config_setting_is_list(list) && !config_setting_is_array(list))
		return conf_fail(
			e, list,
			"`fabric' must be a list: fabric = ( { ig = 0; device = \"/dev/pmem0\"; } );");
	n = config_setting_length(list);
	if (n > LFSVOL_MAX_FABRICS)
		return conf_fail(e, list, "`fabric' has %d entries, at most %d are allowed", n,
				 LFSVOL_MAX_FABRICS);
	for (int i = 0; i < n; i++) {
		r = fabric_entry(e, c, config_setting_get_elem(list, (unsigned int)i), i);
		if (r)
			return r;
	}
	return 0;
}

/* igs = [0, 1]: the shelf's RequestIG list. */
static int shelf_igs(struct conf_err *e, const config_setting_t *g, struct lfsvol_shelf_conf *s)
{
	config_setting_t *igs = config_setting_get_member(g, "igs");

	if (!igs)
		return 0;
	if (!config_setting_is_array(igs) && !config_setting_is_list(igs))
		return conf_fail(e, igs, "`igs' must be an array such as [0, 1]");
	s->nigs = config_setting_length(igs);
	if (s->nigs > LFSVOL_MAX_IGS)
		return conf_fail(e, igs, "`igs' lists %d IGs, at most %d", s->nigs, LFSVOL_MAX_IGS);
	for (int k = 0; k < s->nigs; k++) {
		config_setting_t *v = config_setting_get_elem(igs, (unsigned int)k);
		char m[256];

		if (config_setting_type(v) != CONFIG_TYPE_INT)
			return conf_fail(e, igs, "`igs' entry %d is not an IG number", k + 1);
		if (lfs_rule_ig(config_setting_get_int(v), "IG", m, sizeof(m)))
			return conf_fail(e, igs, "`igs' entry %d: %s", k + 1, m);
		s->igs[k] = (uint32_t)config_setting_get_int(v);
	}
	return 0;
}

static int shelf_entry(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *g, int i)
{
	static const char *const keys[] = { "name", "policy", "igs", "auto_activate", NULL };
	struct lfsvol_shelf_conf *s = &c->shelves[c->nshelves];
	char m[256];
	int r;

	if (!config_setting_is_group(g))
		return conf_fail(e, g, "shelves entry %d must be a group { name = \"...\"; ... }",
				 i + 1);
	r = check_keys(e, g, keys, " in a shelves entry (known: name, policy, igs, auto_activate)");
	if (r)
		return r;
	s->line = (int)config_setting_source_line(g);
	r = get_string(e, g, "name", &s->name);
	if (r < 0)
		return r;
	if (!r)
		return conf_fail(e, g, "shelves entry %d has no `name'", i + 1);
	if (lfs_rule_shelf_name(s->name, m, sizeof(m)))
		return conf_fail(e, g, "%s", m);
	for (int j = 0; j < c->nshelves; j++)
		if (!strcmp(c->shelves[j].name, s->name))
			return conf_fail(e, g, "shelf `%s' is configured twice (also at line %d)",
					 s->name, c->shelves[j].line);
	if (get_policy(e, g, "policy", &s->policy) < 0 || shelf_igs(e, g, s) ||
	    get_bool(e, g, "auto_activate", &s->auto_activate) < 0)
		return -EINVAL;
	c->nshelves++;
	return 0;
}

static int parse_shelves(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	int n, r;

	if (!config_setting_is_list(list))
		return conf_fail(
			e, list,
			"`shelves' must be a list: shelves = ( { name = \"db\"; auto_activate = true; } );");
	n = config_setting_length(list);
	if (n > LFSVOL_MAX_SHELF_CONF)
		return conf_fail(e, list, "`shelves' has %d entries, at most %d are allowed", n,
				 LFSVOL_MAX_SHELF_CONF);
	for (int i = 0; i < n; i++) {
		r = shelf_entry(e, c, config_setting_get_elem(list, (unsigned int)i), i);
		if (r)
			return r;
	}
	return 0;
}

static int parse_agent(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *s)
{
	static const char *const keys[] = { "state_dir", "scrub_batch", "check_free",
					    "check_interval", NULL };
	int r;

	if (!config_setting_is_group(s))
		return conf_fail(e, s, "`agent' must be a group { state_dir = \"...\"; }");
	r = check_keys(e, s, keys,
		       " in agent (known: state_dir, scrub_batch, check_free, check_interval)");
	if (r)
		return r;
	if (get_string(e, s, "state_dir", &c->state_dir) < 0 ||
	    get_int(e, s, "scrub_batch", 1, 8191, &c->scrub_batch) < 0 ||
	    get_bool(e, s, "check_free", &c->check_free) < 0 ||
	    get_int(e, s, "check_interval", 10, 86400, &c->check_interval) < 0)
		return -EINVAL;
	return 0;
}

/* fence_action = "reset" | "eio" (docs/FENCING.md). */
static int get_fence_action(struct conf_err *e, const config_setting_t *root, int *out)
{
	config_setting_t *s = config_setting_get_member(root, "fence_action");
	const char *v;

	if (!s)
		return 0;
	v = config_setting_get_string(s);
	if (!v || (strcmp(v, "reset") && strcmp(v, "eio")))
		return conf_fail(
			e, s,
			"`fence_action' must be \"reset\" (restart the node if a fenced shelf is open) or \"eio\" (fail its I/O only)%s%s%s",
			v ? ", not `" : "", v ? v : "", v ? "'" : "");
	*out = strcmp(v, "eio") ? LFS_FENCE_RESET : LFS_FENCE_EIO;
	return 1;
}

/* The list checked (lfs_lib_addr_split) and kept as "A,B" without blanks. */
int lfsvol_librarian_list(const char *list, char **out, char *msg, size_t len)
{
	char a[LFS_ADDR_LIST_MAX][LFS_ADDR_MAX];
	int n = lfs_lib_addr_split(list, a, LFS_ADDR_LIST_MAX, msg, len);
	size_t o = 0;
	char *j;

	if (n < 0)
		return n;
	j = malloc((size_t)n * LFS_ADDR_MAX);
	if (!j)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		o += (size_t)sprintf(j + o, "%s%s", i ? "," : "", a[i]);
	free(*out);
	*out = j;
	return 0;
}

/*
 * librarian = "HOST:PORT"; or a list of librarians (docs/HA.md, "Nodes
 * follow the leader"): "A:P, B:P" or ["A:P", "B:P"].
 */
static int get_librarian(struct conf_err *e, const config_setting_t *root, char **out)
{
	config_setting_t *s = config_setting_get_member(root, "librarian");
	char list[LFS_ADDR_LIST_MAX * LFS_ADDR_MAX] = "", m[512];
	size_t o = 0;
	int n, r;

	if (!s)
		return 0;
	if (config_setting_is_aggregate(s)) {
		n = config_setting_length(s);
		if (n < 1 || n > LFS_ADDR_LIST_MAX)
			return conf_fail(e, s, "`librarian' must list 1 to %d addresses, not %d",
					 LFS_ADDR_LIST_MAX, n);
		for (int i = 0; i < n; i++) {
			const char *v = config_setting_get_string_elem(s, i);

			if (!v)
				return conf_fail(e, s, "`librarian' entry %d must be a string",
						 i + 1);
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? "," : "", v);
		}
	} else if (config_setting_get_string(s)) {
		snprintf(list, sizeof(list), "%s", config_setting_get_string(s));
	} else {
		return conf_fail(e, s,
				 "`librarian' must be a string in double quotes or a list of them");
	}
	r = lfsvol_librarian_list(list, out, m, sizeof(m));
	if (r == -EINVAL)
		return conf_fail(e, s, "%s", m);
	return r < 0 ? r : 1;
}

/* The top-level settings, but the groups and lists. */
static int parse_top(struct conf_err *e, struct lfsvol_conf *c, config_setting_t *root)
{
	char m[256];

	if (get_librarian(e, root, &c->librarian) < 0 ||
	    get_string(e, root, "node", &c->node) < 0 ||
	    get_string(e, root, "key_file", &c->key_file) < 0 ||
	    get_int(e, root, "connect_timeout", 1, 300, &c->connect_timeout) < 0 ||
	    get_int(e, root, "reply_timeout", 1, 3600, &c->reply_timeout) < 0 ||
	    get_int(e, root, "process_priority", -20, 19, &c->process_priority) < 0 ||
	    get_policy(e, root, "default_policy", &c->default_policy) < 0 ||
	    get_size(e, root, "book_size", false, &c->book_size) < 0 ||
	    get_fence_action(e, root, &c->fence_action) < 0)
		return -EINVAL;
	if (c->node && lfs_rule_node_name(c->node, m, sizeof(m)))
		return conf_fail(e, config_setting_get_member(root, "node"), "%s", m);
	if (c->book_size && lfs_rule_book_size(c->book_size, m, sizeof(m)))
		return conf_fail(e, config_setting_get_member(root, "book_size"), "%s", m);
	return 0;
}

static int conf_parse(struct conf_err *e, struct lfsvol_conf *c, config_t *cf)
{
	static const char *const top[] = { "librarian",
					   "node",
					   "key_file",
					   "connect_timeout",
					   "reply_timeout",
					   "default_policy",
					   "book_size",
					   "process_priority",
					   "fence_action",
					   "agent",
					   "fabric",
					   "shelves",
					   NULL };
	config_setting_t *root = config_root_setting(cf), *s;
	int r;

	r = check_keys(
		e, root, top,
		" (known: librarian, node, key_file, connect_timeout, reply_timeout, default_policy, book_size, process_priority, fence_action, agent, fabric, shelves)");
	if (!r)
		r = parse_top(e, c, root);
	s = config_setting_get_member(root, "agent");
	if (!r && s)
		r = parse_agent(e, c, s);
	s = config_setting_get_member(root, "fabric");
	if (!r && s)
		r = parse_fabric(e, c, s);
	s = config_setting_get_member(root, "shelves");
	if (!r && s)
		r = parse_shelves(e, c, s);
	return r;
}

static int conf_defaults(struct lfsvol_conf *c)
{
	c->connect_timeout = 5;
	c->reply_timeout = 30;
	c->process_priority = -18; /* as lvm.conf's activation/process_priority */
	c->fence_action = LFS_FENCE_RESET;
	c->scrub_batch = 64;
	c->check_free = true;
	c->check_interval = 600;
	c->librarian = strdup("127.0.0.1:9093");
	c->state_dir = strdup("/run/lfs");
	return c->librarian && c->state_dir ? 0 : -ENOMEM;
}

static int conf_read(const char *path, struct lfsvol_conf *c, char *msg, size_t msglen)
{
	struct conf_err e = { .msg = msg, .len = msglen, .file = path };
	config_t cf;
	int r;

	config_init(&cf);
	if (!config_read_file(&cf, path)) {
		if (config_error_type(&cf) == CONFIG_ERR_FILE_IO) {
			r = errno ? -errno : -EIO;
			snprintf(msg, msglen, "%s: cannot read: %s", path, strerror(-r));
		} else {
			r = -EINVAL;
			snprintf(msg, msglen, "%s:%d: %s",
				 config_error_file(&cf) ? config_error_file(&cf) : path,
				 config_error_line(&cf), config_error_text(&cf));
		}
	} else {
		r = conf_parse(&e, c, &cf);
	}
	config_destroy(&cf);
	return r;
}

int lfsvol_conf_load(const char *path, bool missing_ok, struct lfsvol_conf **out, char *msg,
		     size_t msglen)
{
	struct lfsvol_conf *c;
	int r;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = conf_defaults(c);
	c->path = strdup(path);
	if (!r && !c->path)
		r = -ENOMEM;
	if (!r && !(access(path, F_OK) && errno == ENOENT && missing_ok))
		r = conf_read(path, c, msg, msglen);
	if (r) {
		if (r == -ENOMEM)
			snprintf(msg, msglen, "%s: out of memory", path);
		lfsvol_conf_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void lfsvol_conf_free(struct lfsvol_conf *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nfabrics; i++)
		free(c->fabrics[i].path);
	/* the entry being parsed when an error struck may hold strings too */
	if (c->nfabrics < LFSVOL_MAX_FABRICS)
		free(c->fabrics[c->nfabrics].path);
	for (int i = 0; i < c->nshelves; i++)
		free(c->shelves[i].name);
	if (c->nshelves < LFSVOL_MAX_SHELF_CONF)
		free(c->shelves[c->nshelves].name);
	free(c->path);
	free(c->librarian);
	free(c->node);
	free(c->key_file);
	free(c->state_dir);
	free(c);
}

const struct lfsvol_shelf_conf *lfsvol_conf_shelf(const struct lfsvol_conf *c, const char *name)
{
	for (int i = 0; c && i < c->nshelves; i++)
		if (!strcmp(c->shelves[i].name, name))
			return &c->shelves[i];
	return NULL;
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int r;

	if (!f)
		return -errno;
	r = fscanf(f, "%d", v) == 1 ? 0 : -EINVAL;
	fclose(f);
	return r;
}

/* sysfs, where pmem devices tell their NUMA node; unit tests point it elsewhere. */
const char *lfsvol_sysfs = "/sys";

static int pmem_entry(const struct dirent *de)
{
	return !strncmp(de->d_name, "pmem", 4);
}

/*
 * The pmem block device on NUMA node `node'. More than one there (the
 * namespaces of one region, an NVDIMM and a CXL window on one node) would
 * make the IG whichever the directory lists first: -ENOTUNIQ, and path
 * lists them all.
 */
static int pmem_on_node(int node, char *path, size_t len)
{
	char dir[PATH_MAX], p[PATH_MAX + 300];
	struct dirent **de;
	int nd, found = 0;
	size_t at = 0;

	snprintf(dir, sizeof(dir), "%s/block", lfsvol_sysfs);
	nd = scandir(dir, &de, pmem_entry, versionsort);
	if (nd < 0)
		return -errno;
	for (int i = 0; i < nd; i++) {
		int n;

		snprintf(p, sizeof(p), "%s/%s/device/numa_node", dir, de[i]->d_name);
		if (!read_int_file(p, &n) && n == node && at < len)
			at += snprintf(path + at, len - at, "%s/dev/%s", found++ ? ", " : "",
				       de[i]->d_name);
		free(de[i]);
	}
	free(de);
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ENODEV;
}

int lfsvol_fabric_resolve(const struct lfsvol_fabric_conf *f, char *path, size_t len)
{
	switch (f->sel) {
	case LFSVOL_SEL_PATH:
		snprintf(path, len, "%s", f->path);
		return access(path, F_OK) ? -ENODEV : 0;
	case LFSVOL_SEL_BY_PATH:
		snprintf(path, len, "/dev/disk/by-path/%s", f->path);
		return access(path, F_OK) ? -ENODEV : 0;
	case LFSVOL_SEL_NUMA:
		break;
	}
	return pmem_on_node(f->numa_node, path, len);
}

static const char *conf_file(const struct lfsvol_ctx *ctx, bool *explicit)
{
	const char *path = ctx->conf_path;

	if (!path)
		path = getenv("LFS_CONF");
	*explicit = path && *path;
	return *explicit ? path : LFSVOL_DEFAULT_CONF;
}

int lfsvol_need_conf(struct lfsvol_ctx *ctx)
{
	char msg[512], *l;
	const char *path;
	bool explicit;
	int r;

	if (ctx->conf)
		return 0;
	path = conf_file(ctx, &explicit);
	r = lfsvol_conf_load(path, !explicit, &ctx->conf, msg, sizeof(msg));
	lfsvol_trace("config %s read: %d", path, r);
	if (r) {
		lfsvol_fail(LFSVOL_ECONFIG, r, "%s", msg);
		if (r == -ENOENT)
			lfsvol_err(
				"give an existing file with -c FILE or LFS_CONF (see lfs.conf(5))");
		else if (r == -EINVAL)
			lfsvol_err("fix that line of the configuration (see lfs.conf(5))");
		return r;
	}
	if (!ctx->librarian)
		return 0;
	l = NULL;
	r = lfsvol_librarian_list(ctx->librarian, &l, msg, sizeof(msg));
	if (r == -EINVAL)
		return lfsvol_fail(LFSVOL_EUSAGE, r, "--librarian: %s", msg);
	if (r)
		return lfsvol_fail(LFSVOL_EFAIL, r, "out of memory");
	free(ctx->conf->librarian);
	ctx->conf->librarian = l;
	return 0;
}
