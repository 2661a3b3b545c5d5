// SPDX-License-Identifier: GPL-2.0
/*
 * Request dispatch and the operations of the protocol (docs/PROTOCOL.md).
 * Each request runs in one SQLite transaction: it is applied whole or not at
 * all. Arguments are checked strictly: unknown members, wrong types and
 * out-of-range values are refused with a message naming the value.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "librarian.h"

struct req {
	struct lib_server *srv;
	struct lib_store *s;
	const struct lib_config *c;
	struct lib_identity *who;
	bool *authed;
	const char *op;
	json_t *args;
	json_t *result;
	struct lib_err err;
	int pending_node;	/* node.set_state: applied after commit */
	int pending_offline;
};

struct shelf {
	int64_t id;
	char name[LIB_OLD_NAME_MAX + 1];
	int64_t books;
	int64_t gen;
};

#define FAIL(rq, code, ...) lib_fail(&(rq)->err, code, __VA_ARGS__)

int64_t lib_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

void lib_node_seen(struct lib_server *srv, int node)
{
	if (node >= 0 && node < srv->cfg->nnodes)
		srv->last_seen[node] = lib_now_mono();
}

/* A printable excerpt of a client-supplied string for error messages. */
static const char *shown(const char *v, char *buf, size_t len)
{
	size_t i, j = 0;

	for (i = 0; v[i] && j + 5 < len; i++) {
		unsigned char ch = v[i];

		if (isprint(ch))
			buf[j++] = ch;
		else
			j += snprintf(buf + j, len - j, "\\x%02x", ch);
	}
	if (v[i] && j + 4 < len)
		j += snprintf(buf + j, len - j, "...");
	buf[j] = 0;
	return buf;
}

/* ---- argument helpers ---- */

static int check_args(struct req *rq, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(rq->args, key, v) {
		int i;
		char b[80];

		if (!strcmp(key, "v") || !strcmp(key, "id") || !strcmp(key, "op"))
			continue;
		for (i = 0; allowed && allowed[i]; i++)
			if (!strcmp(allowed[i], key))
				break;
		if (!allowed || !allowed[i])
			return FAIL(rq, EINVAL, "unknown argument '%s' for op '%s'",
				    shown(key, b, sizeof(b)), rq->op);
	}
	return 0;
}

static int arg_str(struct req *rq, const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(rq->args, key);

	if (!v) {
		if (required)
			return FAIL(rq, EINVAL, "op '%s' needs the argument '%s'", rq->op, key);
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return FAIL(rq, EINVAL, "argument '%s' must be a string", key);
	*out = json_string_value(v);
	return 0;
}

static int arg_int(struct req *rq, const char *key, int64_t lo, int64_t hi, bool required,
		   int64_t *out)
{
	json_t *v = json_object_get(rq->args, key);

	if (!v) {
		if (required)
			return FAIL(rq, EINVAL, "op '%s' needs the argument '%s'", rq->op, key);
		return 0;
	}
	if (!json_is_integer(v))
		return FAIL(rq, EINVAL, "argument '%s' must be an integer", key);
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return FAIL(rq, json_integer_value(v) > hi ? ERANGE : EINVAL,
			    "argument '%s' = %" JSON_INTEGER_FORMAT " is out of range [%" PRId64 ", %" PRId64 "]",
			    key, json_integer_value(v), lo, hi);
	*out = json_integer_value(v);
	return 0;
}

static int arg_bool(struct req *rq, const char *key, bool *out)
{
	json_t *v = json_object_get(rq->args, key);

	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return FAIL(rq, EINVAL, "argument '%s' must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* A new shelf's name (create, rename): the rule the kernel applies (lfs_rules.h). */
static int check_new_name(struct req *rq, const char *prefix, const char *v)
{
	char msg[300];
	int r = lfs_rule_shelf_name(v, msg, sizeof(msg));

	return r < 0 ? FAIL(rq, -r, "%s%s", prefix, msg) : 0;
}

/*
 * The name of an existing shelf (get, destroy, rename's old name, activate,
 * attributes ...). A catalogue may hold shelves named under the librarian's
 * old rule (up to 128 characters, '+'): they must still be found, shown,
 * renamed to a valid name and destroyed. So a lookup refuses only what no
 * shelf can be named: empty, longer than that, or not printable.
 */
static int check_lookup_name(struct req *rq, const char *v)
{
	size_t n = strlen(v);
	char b[200];

	if (!n)
		return FAIL(rq, EINVAL, "shelf name '' is empty");
	if (n > LIB_OLD_NAME_MAX)
		return FAIL(rq, ENAMETOOLONG,
			    "shelf name '%s' is %zu characters long: no shelf has a name longer than %d",
			    shown(v, b, sizeof(b)), n, LIB_OLD_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)v[i]))
			return FAIL(rq, EINVAL,
				    "shelf name '%s' has a character that is not printable: no shelf has one",
				    shown(v, b, sizeof(b)));
	return 0;
}

static int check_attr_key(struct req *rq, const char *k)
{
	char msg[300];
	int r = lfs_rule_attr_key(k, msg, sizeof(msg));

	return r < 0 ? FAIL(rq, -r, "%s", msg) : 0;
}

/* The node an operation acts for: the caller, or for the admin "node": NAME. */
static int acting_node(struct req *rq, bool required, int *node)
{
	const char *name;
	char b[100];
	int r = arg_str(rq, "node", false, &name);

	if (r < 0)
		return r;
	if (!name) {
		*node = rq->who->node;
		if (required && *node < 0)
			return FAIL(rq, EINVAL, "op '%s' from the admin identity needs \"node\"",
				    rq->op);
		return 0;
	}
	if (!rq->who->admin && strcmp(name, rq->who->name))
		return FAIL(rq, EPERM, "node '%s' may not act for node '%s' (admin only)",
			    rq->who->name, shown(name, b, sizeof(b)));
	*node = lib_config_find_node(rq->c, name);
	if (*node < 0)
		return FAIL(rq, ENOENT, "no node named '%s' in the fabric", shown(name, b, sizeof(b)));
	return 0;
}

/* ---- shelf helpers ---- */

static int shelf_find(struct req *rq, const char *name, struct shelf *sh)
{
	sqlite3_stmt *st;
	char b[200];
	int rc;

	st = lib_stmt(rq->s, "SELECT id, books, gen, name FROM shelves WHERE name = ?1");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
		return FAIL(rq, ENOENT, "no shelf named '%s'", shown(name, b, sizeof(b)));
	}
	sh->id = sqlite3_column_int64(st, 0);
	sh->books = sqlite3_column_int64(st, 1);
	sh->gen = sqlite3_column_int64(st, 2);
	snprintf(sh->name, sizeof(sh->name), "%s", (const char *)sqlite3_column_text(st, 3));
	sqlite3_reset(st);
	return 0;
}

static int shelf_arg(struct req *rq, struct shelf *sh)
{
	const char *name;
	int r = arg_str(rq, "name", true, &name);

	if (r < 0 || (r = check_lookup_name(rq, name)) < 0)
		return r;
	return shelf_find(rq, name, sh);
}

static const char *attr_get(struct req *rq, int64_t shelf, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT value FROM attrs WHERE shelf = ?1 AND key = ?2");
	const char *out = NULL;

	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
		out = buf;
	}
	sqlite3_reset(st);
	return out;
}

static json_t *book_pair(int64_t id)
{
	return json_pack("[II]", (json_int_t)(id >> 32), (json_int_t)(id & 0xffffffff));
}

static json_t *shelf_map(struct req *rq, int64_t shelf, int64_t offset, int64_t limit)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT id FROM books WHERE shelf = ?1 AND seq >= ?2"
				    " ORDER BY seq LIMIT ?3");
	json_t *a = json_array();

	if (!st || !a) {
		json_decref(a);
		return NULL;
	}
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_int64(st, 2, offset);
	sqlite3_bind_int64(st, 3, limit);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, book_pair(sqlite3_column_int64(st, 0)));
	sqlite3_reset(st);
	return a;
}

static json_t *shelf_activations(struct req *rq, int64_t shelf)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT node, mode, since FROM activations WHERE shelf = ?1"
				    " ORDER BY node");
	json_t *a = json_array();

	if (!st)
		return a;
	sqlite3_bind_int64(st, 1, shelf);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, json_pack("{s:s,s:s,s:I}",
			"node", (const char *)sqlite3_column_text(st, 0),
			"mode", (const char *)sqlite3_column_text(st, 1),
			"since", (json_int_t)sqlite3_column_int64(st, 2)));
	sqlite3_reset(st);
	return a;
}

/* lfs.allocation: the shelf's books per IG and per node, as JSON text. */
static char *shelf_allocation(struct req *rq, int64_t shelf)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT id >> 32, count(*) FROM books WHERE shelf = ?1"
				    " GROUP BY 1 ORDER BY 1");
	json_t *igs = json_object(), *nodes = json_object(), *o;
	char *txt;

	if (st) {
		sqlite3_bind_int64(st, 1, shelf);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t ig = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);
			int k = lib_config_find_ig(rq->c, ig);
			const char *node = k >= 0 ? rq->c->nodes[rq->c->igs[k].node].name : "?";
			char key[24];

			snprintf(key, sizeof(key), "%" PRId64, ig);
			json_object_set_new(igs, key, json_integer(n));
			json_object_set_new(nodes, node, json_integer(n +
				json_integer_value(json_object_get(nodes, node))));
		}
		sqlite3_reset(st);
	}
	o = json_pack("{s:o,s:o}", "igs", igs, "nodes", nodes);
	txt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return txt;
}

