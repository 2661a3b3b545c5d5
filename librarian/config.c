// SPDX-License-Identifier: GPL-2.0
/*
 * librarian.conf parsing (libconfig): the file and the librarian group; the
 * fabric (config_fabric.c), tenants (config_tenant.c) and fence
 * (config_fence.c) groups are read with the helpers of config_read.c. Every
 * error names file:line and the offending value; unknown settings are
 * refused so typos do not pass silently.
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config_read.h"

static int parse_listen(struct cfg_parse *p, const config_setting_t *s)
{
	struct lib_config *c = p->cfg;

	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		c->listen[c->nlisten++] = strdup(config_setting_get_string(s));
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return lib_cfg_fail(p, s, "'listen' must be a string or an array of strings");
	if (config_setting_length(s) > LIB_MAX_LISTEN)
		return lib_cfg_fail(p, s, "at most %d listen addresses", LIB_MAX_LISTEN);
	for (int i = 0; i < config_setting_length(s); i++) {
		const char *a = config_setting_get_string_elem(s, i);

		if (!a)
			return lib_cfg_fail(p, s, "'listen' must hold strings");
		c->listen[c->nlisten++] = strdup(a);
	}
	return 0;
}

static int parse_book_size(struct cfg_parse *p, const config_setting_t *s)
{
	char msg[200];
	int r = lib_cfg_size(p, s, "book_size", &p->cfg->book_size);

	if (r < 0)
		return r;
	if (lfs_rule_book_size(p->cfg->book_size, msg, sizeof(msg)) < 0)
		return lib_cfg_fail(p, s, "%s", msg);
	return 0;
}

/* An optional integer setting into an int that holds its default. */
static int get_int_field(struct cfg_parse *p, const config_setting_t *g, const char *name,
			 long long lo, long long hi, int *field)
{
	long long n = *field;
	int r = lib_cfg_int(p, g, name, lo, hi, &n, false);

	if (r == 0)
		*field = n;
	return r;
}

/* Times and limits: each an integer in its range. */
static int parse_limits(struct cfg_parse *p, const config_setting_t *g)
{
	struct lib_config *c = p->cfg;
	long long msg = c->max_message, mode = c->unix_mode;
	int *per_node = &c->max_conn_per_node;
	int r;

	if ((r = get_int_field(p, g, "heartbeat_interval", 1, 3600, &c->heartbeat_interval)) < 0 ||
	    (r = get_int_field(p, g, "lease_time", 1, 86400, &c->lease_time)) < 0 ||
	    (r = get_int_field(p, g, "fence_grace", 0, 3600, &c->fence_grace)) < 0)
		return r;
	if (c->lease_time <= c->heartbeat_interval)
		return lib_cfg_fail(p, g, "lease_time %d must be longer than heartbeat_interval %d",
				    c->lease_time, c->heartbeat_interval);
	/*
	 * A node renews its kernel's lease when the librarian's TCP stack
	 * acknowledges a heartbeat, before the librarian reads it: heartbeats
	 * up to an interval after the last one it read may have renewed the
	 * lease (a lost EACCES reply, a failed commit that closes the
	 * connection). The grace covers that interval and the jitter.
	 */
	if (c->fence_grace <= c->heartbeat_interval)
		return lib_cfg_fail(
			p, g,
			"fence_grace %d must be longer than heartbeat_interval %d: a node may renew its lease on a heartbeat sent up to an interval after the last one the librarian read (librarian.conf(5))",
			c->fence_grace, c->heartbeat_interval);
	if ((r = get_int_field(p, g, "leader_ttl_ms", 100, 3600000, &c->leader_ttl_ms)) < 0 ||
	    (r = get_int_field(p, g, "leader_refresh_ms", 20, 600000, &c->leader_refresh_ms)) < 0)
		return r;
	if (!c->leader_ttl_ms)
		c->leader_ttl_ms = c->lease_time * 1000 / 3;
	if (!c->leader_refresh_ms)
		c->leader_refresh_ms = c->leader_ttl_ms / 4;
	if ((r = get_int_field(p, g, "max_connections", 1, 65536, &c->max_connections)) < 0 ||
	    (r = get_int_field(p, g, "max_unauthenticated", 1, 65536, &c->max_unauth)) < 0 ||
	    (r = get_int_field(p, g, "max_unauthenticated_per_address", 1, 65536,
			       &c->max_unauth_per_addr)) < 0 ||
	    (r = get_int_field(p, g, "max_connections_per_node", 1, 65536, per_node)) < 0 ||
	    (r = get_int_field(p, g, "max_admin_connections", 1, 4096, &c->max_admin)) < 0 ||
	    (r = lib_cfg_int(p, g, "max_message", 4096, 64 << 20, &msg, false)) < 0 ||
	    (r = get_int_field(p, g, "idle_timeout", 1, 86400 * 7, &c->idle_timeout)) < 0 ||
	    (r = get_int_field(p, g, "handshake_timeout", 1, 3600, &c->handshake_timeout)) < 0 ||
	    (r = get_int_field(p, g, "max_shelves", 1, 100000000, &c->max_shelves)) < 0 ||
	    (r = lib_cfg_int(p, g, "unix_mode", 0, 0777, &mode, false)) < 0)
		return r;
	c->max_message = msg;
	c->unix_mode = mode;
	return 0;
}

