// SPDX-License-Identifier: GPL-2.0
/*
 * lfs.conf (libconfig, lfs.conf(5)): the file read and checked, its
 * top-level settings and agent group (the fabric and shelves lists:
 * config_fabric.c, config_shelf.c; the getters: config_get.c), the
 * defaults, and the file a command uses (-c, $LFS_CONF). Every error is
 * "FILE:LINE: what, with the value"; unknown settings are errors too, so a
 * typo never silently means "default".
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uapi/lfs.h>

#include "confparse.h"
#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"

static int parse_agent(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *s)
{
	static const char *const keys[] = { "state_dir", "scrub_batch", "check_free",
					    "check_interval", NULL };
	int r;

	if (!config_setting_is_group(s))
		return conf_fail(e, s, "`agent' must be a group { state_dir = \"...\"; }");
	r = conf_check_keys(
		e, s, keys,
		" in agent (known: state_dir, scrub_batch, check_free, check_interval)");
	if (r)
		return r;
	if (conf_get_string(e, s, "state_dir", &c->state_dir) < 0 ||
	    conf_get_int(e, s, "scrub_batch", 1, 8191, &c->scrub_batch) < 0 ||
	    conf_get_bool(e, s, "check_free", &c->check_free) < 0 ||
	    conf_get_int(e, s, "check_interval", 10, 86400, &c->check_interval) < 0)
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
	    conf_get_string(e, root, "node", &c->node) < 0 ||
	    conf_get_string(e, root, "key_file", &c->key_file) < 0 ||
	    conf_get_int(e, root, "connect_timeout", 1, 300, &c->connect_timeout) < 0 ||
	    conf_get_int(e, root, "reply_timeout", 1, 3600, &c->reply_timeout) < 0 ||
	    conf_get_int(e, root, "process_priority", -20, 19, &c->process_priority) < 0 ||
	    conf_get_policy(e, root, "default_policy", &c->default_policy) < 0 ||
	    conf_get_size(e, root, "book_size", false, &c->book_size) < 0 ||
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

	r = conf_check_keys(
		e, root, top,
		" (known: librarian, node, key_file, connect_timeout, reply_timeout, default_policy, book_size, process_priority, fence_action, agent, fabric, shelves)");
	if (!r)
		r = parse_top(e, c, root);
	s = config_setting_get_member(root, "agent");
	if (!r && s)
		r = parse_agent(e, c, s);
	s = config_setting_get_member(root, "fabric");
	if (!r && s)
		r = conf_parse_fabric(e, c, s);
	s = config_setting_get_member(root, "shelves");
	if (!r && s)
		r = conf_parse_shelves(e, c, s);
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