static json_t *shelf_summary(struct req *rq, int64_t id)
{
	sqlite3_stmt *st = lib_stmt(rq->s,
		"SELECT name, uuid, owner, ctime, mtime, books, gen,"
		" (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy')"
		" FROM shelves s WHERE id = ?1");
	json_t *o = NULL;

	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *pol = (const char *)sqlite3_column_text(st, 7);

		o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:s}",
			"name", (const char *)sqlite3_column_text(st, 0),
			"uuid", (const char *)sqlite3_column_text(st, 1),
			"owner", (const char *)sqlite3_column_text(st, 2),
			"ctime", (json_int_t)sqlite3_column_int64(st, 3),
			"mtime", (json_int_t)sqlite3_column_int64(st, 4),
			"books", (json_int_t)sqlite3_column_int64(st, 5),
			"size", (json_int_t)(sqlite3_column_int64(st, 5) * (int64_t)rq->c->book_size),
			"gen", (json_int_t)sqlite3_column_int64(st, 6),
			"policy", pol ? pol : lfs_policy_name(rq->c->default_policy));
	}
	sqlite3_reset(st);
	if (o)
		json_object_set_new(o, "activations", shelf_activations(rq, id));
	return o;
}

/* Summary plus the book map (up to LIB_BOOKS_LIMIT books from offset). */
static json_t *shelf_full(struct req *rq, int64_t id, int64_t offset, int64_t limit)
{
	json_t *o = shelf_summary(rq, id);
	int64_t n;

	if (!o)
		return NULL;
	n = json_integer_value(json_object_get(o, "books"));
	json_object_set_new(o, "map_offset", json_integer(offset));
	json_object_set_new(o, "map", shelf_map(rq, id, offset, limit));
	json_object_set_new(o, "map_complete", json_boolean(offset + limit >= n));
	return o;
}

/* Activations of a shelf by nodes other than 'node'; the first is described. */
static int other_activations(struct req *rq, int64_t shelf, const char *node, bool rw_only,
			     char *holder, size_t hlen, char *mode, size_t mlen)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT node, mode FROM activations WHERE shelf = ?1"
				    " AND node <> ?2 AND (?3 = 0 OR mode = 'rw') ORDER BY node");
	int n = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, node ? node : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, rw_only);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (!n++) {
			snprintf(holder, hlen, "%s", (const char *)sqlite3_column_text(st, 0));
			snprintf(mode, mlen, "%s", (const char *)sqlite3_column_text(st, 1));
		}
	}
	sqlite3_reset(st);
	return n;
}

/* Shelf changes (resize, rename, destroy) need no activation by another node. */
static int require_unshared(struct req *rq, struct shelf *sh, const char *what)
{
	char holder[LFS_NODE_NAME_MAX + 1], mode[8];
	const char *me = rq->who->node >= 0 ? rq->who->name : NULL;
	int n = other_activations(rq, sh->id, me, false, holder, sizeof(holder), mode, sizeof(mode));

	if (n < 0)
		return lib_sql_fail(rq->s, &rq->err);
	if (n > 0)
		return FAIL(rq, EBUSY, "cannot %s shelf '%s': it is active on node '%s' (%s)%s",
			    what, sh->name, holder, mode, n > 1 ? " and others" : "");
	/* our own shared activation does not allow changing the shelf either */
	if (me) {
		n = other_activations(rq, sh->id, "", false, holder, sizeof(holder), mode,
				      sizeof(mode));
		if (n > 0 && strcmp(mode, "rw"))
			return FAIL(rq, EBUSY,
				    "cannot %s shelf '%s': it is active read-only on node '%s'",
				    what, sh->name, holder);
	}
	return 0;
}

static int parse_ig_list(struct req *rq, json_t *v, uint32_t **out, int *n)
{
	json_t *el;
	size_t i;
	char b[120];

	*out = NULL;
	*n = 0;
	if (json_is_string(v)) {
		/* stored form: "0,3,7" */
		const char *p = json_string_value(v);
		json_t *arr = json_array();
		int r;

		while (*p) {
			char *end;
			long long x = strtoll(p, &end, 10);

			if (end == p || (*end && *end != ',')) {
				json_decref(arr);
				return FAIL(rq, EINVAL, "lfs.igs '%s' must be a list of IG numbers such as \"0,3,7\"",
					    shown(json_string_value(v), b, sizeof(b)));
			}
			json_array_append_new(arr, json_integer(x));
			p = *end ? end + 1 : end;
		}
		r = parse_ig_list(rq, arr, out, n);
		json_decref(arr);
		return r;
	}
	if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > LIB_MAX_IGS)
		return FAIL(rq, EINVAL, "lfs.igs must be a non-empty list of IG numbers");
	*out = calloc(json_array_size(v), sizeof(**out));
	if (!*out)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(v, i, el) {
		char msg[200] = "";

		/* checked as a whole number: 2^32 must not wrap to IG 0 */
		if (!json_is_integer(el) ||
		    lfs_rule_ig(json_integer_value(el), "IG", msg, sizeof(msg)) < 0 ||
		    lib_config_find_ig(rq->c, json_integer_value(el)) < 0) {
			char *t = json_dumps(el, JSON_ENCODE_ANY);
			int r = FAIL(rq, EINVAL, "lfs.igs: %s is not an IG of the fabric%s%s",
				     t ? shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);

			free(t);
			free(*out);
			*out = NULL;
			return r;
		}
		(*out)[i] = json_integer_value(el);
	}
	*n = json_array_size(v);
	return 0;
}

static char *ig_list_text(const uint32_t *igs, int n)
{
	size_t len = (size_t)n * 12 + 1, off = 0;
	char *t = malloc(len);

	if (!t)
		return NULL;
	t[0] = 0;
	for (int i = 0; i < n; i++)
		off += snprintf(t + off, len - off, "%s%u", i ? "," : "", igs[i]);
	return t;
}

/*
 * An anti-affinity partner: a name a new shelf may have, or the name of an
 * existing shelf (which may be named under the old rule, see
 * check_lookup_name). A partner that does not exist yet constrains nothing.
 */
static int check_partner_name(struct req *rq, const char *v)
{
	struct shelf o;
	char msg[300];
	int r = lfs_rule_shelf_name(v, msg, sizeof(msg));

	if (r == 0)
		return 0;
	if (!strchr(v, ',') && strlen(v) <= LIB_OLD_NAME_MAX && shelf_find(rq, v, &o) == 0)
		return 0;
	if (rq->err.err && rq->err.err != ENOENT)
		return -rq->err.err;
	return FAIL(rq, -r, "lfs.anti_affinity: %s", msg);
}

/* lfs.anti_affinity: shelf names, as a JSON array or "a,b". Stored as "a,b". */
static int parse_avoid(struct req *rq, json_t *v, char **text)
{
	json_t *arr = v, *el;
	size_t i, len = 0;
	int r = 0;

	if (json_is_string(v)) {
		const char *p = json_string_value(v);

		arr = json_array();
		while (*p) {
			const char *c = strchr(p, ',');
			size_t l = c ? (size_t)(c - p) : strlen(p);

			json_array_append_new(arr, json_stringn(p, l));
			p += l + (c ? 1 : 0);
		}
	}
	if (!json_is_array(arr) || !json_array_size(arr) || json_array_size(arr) > 16) {
		r = FAIL(rq, EINVAL, "lfs.anti_affinity must name 1-16 shelves");
		goto out;
	}
	json_array_foreach(arr, i, el) {
		if (!json_is_string(el)) {
			r = FAIL(rq, EINVAL, "lfs.anti_affinity must be a list of shelf names");
			goto out;
		}
		r = check_partner_name(rq, json_string_value(el));
		if (r < 0)
			goto out;
		len += strlen(json_string_value(el)) + 1;
	}
	*text = calloc(1, len + 1);
	if (!*text) {
		r = FAIL(rq, ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(arr, i, el) {
		if (i)
			strcat(*text, ",");
		strcat(*text, json_string_value(el));
	}
out:
	if (arr != v)
		json_decref(arr);
	return r;
}

static int attr_write(struct req *rq, int64_t shelf, const char *key, const char *value)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "INSERT OR REPLACE INTO attrs(shelf, key, value)"
				    " VALUES (?1, ?2, ?3)");

	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	return 0;
}

/* "RandomBooks, LocalNode, ...": the names of lfs_rules.h, for messages. */
static const char *policy_list(char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < LFS_POL_COUNT && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s", i ? ", " : "", lfs_policy_name(i));
	return buf;
}

/* Validate and store one attribute; lfs.* keys are the system's. */
static int attr_set_checked(struct req *rq, int64_t shelf, const char *key, json_t *v)
{
	char b[200], list[300];
	char *txt = NULL;
	int r;

	r = check_attr_key(rq, key);
	if (r < 0)
		return r;
	if (!strcmp(key, "lfs.allocation"))
		return FAIL(rq, EPERM, "attribute 'lfs.allocation' is read-only");
	if (!strcmp(key, "lfs.policy")) {
		enum lfs_policy p;

		if (!json_is_string(v) || lfs_policy_parse(json_string_value(v), &p) < 0)
			return FAIL(rq, EINVAL, "unknown policy '%s' (%s)",
				    json_is_string(v) ? shown(json_string_value(v), b, sizeof(b)) : "?",
				    policy_list(list, sizeof(list)));
		return attr_write(rq, shelf, key, json_string_value(v));
	}
	if (!strcmp(key, "lfs.igs")) {
		uint32_t *igs;
		int n;

		r = parse_ig_list(rq, v, &igs, &n);
		if (r < 0)
			return r;
		txt = ig_list_text(igs, n);
		free(igs);
		r = txt ? attr_write(rq, shelf, key, txt) : FAIL(rq, ENOMEM, "out of memory");
		free(txt);
		return r;
	}
	if (!strcmp(key, "lfs.anti_affinity")) {
		r = parse_avoid(rq, v, &txt);
		if (r == 0)
			r = attr_write(rq, shelf, key, txt);
		free(txt);
		return r;
	}
	if (!strncmp(key, "lfs.", 4))
		return FAIL(rq, EINVAL,
			    "unknown system attribute '%s' (lfs.policy, lfs.igs, lfs.anti_affinity, lfs.allocation)",
			    key);
	if (!json_is_string(v))
		return FAIL(rq, EINVAL, "value of attribute '%s' must be a string", key);
	if (strlen(json_string_value(v)) > LIB_ATTR_VALUE_MAX)
		return FAIL(rq, E2BIG, "value of attribute '%s' is %zu bytes (at most %d)", key,
			    strlen(json_string_value(v)), LIB_ATTR_VALUE_MAX);
	if (memchr(json_string_value(v), 0, json_string_length(v)))
		return FAIL(rq, EINVAL, "value of attribute '%s' contains a NUL byte", key);
	{
		sqlite3_stmt *st = lib_stmt(rq->s, "SELECT count(*), sum(key = ?2) FROM attrs"
					    " WHERE shelf = ?1 AND key NOT LIKE 'lfs.%'");

		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_int64(st, 1, shelf);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) >= LIB_ATTRS_PER_SHELF &&
		    sqlite3_column_int(st, 1) == 0) {
			sqlite3_reset(st);
			return FAIL(rq, ENOSPC, "shelf already has %d attributes (the limit)",
				    LIB_ATTRS_PER_SHELF);
		}
		sqlite3_reset(st);
	}
	return attr_write(rq, shelf, key, json_string_value(v));
}