/* new_books: what memory new to the catalogue holds, "unknown" or "zero". */
static int parse_new_books(struct cfg_parse *p, const config_setting_t *g)
{
	const char *v = NULL;
	int r = lib_cfg_string(p, g, "new_books", &v, false);

	if (r < 0 || !v)
		return r;
	if (strcmp(v, "unknown") && strcmp(v, "zero"))
		return lib_cfg_fail(p, config_setting_get_member(g, "new_books"),
				    "new_books '%s' must be \"unknown\" or \"zero\"", v);
	p->cfg->new_books_zero = !strcmp(v, "zero");
	return 0;
}

static int parse_policy_and_sync(struct cfg_parse *p, const config_setting_t *g)
{
	struct lib_config *c = p->cfg;
	const char *v = NULL;
	int r = lib_cfg_string(p, g, "default_policy", &v, false);

	if (r < 0)
		return r;
	if (v && (lfs_policy_parse(v, &c->default_policy) < 0 ||
		  c->default_policy == LFS_POL_REQUEST_IG))
		return lib_cfg_fail(
			p, config_setting_get_member(g, "default_policy"),
			"default_policy '%s' is not a policy usable as default (see librarian.conf(5))",
			v);
	v = NULL;
	if ((r = lib_cfg_string(p, g, "synchronous", &v, false)) < 0 || !v)
		return r;
	if (strcmp(v, "full") && strcmp(v, "normal"))
		return lib_cfg_fail(p, config_setting_get_member(g, "synchronous"),
				    "synchronous '%s' must be \"full\" or \"normal\"", v);
	c->sync_full = !strcmp(v, "full");
	return 0;
}

