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

#include "lfsvol.h"

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

static int get_string(struct conf_err *e, const config_setting_t *grp, const char *key,
		      char **out)
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

static int get_int(struct conf_err *e, const config_setting_t *grp, const char *key,
		   int min, int max, int *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	long long v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
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

static int get_size(struct conf_err *e, const config_setting_t *grp, const char *key,
		    bool allow_zero, uint64_t *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	struct lfsvol_size sz;
	char m[256];
	const char *v;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
		long long n = config_setting_get_int64(s);

		if (n < 0 || (n == 0 && !allow_zero))
			return conf_fail(e, s, "`%s' = %lld is not a valid size", key, n);
		*out = (uint64_t)n;
		return 1;
	}
	v = config_setting_get_string(s);
	if (!v)
		return conf_fail(e, s, "`%s' must be a size such as \"2M\" or \"8G\"", key);
	if (lfsvol_parse_size(v, false, &sz, m, sizeof(m)) || sz.books)
		return conf_fail(e, s, "`%s': %s", key, sz.books ? "a byte size is needed here, not books" : m);
	*out = sz.value;
	return 1;
}

static int get_policy(struct conf_err *e, const config_setting_t *grp, const char *key,
		      const char **out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	const char *v, *hint, *p;

	if (!s)
		return 0;
	v = config_setting_get_string(s);
	if (!v)
		return conf_fail(e, s, "`%s' must be a policy name in double quotes", key);
	p = lfsvol_policy_lookup(v, &hint);
	if (!p) {
		if (hint)
			return conf_fail(e, s, "unknown policy `%s'; did you mean `%s'?", v, hint);
		return conf_fail(e, s, "unknown policy `%s' (see lfs.conf(5) for the list)", v);
	}
	*out = p;
	return 1;
}

static int parse_fabric(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	static const char *const keys[] = { "ig", "device", "numa_node", "by_path", "offset", "force", NULL };
	int n;

	if (!config_setting_is_list(list) && !config_setting_is_array(list))
		return conf_fail(e, list, "`fabric' must be a list: fabric = ( { ig = 0; device = \"/dev/pmem0\"; } );");
	n = config_setting_length(list);
	if (n > LFSVOL_MAX_FABRICS)
		return conf_fail(e, list, "`fabric' has %d entries, at most %d are allowed", n, LFSVOL_MAX_FABRICS);
	for (int i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(list, (unsigned int)i);
		struct lfsvol_fabric_conf *f = &c->fabrics[c->nfabrics];
		int sel = 0, ig = -1, r;

		if (!config_setting_is_group(g))
			return conf_fail(e, g, "fabric entry %d must be a group { ig = N; device = \"...\"; }", i + 1);
		r = check_keys(e, g, keys, " in a fabric entry (known: ig, device, numa_node, by_path, offset, force)");
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
		if (get_int(e, g, "ig", 0, 65535, &ig) < 0)
			return -EINVAL;
		if (ig < 0)
			return conf_fail(e, g, "fabric entry %d has no `ig'", i + 1);
		f->ig = (uint32_t)ig;
		for (int j = 0; j < c->nfabrics; j++)
			if (c->fabrics[j].ig == f->ig)
				return conf_fail(e, g, "IG %d is mapped twice (also at line %d)", ig, c->fabrics[j].line);
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
				return conf_fail(e, g, "by_path `%s' must be a name under /dev/disk/by-path", f->path);
		}
		r = get_int(e, g, "numa_node", 0, 4095, &f->numa_node);
		if (r < 0)
			return r;
		if (r) {
			sel++;
			f->sel = LFSVOL_SEL_NUMA;
		}
		if (sel != 1)
			return conf_fail(e, g, "fabric entry for IG %d needs exactly one of device, numa_node or by_path", ig);
		if (get_size(e, g, "offset", true, &f->offset) < 0)
			return -EINVAL;
		if (f->offset % (2ULL << 20))
			return conf_fail(e, g, "offset %llu of IG %d is not a multiple of 2 MiB",
					 (unsigned long long)f->offset, ig);
		if (get_bool(e, g, "force", &f->force) < 0)
			return -EINVAL;
		c->nfabrics++;
	}
	return 0;
}