/* Load a shelf's allocation context from its attributes. */
static int shelf_ctx(struct req *rq, struct shelf *sh, int node, struct lib_shelf_ctx *x)
{
	char buf[LIB_ATTR_VALUE_MAX + 1];
	const char *v;
	int r;

	memset(x, 0, sizeof(*x));
	x->shelf_id = sh->id;
	x->nbooks = sh->books;
	x->node = node;
	x->policy = rq->c->default_policy;
	v = attr_get(rq, sh->id, "lfs.policy", buf, sizeof(buf));
	if (v && lfs_policy_parse(v, &x->policy) < 0)
		return FAIL(rq, EINVAL, "shelf '%s' has an unknown policy '%s'", sh->name, v);
	v = attr_get(rq, sh->id, "lfs.igs", buf, sizeof(buf));
	if (v) {
		json_t *j = json_string(v);

		r = parse_ig_list(rq, j, &x->req_igs, &x->nreq_igs);
		json_decref(j);
		if (r < 0)
			return r;
	}
	v = attr_get(rq, sh->id, "lfs.anti_affinity", buf, sizeof(buf));
	if (v) {
		char *save = NULL, *tok;

		x->avoid = calloc(17, sizeof(*x->avoid));
		if (!x->avoid)
			return FAIL(rq, ENOMEM, "out of memory");
		for (tok = strtok_r(buf, ",", &save); tok && x->navoid < 16;
		     tok = strtok_r(NULL, ",", &save)) {
			struct shelf o;

			if (!strcmp(tok, sh->name))
				continue;
			if (shelf_find(rq, tok, &o) == 0)
				x->avoid[x->navoid++] = o.id;
			/* a partner that does not exist (yet) constrains nothing */
		}
		rq->err.err = 0;
	}
	return 0;
}

static void shelf_ctx_free(struct lib_shelf_ctx *x)
{
	free(x->req_igs);
	free(x->avoid);
}

static int shelf_touch(struct req *rq, int64_t id, int64_t books)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "UPDATE shelves SET books = ?2, mtime = ?3, gen = gen + 1"
				    " WHERE id = ?1");

	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, books);
	sqlite3_bind_int64(st, 3, time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	return 0;
}

/* Grow by n books; *zeroed (if not NULL): all of them were known to be zero. */
static int shelf_grow(struct req *rq, struct shelf *sh, int node, int64_t n, bool *zeroed)
{
	struct lib_shelf_ctx x;
	int r = shelf_ctx(rq, sh, node, &x);

	if (r == 0)
		r = lib_alloc_books(rq->s, &x, n, &rq->err);
	if (r == 0 && zeroed)
		*zeroed = x.zeroed;
	shelf_ctx_free(&x);
	if (r == 0) {
		sh->books += n;
		r = shelf_touch(rq, sh->id, sh->books);
	}
	return r;
}

/*
 * Books at seq >= keep become ZOMBIE; returns the count or -errno. The shelf
 * may have written them: they are no longer known to be zero.
 */
static int64_t shelf_release(struct req *rq, int64_t shelf, int64_t keep)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "UPDATE books SET state = 2, shelf = NULL, seq = NULL,"
				    " zeroed = 0 WHERE shelf = ?1 AND seq >= ?2");

	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, shelf);
	sqlite3_bind_int64(st, 2, keep);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	return sqlite3_changes(rq->s->db);
}

static int64_t max_books(const struct lib_config *c)
{
	return (int64_t)c->total_books;
}

/* ---- operations ---- */

static int op_auth(struct req *rq)
{
	static const char *const a[] = { "node", NULL };
	const char *node;
	char b[100];
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = arg_str(rq, "node", false, &node)) < 0)
		return r;
	if (node) {
		if (rq->who->tls || *rq->authed) {
			/* over TLS the identity is the PSK identity; it cannot change */
			if (strcmp(node, rq->who->name))
				return FAIL(rq, EACCES,
					    "connection is authenticated as '%s', not '%s'",
					    rq->who->name, shown(node, b, sizeof(b)));
		} else if (strcmp(node, rq->who->name)) {
			/* local (unix socket) administration may act as a node */
			int k = lib_config_find_node(rq->c, node);

			if (k < 0)
				return FAIL(rq, ENOENT, "no node named '%s' in the fabric",
					    shown(node, b, sizeof(b)));
			snprintf(rq->who->name, sizeof(rq->who->name), "%s", node);
			rq->who->node = k;
			rq->who->admin = false;
		}
	}
	*rq->authed = true;
	lib_node_seen(rq->srv, rq->who->node);
	rq->result = json_pack("{s:s,s:b,s:I,s:i,s:i,s:i,s:s}",
		"node", rq->who->name, "admin", rq->who->admin,
		"book_size", (json_int_t)rq->c->book_size,
		"heartbeat_interval", rq->c->heartbeat_interval,
		"lease_time", rq->c->lease_time,
		"protocol", LFS_PROTOCOL_VERSION,
		"server", "librarian " LFS_VERSION);
	return 0;
}

static int op_geometry(struct req *rq)
{
	const struct lib_config *c = rq->c;
	json_t *racks = json_array(), *free_by_ig = json_object();
	sqlite3_stmt *st;
	int64_t now = lib_now_mono();
	int r;

	if ((r = check_args(rq, NULL)) < 0)
		return r;
	st = lib_stmt(rq->s, "SELECT ig, free FROM igs");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char k[24];

		snprintf(k, sizeof(k), "%lld", (long long)sqlite3_column_int64(st, 0));
		json_object_set_new(free_by_ig, k, json_integer(sqlite3_column_int64(st, 1)));
	}
	sqlite3_reset(st);
	for (int ri = 0; ri < c->nracks; ri++) {
		json_t *encs = json_array();

		for (int ei = 0; ei < c->nencs; ei++) {
			json_t *nodes;

			if (c->encs[ei].rack != ri)
				continue;
			nodes = json_array();
			for (int ni = 0; ni < c->nnodes; ni++) {
				const struct lib_node *n = &c->nodes[ni];
				json_t *igs;

				if (n->enc != ei)
					continue;
				igs = json_array();
				for (int g = 0; g < n->nigs; g++) {
					const struct lib_ig *ig = &c->igs[n->igs[g]];
					char k[24];

					snprintf(k, sizeof(k), "%u", ig->ig);
					json_array_append_new(igs, json_pack("{s:I,s:I,s:I}",
						"ig", (json_int_t)ig->ig, "books", (json_int_t)ig->books,
						"free", json_integer_value(json_object_get(free_by_ig, k))));
				}
				json_array_append_new(nodes, json_pack("{s:s,s:s,s:s,s:b,s:I,s:o}",
					"name", n->name, "power_domain", c->powers[n->power],
					"state", rq->s->node_offline[ni] ? "offline" : "online",
					"alive", now - rq->srv->last_seen[ni] <= c->lease_time,
					"last_seen_ago", (json_int_t)(now - rq->srv->last_seen[ni]),
					"igs", igs));
			}
			json_array_append_new(encs, json_pack("{s:s,s:o}", "name", c->encs[ei].name,
							       "nodes", nodes));
		}
		json_array_append_new(racks, json_pack("{s:s,s:o}", "name", c->racks[ri],
						       "enclosures", encs));
	}
	json_decref(free_by_ig);
	rq->result = json_pack("{s:I,s:I,s:o}", "book_size", (json_int_t)c->book_size,
			       "total_books", (json_int_t)c->total_books, "racks", racks);
	return 0;
}