/* admin = { name = "admin"; key_file = ...; }: the identity that may do everything. */
static int parse_admin(struct cfg_parse *p, const config_setting_t *s)
{
	static const char *const ka[] = { "name", "key_file", NULL };
	struct lib_config *c = p->cfg;
	const char *name = "admin", *key = NULL;
	char msg[300];
	char *full;
	int r;

	if (config_setting_type(s) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(
			p, s, "'admin' must be a group { name = \"admin\"; key_file = ...; }");
	if ((r = lib_cfg_known(p, s, ka)) < 0 ||
	    (r = lib_cfg_string(p, s, "name", &name, false)) < 0 ||
	    (r = lib_cfg_name(p, s, "admin name", name)) < 0 ||
	    (r = lib_cfg_string(p, s, "key_file", &key, true)) < 0)
		return r;
	c->admin_name = strdup(name);
	full = lib_cfg_path(p, key);
	if (!c->admin_name || !full) {
		free(full);
		return lib_fail(p->e, ENOMEM, "out of memory");
	}
	r = lfs_lib_read_key(full, c->admin_key, sizeof(c->admin_key), msg, sizeof(msg));
	free(full);
	if (r < 0)
		return lib_cfg_fail(p, s, "admin: %s", msg);
	c->admin_keylen = r;
	return 0;
}

/* A path setting, relative to the configuration file's directory. */
static int get_path(struct cfg_parse *p, const config_setting_t *g, const char *name, char **out)
{
	const char *v = NULL;
	int r = lib_cfg_string(p, g, name, &v, false);

	if (r < 0 || !v)
		return r;
	*out = lib_cfg_path(p, v);
	return *out ? 0 : lib_fail(p->e, ENOMEM, "out of memory");
}

static int parse_librarian(struct cfg_parse *p, const config_setting_t *g)
{
	static const char *const known[] = { "database",
					     "listen",
					     "book_size",
					     "heartbeat_interval",
					     "lease_time",
					     "fence_grace",
					     "new_books",
					     "default_policy",
					     "max_connections",
					     "max_unauthenticated",
					     "max_unauthenticated_per_address",
					     "max_connections_per_node",
					     "max_admin_connections",
					     "max_message",
					     "idle_timeout",
					     "handshake_timeout",
					     "max_shelves",
					     "synchronous",
					     "unix_mode",
					     "keys_dir",
					     "admin",
					     "share",
					     "node_quota",
					     "name",
					     "leader_ttl_ms",
					     "leader_refresh_ms",
					     "fence_command",
					     "fence_timeout",
					     "audit_log",
					     "metrics_listen",
					     NULL };
	const config_setting_t *s;
	const char *name = NULL, *metrics = NULL;
	int r;

	if ((r = lib_cfg_known(p, g, known)) < 0 ||
	    (r = get_path(p, g, "database", &p->cfg->db_path)) < 0 ||
	    (r = get_path(p, g, "audit_log", &p->cfg->audit_path)) < 0 ||
	    (r = lib_cfg_string(p, g, "metrics_listen", &metrics, false)) < 0 ||
	    (r = lib_cfg_string(p, g, "name", &name, false)) < 0 ||
	    (name && (r = lib_cfg_name(p, g, "name", name)) < 0))
		return r;
	if ((name && !(p->cfg->name = strdup(name))) ||
	    (metrics && !(p->cfg->metrics_listen = strdup(metrics))))
		return lib_fail(p->e, ENOMEM, "out of memory");
	if ((s = config_setting_get_member(g, "listen")) && (r = parse_listen(p, s)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "book_size")) && (r = parse_book_size(p, s)) < 0)
		return r;
	if ((r = parse_limits(p, g)) < 0 || (r = parse_policy_and_sync(p, g)) < 0 ||
	    (r = parse_new_books(p, g)) < 0 || (r = lib_cfg_access(p, g)) < 0 ||
	    (r = get_path(p, g, "keys_dir", &p->keys_dir)) < 0 || (r = lib_cfg_fence(p, g)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "admin")) && (r = parse_admin(p, s)) < 0)
		return r;
	return 0;
}

/*
 * A standby takes over at most leader_ttl_ms + leader_refresh_ms after the
 * leader's last renewal, and a node must reach the new leader before its
 * lease lapses: a heartbeat_interval later at the latest. The leader renews
 * at least twice before the row expires.
 */
int lib_config_check_leader(const struct lib_config *c, struct lib_err *e)
{
	if (2 * c->leader_refresh_ms > c->leader_ttl_ms)
		return lib_fail(
			e, EINVAL,
			"%s: leader_refresh_ms %d must be at most half of leader_ttl_ms %d: the leader renews its row at least twice before it expires",
			c->path, c->leader_refresh_ms, c->leader_ttl_ms);
	if ((int64_t)c->leader_ttl_ms + c->leader_refresh_ms + c->heartbeat_interval * 1000LL >=
	    c->lease_time * 1000LL)
		return lib_fail(
			e, EINVAL,
			"%s: leader_ttl_ms %d + leader_refresh_ms %d + heartbeat_interval %d s must be shorter than lease_time %d s: a standby takes over that late after the leader stopped, and nodes must renew their leases with it before they lapse (librarian.conf(5))",
			c->path, c->leader_ttl_ms, c->leader_refresh_ms, c->heartbeat_interval,
			c->lease_time);
	return 0;
}

static struct lib_config *config_defaults(const char *path)
{
	struct lib_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->path = strdup(path);
	c->ig_index = calloc(LIB_MAX_IGS, sizeof(*c->ig_index));
	if (!c->path || !c->ig_index) {
		lib_config_free(c);
		return NULL;
	}
	c->book_size = 8ULL << 30;
	c->heartbeat_interval = 5;
	c->lease_time = 30;
	c->fence_grace = 10;
	c->fence_timeout = 60;
	c->default_policy = LFS_POL_RANDOM_BOOKS;
	c->max_connections = 1024;
	c->max_unauth = 256;
	c->max_unauth_per_addr = 32;
	c->max_conn_per_node = 32;
	c->max_admin = 64;
	c->share = ACC_SEE;
	c->node_quota.books = c->node_quota.shelves = -1;
	c->max_message = LFS_MAX_MESSAGE_DEFAULT;
	c->idle_timeout = 900;
	c->handshake_timeout = 10;
	c->max_shelves = 1000000;
	c->sync_full = 1;
	c->unix_mode = 0600;
	return c;
}

