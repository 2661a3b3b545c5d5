// SPDX-License-Identifier: GPL-2.0
/*
 * lfs.conf's settings one by one (libconfig): the error message, "FILE:LINE:
 * what, with the value", unknown settings refused (a typo never silently
 * means "default"), the getters of a string, number, switch, size and
 * policy, and the walk of a list of groups.
 */
#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confparse.h"
#include "lfs_rules.h"
#include "msg.h"

int conf_fail(struct conf_err *e, const config_setting_t *s, const char *fmt, ...)
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

int conf_check_keys(struct conf_err *e, const config_setting_t *grp, const char *const *keys,
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

int conf_get_string(struct conf_err *e, const config_setting_t *grp, const char *key, char **out)
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

int conf_get_int(struct conf_err *e, const config_setting_t *grp, const char *key, int min, int max,
		 int *out)
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

int conf_get_bool(struct conf_err *e, const config_setting_t *grp, const char *key, bool *out)
{
	config_setting_t *s = config_setting_get_member(grp, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return conf_fail(e, s, "`%s' must be true or false", key);
	*out = config_setting_get_bool(s);
	return 1;
}

int conf_get_size(struct conf_err *e, const config_setting_t *grp, const char *key, bool allow_zero,
		  uint64_t *out)
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

int conf_get_policy(struct conf_err *e, const config_setting_t *grp, const char *key,
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

int conf_each(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list,
	      bool array_ok, const char *what, const char *example, int max, conf_entry_fn *entry)
{
	int n, r;

	if (!config_setting_is_list(list) && !(array_ok && config_setting_is_array(list)))
		return conf_fail(e, list, "`%s' must be a list: %s", what, example);
	n = config_setting_length(list);
	if (n > max)
		return conf_fail(e, list, "`%s' has %d entries, at most %d are allowed", what, n,
				 max);
	for (int i = 0; i < n; i++) {
		r = entry(e, c, config_setting_get_elem(list, (unsigned int)i), i);
		if (r)
			return r;
	}
	return 0;
}