static int op_stats(struct req *rq)
{
	sqlite3_stmt *st;
	int64_t freeb = 0, zombie = 0, inuse = 0, shelves = 0, acts = 0;
	json_t *db;
	int r;

	if ((r = check_args(rq, NULL)) < 0)
		return r;
	st = lib_stmt(rq->s, "SELECT (SELECT total(free) FROM igs),"
		      " (SELECT count(*) FROM books WHERE state = 2),"
		      " (SELECT total(books) FROM shelves), (SELECT count(*) FROM shelves),"
		      " (SELECT count(*) FROM activations)");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	if (sqlite3_step(st) == SQLITE_ROW) {
		freeb = sqlite3_column_int64(st, 0);
		zombie = sqlite3_column_int64(st, 1);
		inuse = sqlite3_column_int64(st, 2);
		shelves = sqlite3_column_int64(st, 3);
		acts = sqlite3_column_int64(st, 4);
	}
	sqlite3_reset(st);
	{
		/* the database's own work counters: load-independent cost measures */
		int hit = 0, miss = 0, wr = 0, hi;
		json_int_t steps = 0;
		unsigned long long wal_writes, wal_calls;

		sqlite3_db_status(rq->s->db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &hi, 0);
		sqlite3_db_status(rq->s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 0);
		sqlite3_db_status(rq->s->db, SQLITE_DBSTATUS_CACHE_WRITE, &wr, &hi, 0);
		for (int i = 0; i < rq->s->nst; i++)
			steps += sqlite3_stmt_status(rq->s->st[i], SQLITE_STMTSTATUS_VM_STEP, 0);
		lib_wal_vfs_stats(&wal_writes, &wal_calls);
		db = json_pack("{s:i,s:i,s:i,s:I,s:I,s:I}", "cache_hit", hit, "cache_miss", miss,
			       "cache_write", wr, "vm_steps", steps,
			       "wal_writes", (json_int_t)wal_writes,
			       "wal_write_calls", (json_int_t)wal_calls);
	}
	rq->result = json_pack("{s:{s:I,s:I,s:I,s:I,s:I},s:I,s:I,s:i,s:I,s:I,s:o}",
		"books", "total", (json_int_t)rq->c->total_books, "free", (json_int_t)freeb,
		"inuse", (json_int_t)inuse, "zombie", (json_int_t)zombie,
		"offline", (json_int_t)(rq->c->total_books - freeb - inuse - zombie),
		"shelves", (json_int_t)shelves, "activations", (json_int_t)acts,
		"connections", rq->srv->nconns, "requests", (json_int_t)rq->srv->requests,
		"uptime", (json_int_t)(lib_now_mono() - rq->srv->started), "db", db);
	return 0;
}

static int make_uuid(char out[37])
{
	unsigned char u[16];

	if (RAND_bytes(u, sizeof(u)) != 1)
		return -EIO;
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	return 0;
}

static int op_shelf_create(struct req *rq)
{
	static const char *const a[] = { "name", "books", "policy", "igs", "anti_affinity", "node",
					 "attrs", "activate", NULL };
	const char *name, *key, *act = NULL;
	char uuid[37];
	struct shelf sh = { 0 };
	sqlite3_stmt *st;
	json_t *attrs, *v;
	int64_t books = 0, now = time(NULL), count;
	bool zeroed = true;	/* an empty shelf has no byte that is not zero */
	int node, r;

	if ((r = check_args(rq, a)) < 0 || (r = arg_str(rq, "name", true, &name)) < 0 ||
	    (r = check_new_name(rq, "", name)) < 0 ||
	    (r = arg_int(rq, "books", 0, max_books(rq->c), false, &books)) < 0 ||
	    (r = arg_str(rq, "activate", false, &act)) < 0)
		return r;
	if (act && strcmp(act, "rw") && strcmp(act, "ro"))
		return FAIL(rq, EINVAL,
			    "activate '%.20s' must be \"rw\" (exclusive) or \"ro\" (shared read-only)",
			    act);
	if ((r = acting_node(rq, act != NULL, &node)) < 0)
		return r;
	attrs = json_object_get(rq->args, "attrs");
	if (attrs && (!json_is_object(attrs) || json_object_size(attrs) > LIB_ATTRS_PER_SHELF))
		return FAIL(rq, EINVAL, "argument 'attrs' must be an object of at most %d strings",
			    LIB_ATTRS_PER_SHELF);
	if (shelf_find(rq, name, &sh) == 0)
		return FAIL(rq, EEXIST, "shelf '%s' already exists", name);
	if (rq->err.err != ENOENT)
		return -rq->err.err;
	rq->err.err = 0;
	count = 0;
	st = lib_stmt(rq->s, "SELECT count(*) FROM shelves");
	if (st && sqlite3_step(st) == SQLITE_ROW)
		count = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (count >= rq->c->max_shelves)
		return FAIL(rq, ENOSPC, "the catalogue already holds %lld shelves (max_shelves)",
			    (long long)count);
	if (make_uuid(uuid) < 0)
		return FAIL(rq, EIO, "no random numbers for a UUID");
	st = lib_stmt(rq->s, "INSERT INTO shelves(name, uuid, owner, ctime, mtime) VALUES"
		      " (?1, ?2, ?3, ?4, ?4)");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, rq->who->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	sh.id = sqlite3_last_insert_rowid(rq->s->db);
	snprintf(sh.name, sizeof(sh.name), "%s", name);

	v = json_object_get(rq->args, "policy");
	if (v)
		r = attr_set_checked(rq, sh.id, "lfs.policy", v);
	else
		r = attr_write(rq, sh.id, "lfs.policy", lfs_policy_name(rq->c->default_policy));
	if (r < 0)
		return r;
	if ((v = json_object_get(rq->args, "igs")) &&
	    (r = attr_set_checked(rq, sh.id, "lfs.igs", v)) < 0)
		return r;
	if ((v = json_object_get(rq->args, "anti_affinity")) &&
	    (r = attr_set_checked(rq, sh.id, "lfs.anti_affinity", v)) < 0)
		return r;
	json_object_foreach(attrs, key, v) {
		if (!strncmp(key, "lfs.", 4))
			return FAIL(rq, EINVAL,
				    "set system attribute '%s' with its own argument (policy, igs, anti_affinity)",
				    key);
		r = attr_set_checked(rq, sh.id, key, v);
		if (r < 0)
			return r;
	}
	if (books) {
		r = shelf_grow(rq, &sh, node, books, &zeroed);
		if (r < 0)
			return r;
	}
	if (act) {
		/* create and activate in one request: a new shelf has no other holder */
		st = lib_stmt(rq->s, "INSERT INTO activations(shelf, node, mode, since)"
			      " VALUES (?1, ?2, ?3, ?4)");
		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_int64(st, 1, sh.id);
		sqlite3_bind_text(st, 2, rq->c->nodes[node].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, act, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, now);
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
	}
	rq->result = shelf_full(rq, sh.id, 0, LIB_BOOKS_LIMIT);
	/* every book was zeroed by its node since it was last freed: skip probing it */
	json_object_set_new(rq->result, "zeroed", json_boolean(zeroed));
	return 0;
}

static int op_shelf_destroy(struct req *rq)
{
	static const char *const a[] = { "name", "force", NULL };
	struct shelf sh;
	sqlite3_stmt *st;
	bool force;
	int64_t z;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_bool(rq, "force", &force)) < 0)
		return r;
	if (force && !rq->who->admin)
		return FAIL(rq, EPERM, "\"force\" needs the admin identity");
	if (!force) {
		char holder[LFS_NODE_NAME_MAX + 1], mode[8];
		int n = other_activations(rq, sh.id, NULL, false, holder, sizeof(holder), mode,
					  sizeof(mode));

		if (n > 0)
			return FAIL(rq, EBUSY,
				    "cannot destroy shelf '%s': it is active on node '%s' (%s)%s; deactivate it first",
				    sh.name, holder, mode, n > 1 ? " and others" : "");
	}
	z = shelf_release(rq, sh.id, 0);
	if (z < 0)
		return z;
	st = lib_stmt(rq->s, "DELETE FROM attrs WHERE shelf = ?1");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, sh.id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	st = lib_stmt(rq->s, "DELETE FROM activations WHERE shelf = ?1");
	sqlite3_bind_int64(st, 1, sh.id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	st = lib_stmt(rq->s, "DELETE FROM shelves WHERE id = ?1");
	sqlite3_bind_int64(st, 1, sh.id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	rq->result = json_pack("{s:s,s:I}", "name", sh.name, "zombies", (json_int_t)z);
	return 0;
}

static int op_shelf_resize(struct req *rq)
{
	static const char *const a[] = { "name", "books", "node", NULL };
	struct shelf sh;
	int64_t books = 0, old;
	json_t *delta = NULL;
	int node, r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_int(rq, "books", 0, max_books(rq->c), true, &books)) < 0 ||
	    (r = acting_node(rq, false, &node)) < 0 ||
	    (r = require_unshared(rq, &sh, "resize")) < 0)
		return r;
	old = sh.books;
	if (books > old) {
		r = shelf_grow(rq, &sh, node, books - old, NULL);
		if (r < 0)
			return r;
		if (books - old <= LIB_BOOKS_LIMIT)
			delta = json_pack("{s:o}", "added", shelf_map(rq, sh.id, old, books - old));
	} else if (books < old) {
		if (old - books <= LIB_BOOKS_LIMIT)
			delta = json_pack("{s:o}", "removed", shelf_map(rq, sh.id, books, old - books));
		r = shelf_release(rq, sh.id, books);
		if (r >= 0)
			r = shelf_touch(rq, sh.id, books);
		if (r < 0) {
			json_decref(delta);
			return r;
		}
	}
	rq->result = shelf_summary(rq, sh.id);
	json_object_set_new(rq->result, "old_books", json_integer(old));
	if (delta)
		json_object_update(rq->result, delta);
	json_decref(delta);
	return 0;
}

static int op_shelf_rename(struct req *rq)
{
	static const char *const a[] = { "name", "new_name", NULL };
	const char *nn;
	struct shelf sh, o;
	sqlite3_stmt *st;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_str(rq, "new_name", true, &nn)) < 0 ||
	    (r = check_new_name(rq, "new_name: ", nn)) < 0 ||
	    (r = require_unshared(rq, &sh, "rename")) < 0)
		return r;
	if (shelf_find(rq, nn, &o) == 0)
		return FAIL(rq, EEXIST, "cannot rename shelf '%s': shelf '%s' already exists",
			    sh.name, nn);
	rq->err.err = 0;
	st = lib_stmt(rq->s, "UPDATE shelves SET name = ?2, mtime = ?3, gen = gen + 1 WHERE id = ?1");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, sh.id);
	sqlite3_bind_text(st, 2, nn, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	rq->result = shelf_summary(rq, sh.id);
	return 0;
}

