/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the readers of librarian.conf share: the parse state and the
 * helpers of config_read.c, and the group parsers config.c calls
 * (config_fabric.c, config_tenant.c, config_fence.c).
 */
#ifndef LIB_CONFIG_H
#define LIB_CONFIG_H

#include <libconfig.h>

#include "librarian.h"

struct cfg_parse {
	config_t lc;
	struct lib_config *cfg;
	struct lib_err *e;
	char *dir; /* directory of the config file, for relative paths */
	char *keys_dir;
};

/* config_read.c: EINVAL with "file:line: " and the message. */
int lib_cfg_fail(struct cfg_parse *p, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* v relative to the configuration file's directory (malloc'd). */
char *lib_cfg_path(struct cfg_parse *p, const char *v);
/* Refuse settings of grp not in known: a typo must not be silently ignored. */
int lib_cfg_known(struct cfg_parse *p, const config_setting_t *grp, const char *const *known);
int lib_cfg_string(struct cfg_parse *p, const config_setting_t *grp, const char *name,
		   const char **out, bool required);
int lib_cfg_int(struct cfg_parse *p, const config_setting_t *grp, const char *name, long long lo,
		long long hi, long long *out, bool required);
/* A size: integer bytes or a SIZE string such as "8G" (lfs_size_parse). */
int lib_cfg_size(struct cfg_parse *p, const config_setting_t *s, const char *what, uint64_t *out);
/* A name in the fabric (node, rack, enclosure, admin): the node name rule. */
int lib_cfg_name(struct cfg_parse *p, const config_setting_t *s, const char *what, const char *v);

/* config_tenant.c: share and node_quota of the librarian group, the tenants list. */
int lib_cfg_access(struct cfg_parse *p, const config_setting_t *grp);
int lib_config_parse_tenants(struct cfg_parse *p, const config_setting_t *s);

/* config_fence.c: fence_command and fence_timeout of the librarian group. */
int lib_cfg_fence(struct cfg_parse *p, const config_setting_t *g);
void lib_cfg_fence_free(struct lib_config *c);

/* config_fabric.c */
int lib_config_parse_racks(struct cfg_parse *p, const config_setting_t *racks);
int lib_config_parse_compact(struct cfg_parse *p, const config_setting_t *s);

#endif
