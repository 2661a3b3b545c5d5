// SPDX-License-Identifier: GPL-2.0
/* Lookups in a loaded configuration (librarian.h): nodes, tenants, IGs by name or number. */
#include <string.h>

#include "librarian.h"

int lib_config_find_node(const struct lib_config *c, const char *name)
{
	for (int i = 0; i < c->nnodes; i++)
		if (!strcmp(c->nodes[i].name, name))
			return i;
	return -1;
}

int lib_config_find_tenant(const struct lib_config *c, const char *name)
{
	for (int i = 0; i < c->ntenants; i++)
		if (!strcmp(c->tenants[i].name, name))
			return i;
	return -1;
}

int lib_config_tenant_of(const struct lib_config *c, const char *name)
{
	int k = lib_config_find_node(c, name);

	return k < 0 ? -1 : c->nodes[k].tenant;
}

int lib_config_find_ig(const struct lib_config *c, int64_t ig)
{
	if (ig < 0 || ig >= LIB_MAX_IGS)
		return -1;
	return c->ig_index[ig] - 1;
}