static int op_shelf_list(struct req *rq)
{
	static const char *const a[] = { "prefix", "offset", "limit", NULL };
	const char *prefix = NULL;
	int64_t offset = 0, limit = 1000, total = 0;
	sqlite3_stmt *st;
	json_t *arr;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = arg_str(rq, "prefix", false, &prefix)) < 0 ||
	    (r = arg_int(rq, "offset", 0, INT64_MAX / 2, false, &offset)) < 0 ||
	    (r = arg_int(rq, "limit", 1, LIB_LIST_LIMIT, false, &limit)) < 0)
		return r;
	if (!prefix)
		prefix = "";
	st = lib_stmt(rq->s,
		"SELECT s.name, s.uuid, s.owner, s.ctime, s.mtime, s.books, s.gen,"
		" (SELECT value FROM attrs WHERE shelf = s.id AND key = 'lfs.policy'),"
		" (SELECT group_concat(node || ':' || mode) FROM activations WHERE shelf = s.id)"
		" FROM shelves s WHERE substr(s.name, 1, length(?1)) = ?1 ORDER BY s.name"
		" LIMIT ?2 OFFSET ?3");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	arr = json_array();
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *pol = (const char *)sqlite3_column_text(st, 7);
		const char *acts = (const char *)sqlite3_column_text(st, 8);
		json_t *aa = json_array();

		if (acts) {
			char *dup = strdup(acts), *save = NULL, *tok;

			for (tok = dup ? strtok_r(dup, ",", &save) : NULL; tok;
			     tok = strtok_r(NULL, ",", &save)) {
				char *colon = strchr(tok, ':');

				if (!colon)
					continue;
				*colon = 0;
				json_array_append_new(aa, json_pack("{s:s,s:s}", "node", tok,
								    "mode", colon + 1));
			}
			free(dup);
		}
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:s,s:o}",
			"name", (const char *)sqlite3_column_text(st, 0),
			"uuid", (const char *)sqlite3_column_text(st, 1),
			"owner", (const char *)sqlite3_column_text(st, 2),
			"ctime", (json_int_t)sqlite3_column_int64(st, 3),
			"mtime", (json_int_t)sqlite3_column_int64(st, 4),
			"books", (json_int_t)sqlite3_column_int64(st, 5),
			"size", (json_int_t)(sqlite3_column_int64(st, 5) * (int64_t)rq->c->book_size),
			"gen", (json_int_t)sqlite3_column_int64(st, 6),
			"policy", pol ? pol : lfs_policy_name(rq->c->default_policy),
			"activations", aa));
	}
	sqlite3_reset(st);
	st = lib_stmt(rq->s, "SELECT count(*) FROM shelves WHERE substr(name, 1, length(?1)) = ?1");
	if (st) {
		sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			total = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	rq->result = json_pack("{s:o,s:I,s:I}", "shelves", arr, "total", (json_int_t)total,
			       "offset", (json_int_t)offset);
	return 0;
}

static json_t *attrs_object(struct req *rq, int64_t shelf)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT key, value FROM attrs WHERE shelf = ?1 ORDER BY key");
	json_t *o = json_object();
	char *alloc;

	if (st) {
		sqlite3_bind_int64(st, 1, shelf);
		while (sqlite3_step(st) == SQLITE_ROW)
			json_object_set_new(o, (const char *)sqlite3_column_text(st, 0),
					    json_string((const char *)sqlite3_column_text(st, 1)));
		sqlite3_reset(st);
	}
	alloc = shelf_allocation(rq, shelf);
	if (alloc)
		json_object_set_new(o, "lfs.allocation", json_string(alloc));
	free(alloc);
	return o;
}

static int op_shelf_get(struct req *rq)
{
	static const char *const a[] = { "name", "uuid", "offset", "limit", NULL };
	const char *name = NULL, *uuid = NULL;
	int64_t offset = 0, limit = LIB_BOOKS_LIMIT;
	struct shelf sh;
	char b[100];
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = arg_str(rq, "name", false, &name)) < 0 ||
	    (r = arg_str(rq, "uuid", false, &uuid)) < 0 ||
	    (r = arg_int(rq, "offset", 0, INT64_MAX / 2, false, &offset)) < 0 ||
	    (r = arg_int(rq, "limit", 0, LIB_BOOKS_LIMIT, false, &limit)) < 0)
		return r;
	if (!!name == !!uuid)
		return FAIL(rq, EINVAL, "shelf.get needs exactly one of \"name\" or \"uuid\"");
	if (uuid) {
		sqlite3_stmt *st = lib_stmt(rq->s, "SELECT name FROM shelves WHERE uuid = ?1");

		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			return FAIL(rq, ENOENT, "no shelf with UUID '%s'", shown(uuid, b, sizeof(b)));
		}
		snprintf(sh.name, sizeof(sh.name), "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_reset(st);
		name = sh.name;
	} else if ((r = check_lookup_name(rq, name)) < 0) {
		return r;
	}
	r = shelf_find(rq, name, &sh);
	if (r < 0)
		return r;
	rq->result = shelf_full(rq, sh.id, offset, limit);
	json_object_set_new(rq->result, "attrs", attrs_object(rq, sh.id));
	return 0;
}

static int op_attr_get(struct req *rq)
{
	static const char *const a[] = { "name", "key", NULL };
	char buf[LIB_ATTR_VALUE_MAX + 1], b[200];
	const char *key, *v;
	struct shelf sh;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_str(rq, "key", true, &key)) < 0 || (r = check_attr_key(rq, key)) < 0)
		return r;
	if (!strcmp(key, "lfs.allocation")) {
		char *t = shelf_allocation(rq, sh.id);

		rq->result = json_pack("{s:s,s:s}", "key", key, "value", t ? t : "{}");
		free(t);
		return 0;
	}
	v = attr_get(rq, sh.id, key, buf, sizeof(buf));
	if (!v && !strcmp(key, "lfs.policy"))
		v = lfs_policy_name(rq->c->default_policy);
	if (!v)
		return FAIL(rq, ENODATA, "shelf '%s' has no attribute '%s'", sh.name,
			    shown(key, b, sizeof(b)));
	rq->result = json_pack("{s:s,s:s}", "key", key, "value", v);
	return 0;
}

static int op_attr_set(struct req *rq)
{
	static const char *const a[] = { "name", "key", "value", NULL };
	const char *key;
	struct shelf sh;
	json_t *v;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_str(rq, "key", true, &key)) < 0)
		return r;
	v = json_object_get(rq->args, "value");
	if (!v)
		return FAIL(rq, EINVAL, "op 'attr.set' needs the argument 'value'");
	r = attr_set_checked(rq, sh.id, key, v);
	if (r < 0)
		return r;
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "key", key);
	return 0;
}

static int op_attr_list(struct req *rq)
{
	static const char *const a[] = { "name", NULL };
	struct shelf sh;
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0)
		return r;
	rq->result = json_pack("{s:s,s:o}", "name", sh.name, "attrs", attrs_object(rq, sh.id));
	return 0;
}

static int op_attr_remove(struct req *rq)
{
	static const char *const a[] = { "name", "key", NULL };
	const char *key;
	struct shelf sh;
	sqlite3_stmt *st;
	char b[200];
	int r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_str(rq, "key", true, &key)) < 0 || (r = check_attr_key(rq, key)) < 0)
		return r;
	if (!strcmp(key, "lfs.allocation"))
		return FAIL(rq, EPERM, "attribute 'lfs.allocation' is read-only");
	st = lib_stmt(rq->s, "DELETE FROM attrs WHERE shelf = ?1 AND key = ?2");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, sh.id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	if (!sqlite3_changes(rq->s->db))
		return FAIL(rq, ENODATA, "shelf '%s' has no attribute '%s'", sh.name,
			    shown(key, b, sizeof(b)));
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "key", key);
	return 0;
}

static bool node_alive(struct req *rq, const char *name, int64_t *ago)
{
	int k = lib_config_find_node(rq->c, name);

	if (k < 0) {
		*ago = -1;
		return false;
	}
	*ago = lib_now_mono() - rq->srv->last_seen[k];
	return *ago <= rq->c->lease_time && !rq->s->node_offline[k];
}

static int op_activate(struct req *rq)
{
	static const char *const a[] = { "name", "mode", "takeover", "force", "node", NULL };
	const char *mode = "rw";
	struct shelf sh;
	sqlite3_stmt *st;
	bool takeover, force;
	int node, r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = arg_str(rq, "mode", false, &mode)) < 0 ||
	    (r = arg_bool(rq, "takeover", &takeover)) < 0 ||
	    (r = arg_bool(rq, "force", &force)) < 0 || (r = acting_node(rq, true, &node)) < 0)
		return r;
	if (!mode)
		mode = "rw";
	if (strcmp(mode, "rw") && strcmp(mode, "ro"))
		return FAIL(rq, EINVAL, "mode '%.20s' must be \"rw\" (exclusive) or \"ro\" (shared read-only)",
			    mode);
	if (force && !rq->who->admin)
		return FAIL(rq, EPERM, "forced takeover needs the admin identity");
	for (;;) {
		char holder[LFS_NODE_NAME_MAX + 1], hmode[8];
		int64_t ago;
		int n = other_activations(rq, sh.id, rq->c->nodes[node].name, !strcmp(mode, "ro"),
					  holder, sizeof(holder), hmode, sizeof(hmode));

		if (n < 0)
			return lib_sql_fail(rq->s, &rq->err);
		if (n == 0)
			break;
		if (!takeover && !force)
			return FAIL(rq, EBUSY, "shelf '%s' is active on node '%s' (%s)", sh.name,
				    holder, hmode);
		if (node_alive(rq, holder, &ago) && !force)
			return FAIL(rq, EBUSY,
				    "shelf '%s' is active on node '%s' (%s), which is alive (last request %lld s ago, lease %d s); a takeover of a live node needs the admin identity and \"force\"",
				    sh.name, holder, hmode, (long long)ago, rq->c->lease_time);
		st = lib_stmt(rq->s, "DELETE FROM activations WHERE shelf = ?1 AND node = ?2");
		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_int64(st, 1, sh.id);
		sqlite3_bind_text(st, 2, holder, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
	}
	st = lib_stmt(rq->s, "INSERT OR REPLACE INTO activations(shelf, node, mode, since)"
		      " VALUES (?1, ?2, ?3, ?4)");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, sh.id);
	sqlite3_bind_text(st, 2, rq->c->nodes[node].name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, mode, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	rq->result = shelf_full(rq, sh.id, 0, LIB_BOOKS_LIMIT);
	return 0;
}

