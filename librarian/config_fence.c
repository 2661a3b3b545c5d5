// SPDX-License-Identifier: GPL-2.0
/*
 * fence_command and fence_timeout of the librarian group (librarian.conf(5),
 * docs/FENCING.md "Fencing outside the node"): the argv the librarian runs
 * to fence a node whose lease lapsed before it lets another node take over
 * what that node held. "%n" in an argument stands for the node's name, "%%"
 * for a percent sign; the program is an absolute path (no PATH search).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_read.h"

#define FENCE_ARGS_MAX 64

/* Only %n and %% are known: anything else is a typo. */
static int check_escapes(struct cfg_parse *p, const config_setting_t *s, int i, const char *a)
{
	for (const char *q = strchr(a, '%'); q; q = strchr(q + 2, '%'))
		if (q[1] != 'n' && q[1] != '%')
			return lib_cfg_fail(
				p, s,
				"fence_command[%d] '%s': unknown escape '%%%.1s' (only %%n, the node's name, and %%%%)",
				i, a, q + 1);
	return 0;
}

static int parse_argv(struct cfg_parse *p, const config_setting_t *s)
{
	struct lib_config *c = p->cfg;
	int n = config_setting_length(s), r;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return lib_cfg_fail(
			p, s,
			"'fence_command' must be an array of strings, the program and its arguments");
	if (n < 1 || n > FENCE_ARGS_MAX)
		return lib_cfg_fail(
			p, s,
			"'fence_command' has %d elements: 1 to %d (the program and its arguments)",
			n, FENCE_ARGS_MAX);
	c->fence_argv = calloc(n + 1, sizeof(*c->fence_argv));
	if (!c->fence_argv)
		return lib_fail(p->e, ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		const char *a = config_setting_get_string_elem(s, i);

		if (!a)
			return lib_cfg_fail(p, s, "fence_command[%d] must be a string", i);
		if (!i && a[0] != '/')
			return lib_cfg_fail(p, s, "fence_command[0] '%s' must be an absolute path",
					    a);
		if ((r = check_escapes(p, s, i, a)) < 0)
			return r;
		if (!(c->fence_argv[i] = strdup(a)))
			return lib_fail(p->e, ENOMEM, "out of memory");
	}
	return 0;
}

int lib_cfg_fence(struct cfg_parse *p, const config_setting_t *g)
{
	const config_setting_t *s = config_setting_get_member(g, "fence_command");
	long long t = p->cfg->fence_timeout;
	int r;

	if ((r = lib_cfg_int(p, g, "fence_timeout", 1, 3600, &t, false)) < 0)
		return r;
	p->cfg->fence_timeout = t;
	if (!s) {
		if (config_setting_get_member(g, "fence_timeout"))
			return lib_cfg_fail(p, g, "'fence_timeout' needs 'fence_command'");
		return 0;
	}
	return parse_argv(p, s);
}

void lib_cfg_fence_free(struct lib_config *c)
{
	for (int i = 0; c->fence_argv && c->fence_argv[i]; i++)
		free(c->fence_argv[i]);
	free(c->fence_argv);
}