static int read_file(struct cfg_parse *p, const char *path)
{
	config_init(&p->lc);
	if (config_read_file(&p->lc, path))
		return 0;
	if (config_error_type(&p->lc) == CONFIG_ERR_FILE_IO)
		return lib_fail(p->e, errno ? errno : EIO, "%s: cannot read: %s", path,
				strerror(errno ? errno : EIO));
	return lib_fail(p->e, EINVAL, "%s:%d: %s",
			config_error_file(&p->lc) ? config_error_file(&p->lc) : path,
			config_error_line(&p->lc), config_error_text(&p->lc));
}

/* The groups of the file: librarian (optional), fabric, tenants (optional). */
static int parse_groups(struct cfg_parse *p)
{
	static const char *const ktop[] = { "librarian", "fabric", "tenants", NULL };
	static const char *const kfab[] = { "racks", "compact", NULL };
	const config_setting_t *g, *racks, *compact;
	int r = lib_cfg_known(p, config_root_setting(&p->lc), ktop);

	if (r < 0)
		return r;
	g = config_lookup(&p->lc, "librarian");
	if (g && config_setting_type(g) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, g, "'librarian' must be a group");
	if (g && (r = parse_librarian(p, g)) < 0)
		return r;
	g = config_lookup(&p->lc, "fabric");
	if (!g || config_setting_type(g) != CONFIG_TYPE_GROUP)
		return lib_cfg_fail(p, g, "missing group 'fabric' (racks or compact geometry)");
	if ((r = lib_cfg_known(p, g, kfab)) < 0)
		return r;
	racks = config_setting_get_member(g, "racks");
	compact = config_setting_get_member(g, "compact");
	if (!!racks == !!compact)
		return lib_cfg_fail(
			p, g, "'fabric' needs exactly one of 'racks' (explicit) or 'compact'");
	r = racks ? lib_config_parse_racks(p, racks) : lib_config_parse_compact(p, compact);
	if (r == 0 && (g = config_lookup(&p->lc, "tenants")))
		r = lib_config_parse_tenants(p, g);
	return r;
}

int lib_config_load(const char *path, struct lib_config **out, struct lib_err *e)
{
	struct cfg_parse p = { .e = e };
	const char *slash = strrchr(path, '/');
	int r;

	p.cfg = config_defaults(path);
	if (!p.cfg)
		return lib_fail(e, ENOMEM, "out of memory");
	if (slash)
		p.dir = strndup(path, slash - path ? (size_t)(slash - path) : 1);
	r = read_file(&p, path);
	if (r == 0)
		r = parse_groups(&p);
	if (r == 0 && !p.cfg->db_path)
		p.cfg->db_path = strdup("/var/lib/lfs/librarian.db");
	if (r == 0 && !p.cfg->nlisten)
		p.cfg->listen[p.cfg->nlisten++] = strdup(LFS_DEFAULT_ADDR);
	config_destroy(&p.lc);
	free(p.dir);
	free(p.keys_dir);
	if (r < 0) {
		lib_config_free(p.cfg);
		return r;
	}
	*out = p.cfg;
	return 0;
}

void lib_config_free(struct lib_config *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->db_path);
	free(c->audit_path);
	free(c->metrics_listen);
	free(c->name);
	for (int i = 0; i < c->nlisten; i++)
		free(c->listen[i]);
	free(c->admin_name);
	for (int i = 0; i < c->nracks; i++)
		free(c->racks[i]);
	free(c->racks);
	for (int i = 0; i < c->nencs; i++)
		free(c->encs[i].name);
	free(c->encs);
	for (int i = 0; i < c->npowers; i++)
		free(c->powers[i]);
	free(c->powers);
	for (int i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].igs);
	}
	free(c->nodes);
	for (int i = 0; i < c->ntenants; i++)
		free(c->tenants[i].name);
	free(c->tenants);
	free(c->igs);
	free(c->ig_index);
	lib_cfg_fence_free(c);
	free(c);
}