static int op_deactivate(struct req *rq)
{
	static const char *const a[] = { "name", "node", NULL };
	struct shelf sh;
	sqlite3_stmt *st;
	int node, r;

	if ((r = check_args(rq, a)) < 0 || (r = shelf_arg(rq, &sh)) < 0 ||
	    (r = acting_node(rq, true, &node)) < 0)
		return r;
	st = lib_stmt(rq->s, "DELETE FROM activations WHERE shelf = ?1 AND node = ?2");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_int64(st, 1, sh.id);
	sqlite3_bind_text(st, 2, rq->c->nodes[node].name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	if (!sqlite3_changes(rq->s->db)) {
		char holder[LFS_NODE_NAME_MAX + 1] = "", hmode[8];
		int n = other_activations(rq, sh.id, rq->c->nodes[node].name, false, holder,
					  sizeof(holder), hmode, sizeof(hmode));

		if (n > 0)
			return FAIL(rq, EPERM,
				    "shelf '%s' is not active on node '%s' (it is active on '%s'); only the holder deactivates",
				    sh.name, rq->c->nodes[node].name, holder);
		return FAIL(rq, ENOENT, "shelf '%s' is not active on node '%s'", sh.name,
			    rq->c->nodes[node].name);
	}
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "node", rq->c->nodes[node].name);
	return 0;
}

static int64_t zombie_count(struct req *rq, int node)
{
	const struct lib_node *n = &rq->c->nodes[node];
	int64_t total = 0;

	for (int g = 0; g < n->nigs; g++) {
		uint32_t ig = rq->c->igs[n->igs[g]].ig;
		sqlite3_stmt *st = lib_stmt(rq->s, "SELECT count(*) FROM books WHERE state = 2"
					    " AND id BETWEEN ?1 AND ?2");

		if (!st)
			break;
		sqlite3_bind_int64(st, 1, lib_book_id(ig, 0));
		sqlite3_bind_int64(st, 2, lib_book_id(ig, 0xffffffffU));
		if (sqlite3_step(st) == SQLITE_ROW)
			total += sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	return total;
}

static int op_heartbeat(struct req *rq)
{
	static const char *const a[] = { "node", NULL };
	sqlite3_stmt *st;
	json_t *acts;
	int node, r;

	if ((r = check_args(rq, a)) < 0 || (r = acting_node(rq, true, &node)) < 0)
		return r;
	lib_node_seen(rq->srv, node);
	st = lib_stmt(rq->s, "SELECT s.name, a.mode FROM activations a JOIN shelves s ON s.id = a.shelf"
		      " WHERE a.node = ?1 ORDER BY s.name");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_text(st, 1, rq->c->nodes[node].name, -1, SQLITE_STATIC);
	acts = json_array();
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(acts, json_pack("{s:s,s:s}",
			"name", (const char *)sqlite3_column_text(st, 0),
			"mode", (const char *)sqlite3_column_text(st, 1)));
	sqlite3_reset(st);
	rq->result = json_pack("{s:s,s:i,s:i,s:o,s:I}", "node", rq->c->nodes[node].name,
			       "lease_time", rq->c->lease_time,
			       "heartbeat_interval", rq->c->heartbeat_interval,
			       "activations", acts, "zombies", (json_int_t)zombie_count(rq, node));
	return 0;
}

static int op_zombie_list(struct req *rq)
{
	static const char *const a[] = { "node", "limit", NULL };
	const struct lib_node *n = NULL;
	int64_t limit = 4096, got = 0;
	json_t *arr;
	const char *name;
	int node = -1, r;

	if ((r = check_args(rq, a)) < 0 || (r = arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = arg_str(rq, "node", false, &name)) < 0)
		return r;
	if (name || !rq->who->admin) {
		r = acting_node(rq, true, &node);
		if (r < 0)
			return r;
		n = &rq->c->nodes[node];
	}
	arr = json_array();
	for (int g = 0; (n ? g < n->nigs : g < rq->c->nigs) && got < limit; g++) {
		uint32_t ig = rq->c->igs[n ? n->igs[g] : g].ig;
		sqlite3_stmt *st = lib_stmt(rq->s, "SELECT id FROM books WHERE state = 2"
					    " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3");

		if (!st) {
			json_decref(arr);
			return lib_sql_fail(rq->s, &rq->err);
		}
		sqlite3_bind_int64(st, 1, lib_book_id(ig, 0));
		sqlite3_bind_int64(st, 2, lib_book_id(ig, 0xffffffffU));
		sqlite3_bind_int64(st, 3, limit - got);
		while (sqlite3_step(st) == SQLITE_ROW) {
			json_array_append_new(arr, book_pair(sqlite3_column_int64(st, 0)));
			got++;
		}
		sqlite3_reset(st);
	}
	rq->result = json_pack("{s:o,s:b}", "books", arr, "more", got >= limit);
	return 0;
}

/*
 * books[i] of a request: an [ig, book] pair of the fabric (the IG checked as
 * a whole number: 2^32 is not IG 0), in one of the caller's IGs unless the
 * caller is the admin. *k is the IG's index in the configuration.
 */
static int book_ref(struct req *rq, size_t i, json_t *el, int64_t *id, int *k)
{
	const struct lib_config *c = rq->c;
	json_int_t ig, idx;
	char msg[200] = "";

	if (json_unpack(el, "[II!]", &ig, &idx) || lfs_rule_ig(ig, "IG", msg, sizeof(msg)) < 0 ||
	    idx < 0 || idx > 0xffffffffLL || (*k = lib_config_find_ig(c, ig)) < 0 ||
	    (uint64_t)idx >= c->igs[*k].books) {
		char *t = json_dumps(el, JSON_ENCODE_ANY | JSON_COMPACT);
		char b[100];
		int r = FAIL(rq, EINVAL, "books[%zu] = %s is not a book of the fabric ([ig, book])%s%s",
			     i, t ? shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);

		free(t);
		return r;
	}
	if (!rq->who->admin && c->igs[*k].node != rq->who->node)
		return FAIL(rq, EPERM, "book [%lld, %lld] is in IG %lld of node '%s', not of node '%s'",
			    (long long)ig, (long long)idx, (long long)ig,
			    c->nodes[c->igs[*k].node].name, rq->who->name);
	*id = lib_book_id(ig, idx);
	return 0;
}

static int op_zombie_zeroed(struct req *rq)
{
	static const char *const a[] = { "books", NULL };
	const struct lib_config *c = rq->c;
	json_t *books = json_object_get(rq->args, "books"), *el;
	int64_t *add = NULL;
	size_t i;
	int r;

	if ((r = check_args(rq, a)) < 0)
		return r;
	if (!json_is_array(books) || json_array_size(books) > LIB_BOOKS_LIMIT)
		return FAIL(rq, EINVAL, "argument 'books' must be a list of at most %d [ig, book] pairs",
			    LIB_BOOKS_LIMIT);
	add = calloc(c->nigs, sizeof(*add));
	if (!add)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(books, i, el) {
		sqlite3_stmt *st;
		int64_t id;
		int k, rc;

		r = book_ref(rq, i, el, &id, &k);
		if (r < 0)
			goto out;
		/*
		 * Known zero from now on, while it stays FREE or is allocated.
		 * A book that goes OFFLINE does not keep the flag: going back
		 * online clears it anyway (see op_node_set_state).
		 */
		st = lib_stmt(rq->s, "UPDATE books SET state = ?2, zeroed = (?2 = 0)"
			      " WHERE id = ?1 AND state = 2");
		if (!st)
			goto sqlfail;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, rq->s->node_offline[c->igs[k].node] ? BOOK_OFFLINE : BOOK_FREE);
		rc = sqlite3_step(st);
		if (rc != SQLITE_DONE)
			goto sqlfail;
		if (!sqlite3_changes(rq->s->db)) {
			r = FAIL(rq, EINVAL, "book [%lld, %lld] is not waiting to be zeroed (not ZOMBIE)",
				 (long long)(id >> 32), (long long)(id & 0xffffffff));
			goto out;
		}
		if (!rq->s->node_offline[c->igs[k].node])
			add[k]++;
	}
	for (int k = 0; k < c->nigs; k++) {
		sqlite3_stmt *st;

		if (!add[k])
			continue;
		st = lib_stmt(rq->s, "UPDATE igs SET free = free + ?2 WHERE ig = ?1");
		if (!st)
			goto sqlfail;
		sqlite3_bind_int64(st, 1, c->igs[k].ig);
		sqlite3_bind_int64(st, 2, add[k]);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlfail;
	}
	rq->result = json_pack("{s:I}", "freed", (json_int_t)json_array_size(books));
	r = 0;
	goto out;
sqlfail:
	r = lib_sql_fail(rq->s, &rq->err);
out:
	free(add);
	return r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * free.scrub: up to 'limit' FREE books of the node's IGs that are not known
 * zero (never reported zeroed since they became FREE: new memory, or memory
 * whose content the librarian forgot) become ZOMBIE, lowest book id first, so
 * that the node zeroes them through zombie.list/zombie.zeroed like freed
 * books. FREE books with zeroed = 1 stay. Within the request's transaction:
 * no book can be allocated and sent to scrub at once.
 */
static int op_free_scrub(struct req *rq)
{
	static const char *const a[] = { "node", "limit", NULL };
	const struct lib_node *n;
	int64_t limit = 4096, got = 0;
	uint32_t *igs;
	bool more = false;
	int node, r;

	if ((r = check_args(rq, a)) < 0 ||
	    (r = arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = acting_node(rq, true, &node)) < 0)
		return r;
	n = &rq->c->nodes[node];
	igs = calloc(n->nigs ? n->nigs : 1, sizeof(*igs));
	if (!igs)
		return FAIL(rq, ENOMEM, "out of memory");
	for (int g = 0; g < n->nigs; g++)
		igs[g] = rq->c->igs[n->igs[g]].ig;
	/* book-id order: IG by IG, lowest IG first */
	qsort(igs, n->nigs, sizeof(*igs), cmp_u32);
	for (int g = 0; g < n->nigs && !more; g++) {
		int64_t lo = lib_book_id(igs[g], 0), hi = lib_book_id(igs[g], 0xffffffffU), moved;
		sqlite3_stmt *st;

		if (got < limit) {
			st = lib_stmt(rq->s, "UPDATE books SET state = 2 WHERE id IN (SELECT id FROM books"
				      " WHERE state = 0 AND zeroed = 0 AND id BETWEEN ?1 AND ?2"
				      " ORDER BY id LIMIT ?3)");
			if (!st)
				goto sqlfail;
			sqlite3_bind_int64(st, 1, lo);
			sqlite3_bind_int64(st, 2, hi);
			sqlite3_bind_int64(st, 3, limit - got);
			if (sqlite3_step(st) != SQLITE_DONE)
				goto sqlfail;
			moved = sqlite3_changes(rq->s->db);
			if (moved) {
				st = lib_stmt(rq->s, "UPDATE igs SET free = free - ?2 WHERE ig = ?1");
				if (!st)
					goto sqlfail;
				sqlite3_bind_int64(st, 1, igs[g]);
				sqlite3_bind_int64(st, 2, moved);
				if (sqlite3_step(st) != SQLITE_DONE)
					goto sqlfail;
				got += moved;
			}
			if (got < limit)
				continue;	/* this IG has no more */
		}
		/* the limit is reached: does any FREE book not known zero remain? */
		st = lib_stmt(rq->s, "SELECT EXISTS (SELECT 1 FROM books WHERE state = 0"
			      " AND zeroed = 0 AND id BETWEEN ?1 AND ?2)");
		if (!st)
			goto sqlfail;
		sqlite3_bind_int64(st, 1, lo);
		sqlite3_bind_int64(st, 2, hi);
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			goto sqlfail;
		}
		more = sqlite3_column_int(st, 0) != 0;
		sqlite3_reset(st);
	}
	free(igs);
	rq->result = json_pack("{s:I,s:b}", "books", (json_int_t)got, "more", more);
	return 0;
sqlfail:
	free(igs);
	return lib_sql_fail(rq->s, &rq->err);
}

