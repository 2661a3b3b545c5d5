// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers that read librarian.conf's settings (config.h), shared by
 * config.c and the group parsers config_fabric.c, config_tenant.c and
 * config_fence.c: each error names file:line and the offending value.
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_read.h"

static const char *src_file(struct cfg_parse *p, const config_setting_t *s)
{
	const char *f = s ? config_setting_source_file(s) : NULL;

	return f ? f : p->cfg->path;
}

int lib_cfg_fail(struct cfg_parse *p, const config_setting_t *s, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return lib_fail(p->e, EINVAL, "%s:%d: %s", src_file(p, s),
			s ? config_setting_source_line(s) : 0, buf);
}

char *lib_cfg_path(struct cfg_parse *p, const char *v)
{
	char *out;

	if (v[0] == '/' || !p->dir || strstr(v, "://")) /* a URI: database (PostgreSQL) */
		return strdup(v);
	if (asprintf(&out, "%s/%s", p->dir, v) < 0)
		return NULL;
	return out;
}

/* Refuse settings we do not know: a typo must not be silently ignored. */
int lib_cfg_known(struct cfg_parse *p, const config_setting_t *grp, const char *const *known)
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
			return lib_cfg_fail(p, c, "unknown setting '%s' in '%s'", name,
					    config_setting_name(grp) ? config_setting_name(grp) :
								       "(top)");
	}
	return 0;
}

int lib_cfg_string(struct cfg_parse *p, const config_setting_t *grp, const char *name,
		   const char **out, bool required)
{
	const config_setting_t *s = config_setting_get_member(grp, name);

	if (!s) {
		if (required)
			return lib_cfg_fail(p, grp, "missing setting '%s'", name);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return lib_cfg_fail(p, s, "'%s' must be a string", name);
	*out = config_setting_get_string(s);
	if (!**out)
		return lib_cfg_fail(p, s, "'%s' must not be empty", name);
	return 0;
}

int lib_cfg_int(struct cfg_parse *p, const config_setting_t *grp, const char *name, long long lo,
		long long hi, long long *out, bool required)
{
	const config_setting_t *s = config_setting_get_member(grp, name);
	long long v;

	if (!s) {
		if (required)
			return lib_cfg_fail(p, grp, "missing setting '%s'", name);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return lib_cfg_fail(p, s, "'%s' must be an integer", name);
	v = config_setting_get_int64(s);
	if (v < lo || v > hi)
		return lib_cfg_fail(p, s, "'%s' = %lld is out of range [%lld, %lld]", name, v, lo,
				    hi);
	*out = v;
	return 0;
}

/* A size: integer bytes or a string such as "8G". */
int lib_cfg_size(struct cfg_parse *p, const config_setting_t *s, const char *what, uint64_t *out)
{
	int t = config_setting_type(s);

	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long v = config_setting_get_int64(s);

		if (v <= 0)
			return lib_cfg_fail(p, s, "%s %lld must be positive", what, v);
		*out = v;
		return 0;
	}
	if (t == CONFIG_TYPE_STRING) {
		const char *v = config_setting_get_string(s);
		struct lfs_size sz;
		char msg[300];

		if (lfs_size_parse(v, LFS_SIZE_BARE, &sz, msg, sizeof(msg)) < 0)
			return lib_cfg_fail(p, s, "%s '%s' is not a size: %s", what, v, msg);
		*out = sz.value;
		return 0;
	}
	return lib_cfg_fail(p, s, "%s must be a size such as \"8G\"", what);
}

/*
 * Node names follow the shared rule (they are PSK identities and appear in
 * every component); the admin's name, racks and enclosures follow it too.
 */
int lib_cfg_name(struct cfg_parse *p, const config_setting_t *s, const char *what, const char *v)
{
	char msg[300];

	if (!lfs_rule_name(what, v, msg, sizeof(msg)))
		return 0;
	return lib_cfg_fail(p, s, "%s", msg);
}
