// SPDX-License-Identifier: GPL-2.0
/*
 * lfs.conf's fabric list: which block device is each IG of this node
 * (device, by_path or numa_node), and finding that device when it is
 * attached (lfsvol_fabric_resolve; a pmem device by its NUMA node).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uapi/lfs.h>

#include "confparse.h"
#include "lfs_rules.h"

/* ig = N: required, an IG number of the shared rules, and not mapped twice. */
static int fabric_ig(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *g, int i,
		     struct lfsvol_fabric_conf *f)
{
	char m[256];
	int ig, r;

	r = conf_get_int(e, g, "ig", INT_MIN, INT_MAX, &ig);
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

	r = conf_get_string(e, g, "device", &f->path);
	if (r < 0)
		return r;
	if (r) {
		sel++;
		f->sel = LFSVOL_SEL_PATH;
		if (f->path[0] != '/')
			return conf_fail(e, g, "device `%s' is not an absolute path", f->path);
	}
	r = conf_get_string(e, g, "by_path", &f->path);
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
	r = conf_get_int(e, g, "numa_node", 0, 4095, &f->numa_node);
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
	r = conf_check_keys(
		e, g, keys,
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
	if (conf_get_size(e, g, "offset", true, &f->offset) < 0)
		return -EINVAL;
	if (f->offset % (2ULL << 20))
		return conf_fail(e, g, "offset %llu of IG %u is not a multiple of 2 MiB",
				 (unsigned long long)f->offset, f->ig);
	if (conf_get_bool(e, g, "force", &f->force) < 0)
		return -EINVAL;
	c->nfabrics++;
	return 0;
}

int conf_parse_fabric(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list)
{
	return conf_each(e, c, list, true, "fabric",
			 "fabric = ( { ig = 0; device = \"/dev/pmem0\"; } );", LFSVOL_MAX_FABRICS,
			 fabric_entry);
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