/*
 * free.unknown: the node's FREE books that are not known zero, in book-id
 * order after "after" ([ig, book]), at most "limit", and a token. The node's
 * agent reads them (LFS_CMD_BOOK_CHECK writes nothing) and reports those
 * that read as zeroes with free.checked and the token. Nothing changes here.
 */
static int op_free_unknown(struct req *rq)
{
	static const char *const a[] = { "node", "limit", "after", NULL };
	json_t *after = json_object_get(rq->args, "after"), *arr;
	int64_t limit = 4096, got = 0, from = 0;
	const struct lib_node *n;
	json_int_t aig, abook;
	uint32_t *igs;
	char token[48];
	int node, r;

	if ((r = check_args(rq, a)) < 0 ||
	    (r = arg_int(rq, "limit", 1, LIB_BOOKS_LIMIT, false, &limit)) < 0 ||
	    (r = acting_node(rq, true, &node)) < 0)
		return r;
	if (after) {
		char msg[200] = "";

		if (json_unpack(after, "[II!]", &aig, &abook) ||
		    lfs_rule_ig(aig, "IG", msg, sizeof(msg)) < 0 || abook < 0 || abook > 0xffffffffLL) {
			char *t = json_dumps(after, JSON_ENCODE_ANY | JSON_COMPACT);
			char b[100];

			r = FAIL(rq, EINVAL, "argument 'after' = %s must be an [ig, book] pair%s%s",
				 t ? shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);
			free(t);
			return r;
		}
		from = lib_book_id((uint32_t)aig, (uint32_t)abook) + 1;
	}
	n = &rq->c->nodes[node];
	igs = calloc(n->nigs ? n->nigs : 1, sizeof(*igs));
	if (!igs)
		return FAIL(rq, ENOMEM, "out of memory");
	for (int g = 0; g < n->nigs; g++)
		igs[g] = rq->c->igs[n->igs[g]].ig;
	qsort(igs, n->nigs, sizeof(*igs), cmp_u32);
	arr = json_array();
	for (int g = 0; g < n->nigs && got < limit; g++) {
		int64_t lo = lib_book_id(igs[g], 0), hi = lib_book_id(igs[g], 0xffffffffU);
		sqlite3_stmt *st;

		if (hi < from)
			continue;
		st = lib_stmt(rq->s, "SELECT id FROM books WHERE state = 0 AND zeroed = 0"
			      " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3");
		if (!st) {
			free(igs);
			json_decref(arr);
			return lib_sql_fail(rq->s, &rq->err);
		}
		sqlite3_bind_int64(st, 1, lo > from ? lo : from);
		sqlite3_bind_int64(st, 2, hi);
		sqlite3_bind_int64(st, 3, limit - got);
		while (sqlite3_step(st) == SQLITE_ROW) {
			json_array_append_new(arr, book_pair(sqlite3_column_int64(st, 0)));
			got++;
		}
		sqlite3_reset(st);
	}
	free(igs);
	snprintf(token, sizeof(token), "%016llx-%llu", (unsigned long long)rq->s->instance,
		 (unsigned long long)rq->s->changes);
	rq->result = json_pack("{s:o,s:b,s:s}", "books", arr, "more", got >= limit, "token", token);
	return 0;
}

/*
 * free.checked: "books" read as zeroes on the node after free.unknown gave
 * "token". Each becomes known zero if it is still FREE and not known zero and
 * nothing that could have changed it (an allocation from its IG, its node
 * going offline or online, a librarian restart) happened since the token.
 * The others are skipped: not an error, the agent checks them again later.
 */
static int op_free_checked(struct req *rq)
{
	static const char *const a[] = { "books", "token", NULL };
	json_t *books = json_object_get(rq->args, "books"), *el;
	unsigned long long inst, seen;
	int64_t marked = 0, skipped = 0;
	const char *token;
	char b[100];
	size_t i, tl;
	int r, end = 0;

	if ((r = check_args(rq, a)) < 0 || (r = arg_str(rq, "token", true, &token)) < 0)
		return r;
	tl = strlen(token);
	if (tl < 18 || tl > 36 || strspn(token, "0123456789abcdef") != 16 || token[16] != '-' ||
	    strspn(token + 17, "0123456789") != tl - 17 ||
	    sscanf(token, "%16llx-%llu%n", &inst, &seen, &end) != 2 || token[end])
		return FAIL(rq, EINVAL, "argument 'token' = '%s' is not a token from free.unknown",
			    shown(token, b, sizeof(b)));
	if (!json_is_array(books) || json_array_size(books) > LIB_BOOKS_LIMIT)
		return FAIL(rq, EINVAL, "argument 'books' must be a list of at most %d [ig, book] pairs",
			    LIB_BOOKS_LIMIT);
	json_array_foreach(books, i, el) {
		int64_t id;
		int k;

		if ((r = book_ref(rq, i, el, &id, &k)) < 0)
			return r;
	}
	json_array_foreach(books, i, el) {
		sqlite3_stmt *st;
		int64_t id;
		int k;

		book_ref(rq, i, el, &id, &k);
		if (inst != rq->s->instance || rq->s->ig_changed[k] > seen) {
			skipped++;
			continue;
		}
		st = lib_stmt(rq->s, "UPDATE books SET zeroed = 1 WHERE id = ?1 AND state = 0 AND zeroed = 0");
		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
		if (sqlite3_changes(rq->s->db))
			marked++;
		else
			skipped++;
	}
	rq->result = json_pack("{s:I,s:I}", "marked", (json_int_t)marked, "skipped", (json_int_t)skipped);
	return 0;
}

static int64_t query_free(struct req *rq, uint32_t ig)
{
	sqlite3_stmt *st = lib_stmt(rq->s, "SELECT count(*) FROM books WHERE state = 0"
				    " AND id BETWEEN ?1 AND ?2");
	int64_t n = 0;

	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, lib_book_id(ig, 0));
	sqlite3_bind_int64(st, 2, lib_book_id(ig, 0xffffffffU));
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return n;
}

