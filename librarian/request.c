// SPDX-License-Identifier: GPL-2.0
/*
 * A request's arguments, checked strictly: unknown members, wrong types and
 * out-of-range values are refused with a message naming the value.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

int lib_args_check(struct req *rq, const char *const *allowed)
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
				    lib_shown(key, b, sizeof(b)), rq->op);
	}
	return 0;
}

int lib_arg_str(struct req *rq, const char *key, bool required, const char **out)
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

int lib_arg_int(struct req *rq, const char *key, int64_t lo, int64_t hi, bool required,
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
			    "argument '%s' = %" JSON_INTEGER_FORMAT " is out of range [%" PRId64
			    ", %" PRId64 "]",
			    key, json_integer_value(v), lo, hi);
	*out = json_integer_value(v);
	return 0;
}

int lib_arg_bool(struct req *rq, const char *key, bool *out)
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

int lib_arg_node(struct req *rq, bool required, int *node)
{
	const char *name;
	char b[100];
	int r = lib_arg_str(rq, "node", false, &name);

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
			    rq->who->name, lib_shown(name, b, sizeof(b)));
	*node = lib_config_find_node(rq->c, name);
	if (*node < 0)
		return FAIL(rq, ENOENT, "no node named '%s' in the fabric",
			    lib_shown(name, b, sizeof(b)));
	return 0;
}

int lib_check_new_name(struct req *rq, const char *prefix, const char *name)
{
	char msg[300];
	int r = lfs_rule_shelf_name(name, msg, sizeof(msg));

	return r < 0 ? FAIL(rq, -r, "%s%s", prefix, msg) : 0;
}

int lib_check_shelf_books(struct req *rq, int64_t books)
{
	char msg[200];
	int r = lfs_rule_shelf_books((uint64_t)books, msg, sizeof(msg));

	return r < 0 ? FAIL(rq, -r, "%s", msg) : 0;
}

/*
 * The name of an existing shelf (get, destroy, rename's old name, activate,
 * attributes ...). A catalogue may hold shelves named under the librarian's
 * old rule (up to 128 characters, '+'): they must still be found, shown,
 * renamed to a valid name and destroyed. So a lookup refuses only what no
 * shelf can be named: empty, longer than that, or not printable.
 */
int lib_check_lookup_name(struct req *rq, const char *name)
{
	size_t n = strlen(name);
	char b[200];

	if (!n)
		return FAIL(rq, EINVAL, "shelf name '' is empty");
	if (n > LIB_OLD_NAME_MAX)
		return FAIL(
			rq, ENAMETOOLONG,
			"shelf name '%s' is %zu characters long: no shelf has a name longer than %d",
			lib_shown(name, b, sizeof(b)), n, LIB_OLD_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)name[i]))
			return FAIL(
				rq, EINVAL,
				"shelf name '%s' has a character that is not printable: no shelf has one",
				lib_shown(name, b, sizeof(b)));
	return 0;
}

/* A shelf the caller does not see (access.c) is not found either. */
int lib_shelf_lookup(struct req *rq, const char *name, struct lib_shelf *sh)
{
	char b[200];
	int r = lib_check_lookup_name(rq, name);

	if (r < 0)
		return r;
	r = lib_store_shelf_find(rq->s, name, sh, &rq->err);
	if (r == -ENOENT)
		return FAIL(rq, ENOENT, "no shelf named '%s'", lib_shown(name, b, sizeof(b)));
	return r < 0 ? r : lib_require_access(rq, sh, ACC_SEE, "see");
}

int lib_arg_shelf(struct req *rq, struct lib_shelf *sh)
{
	const char *name = NULL;
	int r = lib_arg_str(rq, "name", true, &name);

	return r < 0 ? r : lib_shelf_lookup(rq, name, sh);
}

int lib_arg_same_shelf(struct req *rq, const struct lib_shelf *sh)
{
	const char *uuid = NULL;
	struct lib_shelf u;
	char b[100];
	int r = lib_arg_str(rq, "uuid", false, &uuid);

	if (r < 0 || !uuid)
		return r;
	r = lib_store_shelf_find_uuid(rq->s, uuid, &u, &rq->err);
	if (r == -ENOENT || (r == 0 && u.id != sh->id))
		return FAIL(
			rq, ESTALE,
			"shelf '%s' is no longer the one with UUID '%s': renamed or replaced since",
			sh->name, lib_shown(uuid, b, sizeof(b)));
	return r;
}
