// SPDX-License-Identifier: GPL-2.0
/*
 * lfs.conf's shelves list: a shelf's settings on this node (auto_activate,
 * its RequestIG list igs, policy, size).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uapi/lfs.h>

#include "confparse.h"
#include "lfs_rules.h"

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
	r = conf_check_keys(e, g, keys,
			    " in a shelves entry (known: name, policy, igs, auto_activate)");
	if (r)
		return r;
	s->line = (int)config_setting_source_line(g);
	r = conf_get_string(e, g, "name", &s->name);
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
	if (conf_get_policy(e, g, "policy", &s->policy) < 0 || shelf_igs(e, g, s) ||
	    conf_get_bool(e, g, "auto_activate", &s->auto_activate) < 0)
		return -EINVAL;
	c->nshelves++;
	return 0;
}

int conf_parse_shelves(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	return conf_each(e, c, list, false, "shelves",
			 "shelves = ( { name = \"db\"; auto_activate = true; } );",
			 LFSVOL_MAX_SHELF_CONF, shelf_entry);
}