static int op_node_set_state(struct req *rq)
{
	static const char *const a[] = { "node", "state", NULL };
	const struct lib_node *n;
	const char *state;
	sqlite3_stmt *st;
	int node, r, off;

	if ((r = check_args(rq, a)) < 0 || (r = acting_node(rq, true, &node)) < 0 ||
	    (r = arg_str(rq, "state", true, &state)) < 0)
		return r;
	if (strcmp(state, "online") && strcmp(state, "offline"))
		return FAIL(rq, EINVAL, "state '%.20s' must be \"online\" or \"offline\"", state);
	off = !strcmp(state, "offline");
	n = &rq->c->nodes[node];
	for (int g = 0; g < n->nigs; g++) {
		uint32_t ig = rq->c->igs[n->igs[g]].ig;

		lib_store_ig_changed(rq->s, n->igs[g]);
		/*
		 * The node may be powered off or serviced while offline and its
		 * memory lose or change its contents: a book that was known zero
		 * is not any more, in either direction.
		 */
		st = lib_stmt(rq->s, "UPDATE books SET state = ?3, zeroed = 0 WHERE state = ?4"
			      " AND id BETWEEN ?1 AND ?2");
		if (!st)
			return lib_sql_fail(rq->s, &rq->err);
		sqlite3_bind_int64(st, 1, lib_book_id(ig, 0));
		sqlite3_bind_int64(st, 2, lib_book_id(ig, 0xffffffffU));
		sqlite3_bind_int(st, 3, off ? BOOK_OFFLINE : BOOK_FREE);
		sqlite3_bind_int(st, 4, off ? BOOK_FREE : BOOK_OFFLINE);
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
		st = lib_stmt(rq->s, "UPDATE igs SET free = ?2 WHERE ig = ?1");
		sqlite3_bind_int64(st, 1, ig);
		sqlite3_bind_int64(st, 2, off ? 0 : query_free(rq, ig));
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
	}
	st = lib_stmt(rq->s, "UPDATE nodes SET state = ?2 WHERE name = ?1");
	if (!st)
		return lib_sql_fail(rq->s, &rq->err);
	sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		return lib_sql_fail(rq->s, &rq->err);
	if (off) {
		/* an offline node is fenced: its activations end */
		st = lib_stmt(rq->s, "DELETE FROM activations WHERE node = ?1");
		sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			return lib_sql_fail(rq->s, &rq->err);
	}
	rq->pending_node = node;
	rq->pending_offline = off;
	rq->result = json_pack("{s:s,s:s}", "node", n->name, "state", state);
	return 0;
}

enum { OP_READ = 1, OP_ADMIN = 2, OP_ANY_STATE = 4 };

static const struct op {
	const char *name;
	int (*fn)(struct req *rq);
	int flags;
} ops[] = {
	{ "auth", op_auth, OP_READ | OP_ANY_STATE },
	{ "geometry", op_geometry, OP_READ | OP_ANY_STATE },
	{ "stats", op_stats, OP_READ | OP_ANY_STATE },
	{ "shelf.create", op_shelf_create, 0 },
	{ "shelf.destroy", op_shelf_destroy, 0 },
	{ "shelf.resize", op_shelf_resize, 0 },
	{ "shelf.rename", op_shelf_rename, 0 },
	{ "shelf.list", op_shelf_list, OP_READ | OP_ANY_STATE },
	{ "shelf.get", op_shelf_get, OP_READ | OP_ANY_STATE },
	{ "attr.get", op_attr_get, OP_READ | OP_ANY_STATE },
	{ "attr.set", op_attr_set, 0 },
	{ "attr.list", op_attr_list, OP_READ | OP_ANY_STATE },
	{ "attr.remove", op_attr_remove, 0 },
	{ "shelf.activate", op_activate, 0 },
	{ "shelf.deactivate", op_deactivate, OP_ANY_STATE },
	{ "heartbeat", op_heartbeat, OP_READ | OP_ANY_STATE },
	{ "zombie.list", op_zombie_list, OP_READ },
	{ "zombie.zeroed", op_zombie_zeroed, 0 },
	{ "free.unknown", op_free_unknown, OP_READ },
	{ "free.checked", op_free_checked, 0 },
	{ "free.scrub", op_free_scrub, 0 },
	{ "node.set_state", op_node_set_state, OP_ADMIN | OP_ANY_STATE },
};

static json_t *reply_error(json_t *id, int err, const char *msg)
{
	return json_pack("{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", LFS_PROTOCOL_VERSION,
			 "id", id ? id : json_null(), "ok", 0, "error", "errno", err,
			 "code", lfs_errno_name(err), "message", msg);
}

/* Commit the round's transaction; on failure the in-memory node states are reloaded. */
int lib_batch_commit(struct lib_server *srv)
{
	struct lib_store *s = srv->store;

	if (srv->batch_open) {
		srv->batch_open = false;
		if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			lib_store_rollback(s);
			srv->batch_failed = true;
		}
	}
	if (!srv->batch_failed)
		return 0;
	for (int i = 0; i < srv->cfg->nnodes; i++) {
		sqlite3_stmt *st = lib_stmt(s, "SELECT state FROM nodes WHERE name = ?1");

		if (!st)
			break;
		sqlite3_bind_text(st, 1, srv->cfg->nodes[i].name, -1, SQLITE_STATIC);
		s->node_offline[i] = sqlite3_step(st) == SQLITE_ROW &&
				     !strcmp((const char *)sqlite3_column_text(st, 0), "offline");
		sqlite3_reset(st);
	}
	srv->batch_failed = false;
	return -EIO;
}

json_t *lib_handle_request(struct lib_server *srv, struct lib_identity *who, bool *authed,
			   const char *buf, size_t len)
{
	struct req rq = { .srv = srv, .s = srv->store, .c = srv->cfg, .who = who,
			  .authed = authed, .pending_node = -1 };
	const struct op *op = NULL;
	json_error_t jerr;
	json_t *req, *id, *v, *opv, *reply;
	char b[100];
	int r;

	srv->requests++;
	req = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req) {
		snprintf(rq.err.msg, sizeof(rq.err.msg), "malformed JSON at line %d column %d: %s",
			 jerr.line, jerr.column, jerr.text);
		return reply_error(NULL, EBADMSG, rq.err.msg);
	}
	if (!json_is_object(req)) {
		json_decref(req);
		return reply_error(NULL, EBADMSG, "a request must be a JSON object");
	}
	id = json_object_get(req, "id");
	if (id && !json_is_integer(id)) {
		json_decref(req);
		return reply_error(NULL, EINVAL, "request \"id\" must be an integer");
	}
	json_incref(id);
	v = json_object_get(req, "v");
	opv = json_object_get(req, "op");
	if (!json_is_integer(v) || json_integer_value(v) != LFS_PROTOCOL_VERSION) {
		char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;

		r = lib_fail(&rq.err, EPROTONOSUPPORT,
			     "protocol version %s is not supported (this librarian speaks version %d)",
			     t ? shown(t, b, sizeof(b)) : "(missing \"v\")", LFS_PROTOCOL_VERSION);
		free(t);
		goto out;
	}
	if (!json_is_string(opv)) {
		r = lib_fail(&rq.err, EINVAL, "request needs \"op\", a string");
		goto out;
	}
	rq.op = json_string_value(opv);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, rq.op))
			op = &ops[i];
	if (!op) {
		r = lib_fail(&rq.err, EOPNOTSUPP, "unknown operation '%s'",
			     shown(rq.op, b, sizeof(b)));
		goto out;
	}
	if (!*authed && op->fn != op_auth) {
		r = lib_fail(&rq.err, EACCES,
			     "not authenticated: the first request on a connection must be \"auth\"");
		goto out;
	}
	if ((op->flags & OP_ADMIN) && !who->admin) {
		r = lib_fail(&rq.err, EPERM, "operation '%s' needs the admin identity (caller is '%s')",
			     rq.op, who->name);
		goto out;
	}
	if (!(op->flags & OP_ANY_STATE) && who->node >= 0 && srv->store->node_offline[who->node]) {
		r = lib_fail(&rq.err, EPERM, "node '%s' is offline (set by the admin)", who->name);
		goto out;
	}
	rq.args = req;
	if (who->node >= 0)
		lib_node_seen(srv, who->node);
	/*
	 * Group commit: the requests of one event-loop round share a transaction
	 * (the server commits it before sending any of their replies); each
	 * request is a savepoint in it, so it is still applied whole or not at all.
	 */
	if (!srv->batch_open) {
		if (sqlite3_exec(srv->store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
			r = lib_sql_fail(srv->store, &rq.err);
			goto out;
		}
		srv->batch_open = true;
	}
	if (sqlite3_exec(srv->store->db, "SAVEPOINT req", NULL, NULL, NULL) != SQLITE_OK) {
		r = lib_sql_fail(srv->store, &rq.err);
		goto out;
	}
	r = op->fn(&rq);
	if (r == 0 && !rq.result)
		r = lib_fail(&rq.err, ENOMEM, "out of memory building the reply");
	if (sqlite3_get_autocommit(srv->store->db)) {
		/* SQLite abandoned the whole transaction (I/O error, disk full) */
		srv->batch_open = false;
		srv->batch_failed = true;
		if (r == 0)
			r = lib_fail(&rq.err, EIO, "the database transaction was lost");
	} else if (r < 0) {
		sqlite3_exec(srv->store->db, "ROLLBACK TO req; RELEASE req", NULL, NULL, NULL);
	} else if (sqlite3_exec(srv->store->db, "RELEASE req", NULL, NULL, NULL) != SQLITE_OK) {
		r = lib_sql_fail(srv->store, &rq.err);
	} else if (rq.pending_node >= 0) {
		srv->store->node_offline[rq.pending_node] = rq.pending_offline;
	}
out:
	if (r < 0) {
		int err = rq.err.err ? rq.err.err : -r;

		reply = reply_error(id, err, rq.err.msg[0] ? rq.err.msg : strerror(err));
		json_decref(rq.result);
	} else {
		reply = json_pack("{s:i,s:O,s:b,s:o}", "v", LFS_PROTOCOL_VERSION,
				  "id", id ? id : json_null(), "ok", 1, "result", rq.result);
	}
	json_decref(id);
	json_decref(req);
	return reply;
}