static int parse_shelves(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	static const char *const keys[] = { "name", "policy", "igs", "auto_activate", NULL };
	int n;

	if (!config_setting_is_list(list))
		return conf_fail(e, list, "`shelves' must be a list: shelves = ( { name = \"db\"; auto_activate = true; } );");
	n = config_setting_length(list);
	if (n > LFSVOL_MAX_SHELF_CONF)
		return conf_fail(e, list, "`shelves' has %d entries, at most %d are allowed", n, LFSVOL_MAX_SHELF_CONF);
	for (int i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(list, (unsigned int)i);
		struct lfsvol_shelf_conf *s = &c->shelves[c->nshelves];
		config_setting_t *igs;
		int r;

		if (!config_setting_is_group(g))
			return conf_fail(e, g, "shelves entry %d must be a group { name = \"...\"; ... }", i + 1);
		r = check_keys(e, g, keys, " in a shelves entry (known: name, policy, igs, auto_activate)");
		if (r)
			return r;
		s->line = (int)config_setting_source_line(g);
		r = get_string(e, g, "name", &s->name);
		if (r < 0)
			return r;
		if (!r)
			return conf_fail(e, g, "shelves entry %d has no `name'", i + 1);
		if (!lfsvol_valid_name(s->name))
			return conf_fail(e, g, "invalid shelf name `%s': use 1-64 of A-Z a-z 0-9 . _ -", s->name);
		for (int j = 0; j < c->nshelves; j++)
			if (!strcmp(c->shelves[j].name, s->name))
				return conf_fail(e, g, "shelf `%s' is configured twice (also at line %d)",
						 s->name, c->shelves[j].line);
		if (get_policy(e, g, "policy", &s->policy) < 0)
			return -EINVAL;
		igs = config_setting_get_member(g, "igs");
		if (igs) {
			if (!config_setting_is_array(igs) && !config_setting_is_list(igs))
				return conf_fail(e, igs, "`igs' must be an array such as [0, 1]");
			s->nigs = config_setting_length(igs);
			if (s->nigs > LFSVOL_MAX_IGS)
				return conf_fail(e, igs, "`igs' lists %d IGs, at most %d", s->nigs, LFSVOL_MAX_IGS);
			for (int k = 0; k < s->nigs; k++) {
				config_setting_t *v = config_setting_get_elem(igs, (unsigned int)k);

				if (config_setting_type(v) != CONFIG_TYPE_INT ||
				    config_setting_get_int(v) < 0 || config_setting_get_int(v) > 65535)
					return conf_fail(e, igs, "`igs' entry %d is not an IG number 0..65535", k + 1);
				s->igs[k] = (uint32_t)config_setting_get_int(v);
			}
		}
		if (get_bool(e, g, "auto_activate", &s->auto_activate) < 0)
			return -EINVAL;
		c->nshelves++;
	}
	return 0;
}

static int conf_parse(struct conf_err *e, struct lfsvol_conf *c, config_t *cf)
{
	static const char *const top[] = { "librarian", "node", "key_file", "connect_timeout",
		"reply_timeout", "default_policy", "book_size", "process_priority", "agent", "fabric",
		"shelves", NULL };
	static const char *const agent_keys[] = { "state_dir", "scrub_batch", "check_free",
		"check_interval", NULL };
	config_setting_t *root = config_root_setting(cf), *s;
	int r;

	r = check_keys(e, root, top, " (known: librarian, node, key_file, connect_timeout, reply_timeout, default_policy, book_size, process_priority, agent, fabric, shelves)");
	if (r)
		return r;
	if (get_string(e, root, "librarian", &c->librarian) < 0 ||
	    get_string(e, root, "node", &c->node) < 0 ||
	    get_string(e, root, "key_file", &c->key_file) < 0 ||
	    get_int(e, root, "connect_timeout", 1, 300, &c->connect_timeout) < 0 ||
	    get_int(e, root, "reply_timeout", 1, 3600, &c->reply_timeout) < 0 ||
	    get_int(e, root, "process_priority", -20, 19, &c->process_priority) < 0 ||
	    get_policy(e, root, "default_policy", &c->default_policy) < 0 ||
	    get_size(e, root, "book_size", false, &c->book_size) < 0)
		return -EINVAL;
	if (c->node && !lfsvol_valid_name(c->node))
		return conf_fail(e, config_setting_get_member(root, "node"),
				 "invalid node name `%s': use 1-64 of A-Z a-z 0-9 . _ -", c->node);
	if (c->book_size && (c->book_size & (c->book_size - 1) || c->book_size < (2ULL << 20)))
		return conf_fail(e, config_setting_get_member(root, "book_size"),
				 "book_size %llu is not a power of two >= 2 MiB",
				 (unsigned long long)c->book_size);
	s = config_setting_get_member(root, "agent");
	if (s) {
		if (!config_setting_is_group(s))
			return conf_fail(e, s, "`agent' must be a group { state_dir = \"...\"; }");
		r = check_keys(e, s, agent_keys,
			       " in agent (known: state_dir, scrub_batch, check_free, check_interval)");
		if (r)
			return r;
		if (get_string(e, s, "state_dir", &c->state_dir) < 0 ||
		    get_int(e, s, "scrub_batch", 1, 8191, &c->scrub_batch) < 0 ||
		    get_bool(e, s, "check_free", &c->check_free) < 0 ||
		    get_int(e, s, "check_interval", 10, 86400, &c->check_interval) < 0)
			return -EINVAL;
	}
	s = config_setting_get_member(root, "fabric");
	if (s) {
		r = parse_fabric(e, c, s);
		if (r)
			return r;
	}
	s = config_setting_get_member(root, "shelves");
	if (s) {
		r = parse_shelves(e, c, s);
		if (r)
			return r;
	}
	return 0;
}

static int conf_defaults(struct lfsvol_conf *c)
{
	c->connect_timeout = 5;
	c->reply_timeout = 30;
	c->process_priority = -18;	/* as lvm.conf's activation/process_priority */
	c->scrub_batch = 64;
	c->check_free = true;
	c->check_interval = 600;
	c->librarian = strdup("127.0.0.1:9093");
	c->state_dir = strdup("/run/lfs");
	return c->librarian && c->state_dir ? 0 : -ENOMEM;
}

int lfsvol_conf_load(const char *path, bool missing_ok, struct lfsvol_conf **out,
		     char *msg, size_t msglen)
{
	struct conf_err e = { .msg = msg, .len = msglen, .file = path };
	struct lfsvol_conf *c;
	config_t cf;
	int r;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = conf_defaults(c);
	if (r)
		goto fail;
	c->path = strdup(path);
	if (!c->path) {
		r = -ENOMEM;
		goto fail;
	}
	if (access(path, F_OK) && errno == ENOENT && missing_ok) {
		*out = c;
		return 0;
	}
	config_init(&cf);
	if (!config_read_file(&cf, path)) {
		if (config_error_type(&cf) == CONFIG_ERR_FILE_IO) {
			r = -errno ? -errno : -EIO;
			snprintf(msg, msglen, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
		} else {
			r = -EINVAL;
			snprintf(msg, msglen, "%s:%d: %s", config_error_file(&cf) ? config_error_file(&cf) : path,
				 config_error_line(&cf), config_error_text(&cf));
		}
		config_destroy(&cf);
		goto fail;
	}
	r = conf_parse(&e, c, &cf);
	config_destroy(&cf);
	if (r)
		goto fail;
	*out = c;
	return 0;
fail:
	lfsvol_conf_free(c);
	return r;
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

int lfsvol_fabric_resolve(const struct lfsvol_fabric_conf *f, char *path, size_t len)
{
	DIR *d;
	struct dirent *de;
	int r = -ENODEV;

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
	d = opendir("/sys/block");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p[PATH_MAX];
		int node;

		if (strncmp(de->d_name, "pmem", 4))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/device/numa_node", de->d_name);
		if (read_int_file(p, &node) || node != f->numa_node)
			continue;
		snprintf(path, len, "/dev/%s", de->d_name);
		r = 0;
		break;
	}
	closedir(d);
	return r;
}
