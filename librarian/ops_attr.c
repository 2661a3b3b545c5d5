// SPDX-License-Identifier: GPL-2.0
/*
 * Shelf attributes: attr.get, attr.set, attr.list, attr.remove. Keys
 * starting with "lfs." are the system's: lfs.policy, lfs.igs and
 * lfs.anti_affinity are checked and stored in one form, lfs.access is the
 * access list (access.c, kept in its own table), lfs.size the shelf's bytes
 * (shelf_size.c), lfs.allocation is computed (reply.c). A grow reads the
 * first three (lib_shelf_ctx_load). Changing an attribute needs "rw" access
 * (lfs.access: "all") and, for a node, that no other node has the shelf
 * active; a node that holds it "shared" sets lfs.size all the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

static int check_key(struct req *rq, const char *key)
{
	char msg[300];
	int r = lfs_rule_attr_key(key, msg, sizeof(msg));

	return r < 0 ? FAIL(rq, -r, "%s", msg) : 0;
}

/* lfs.igs in its stored form, "0,3,7", as a JSON array (NULL: not that form). */
static json_t *ig_text_array(struct req *rq, const char *text)
{
	json_t *arr = json_array();
	const char *p = text;
	char b[120];

	while (*p) {
		char *end;
		long long x = strtoll(p, &end, 10);

		if (end == p || (*end && *end != ',')) {
			json_decref(arr);
			FAIL(rq, EINVAL,
			     "lfs.igs '%s' must be a list of IG numbers such as \"0,3,7\"",
			     lib_shown(text, b, sizeof(b)));
			return NULL;
		}
		json_array_append_new(arr, json_integer(x));
		p = *end ? end + 1 : end;
	}
	return arr;
}

/* One entry of lfs.igs: a whole number (2^32 must not wrap to IG 0) of an IG of the fabric. */
static int ig_entry(struct req *rq, json_t *el)
{
	char msg[200] = "", b[120];
	char *t;
	int r;

	if (json_is_integer(el) &&
	    lfs_rule_ig(json_integer_value(el), "IG", msg, sizeof(msg)) == 0 &&
	    lib_config_find_ig(rq->c, json_integer_value(el)) >= 0)
		return 0;
	t = json_dumps(el, JSON_ENCODE_ANY);
	r = FAIL(rq, EINVAL, "lfs.igs: %s is not an IG of the fabric%s%s",
		 t ? lib_shown(t, b, sizeof(b)) : "?", msg[0] ? ": " : "", msg);
	free(t);
	return r;
}

static int ig_array_parse(struct req *rq, json_t *arr, uint32_t **out, int *n)
{
	json_t *el;
	size_t i;

	if (!json_is_array(arr) || !json_array_size(arr) || json_array_size(arr) > LIB_MAX_IGS)
		return FAIL(rq, EINVAL, "lfs.igs must be a non-empty list of IG numbers");
	json_array_foreach(arr, i, el) {
		int r = ig_entry(rq, el);

		if (r < 0)
			return r;
	}
	*out = calloc(json_array_size(arr), sizeof(**out));
	if (!*out)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(arr, i, el)
		(*out)[i] = json_integer_value(el);
	*n = json_array_size(arr);
	return 0;
}

/* lfs.igs: a JSON array of IG numbers, or the stored text. */
static int ig_list_parse(struct req *rq, json_t *v, uint32_t **out, int *n)
{
	json_t *arr = json_is_string(v) ? ig_text_array(rq, json_string_value(v)) : json_incref(v);
	int r;

	*out = NULL;
	*n = 0;
	if (!arr)
		return json_is_string(v) ?
			       -rq->err.err :
			       FAIL(rq, EINVAL, "lfs.igs must be a non-empty list of IG numbers");
	r = ig_array_parse(rq, arr, out, n);
	json_decref(arr);
	return r;
}

static int set_igs(struct req *rq, int64_t shelf, json_t *v)
{
	uint32_t *igs;
	size_t len, off = 0;
	char *t;
	int n, r = ig_list_parse(rq, v, &igs, &n);

	if (r < 0)
		return r;
	len = (size_t)n * 12 + 1;
	t = malloc(len);
	if (!t) {
		free(igs);
		return FAIL(rq, ENOMEM, "out of memory");
	}
	t[0] = 0;
	for (int i = 0; i < n; i++)
		off += snprintf(t + off, len - off, "%s%u", i ? "," : "", igs[i]);
	free(igs);
	r = lib_store_attr_put(rq->s, shelf, "lfs.igs", t, &rq->err);
	free(t);
	return r;
}

/* 1 if who may see shelf o (0: as if it did not exist), or a negative errno. */
static int sees(struct req *rq, struct lib_identity *who, const struct lib_shelf *o)
{
	struct lib_identity *caller = rq->who;
	enum lib_access level = ACC_NONE;
	int r;

	rq->who = who;
	r = lib_access_of(rq, o, &level);
	rq->who = caller;
	return r < 0 ? r : level != ACC_NONE;
}

/*
 * Whether partner o constrains shelf sh: a partner the caller may not see,
 * or (for the admin or a grantee) the shelf's owner may not, counts as one
 * that does not exist, so that where sh's books go says nothing of it.
 */
static int partner_visible(struct req *rq, const struct lib_shelf *sh, const struct lib_shelf *o)
{
	struct lib_identity owner = { .node = lib_config_find_node(rq->c, sh->owner) };
	int r = sees(rq, rq->who, o);

	if (r <= 0 || owner.node < 0 || !strcmp(sh->owner, rq->who->name))
		return r;
	snprintf(owner.name, sizeof(owner.name), "%s", sh->owner);
	return sees(rq, &owner, o);
}

/*
 * An anti-affinity partner: a name a new shelf may have, or the name of an
 * existing shelf (which may be named under the old rule, see
 * lib_check_lookup_name) that the caller may see. A partner that does not
 * exist yet constrains nothing.
 */
static int check_partner(struct req *rq, const char *v)
{
	struct lib_shelf o;
	char msg[300];
	int r = lfs_rule_shelf_name(v, msg, sizeof(msg)), found = -ENOENT;

	if (r == 0)
		return 0;
	if (!strchr(v, ',') && strlen(v) <= LIB_OLD_NAME_MAX)
		found = lib_store_shelf_find(rq->s, v, &o, &rq->err);
	if (found == 0)
		found = sees(rq, rq->who, &o); /* 0: answered as a shelf that does not exist */
	if (found > 0)
		return 0;
	if (found < 0 && found != -ENOENT)
		return found;
	return FAIL(rq, -r, "lfs.anti_affinity: %s", msg);
}

/* lfs.anti_affinity as a JSON array of names: checked, stored as "a,b". */
static int put_partners(struct req *rq, int64_t shelf, json_t *arr)
{
	json_t *el;
	size_t i, len = 0;
	char *text;
	int r;

	if (!json_is_array(arr) || !json_array_size(arr) || json_array_size(arr) > 16)
		return FAIL(rq, EINVAL, "lfs.anti_affinity must name 1-16 shelves");
	json_array_foreach(arr, i, el) {
		if (!json_is_string(el))
			return FAIL(rq, EINVAL, "lfs.anti_affinity must be a list of shelf names");
		r = check_partner(rq, json_string_value(el));
		if (r < 0)
			return r;
		len += strlen(json_string_value(el)) + 1;
	}
	text = calloc(1, len + 1);
	if (!text)
		return FAIL(rq, ENOMEM, "out of memory");
	json_array_foreach(arr, i, el) {
		if (i)
			strcat(text, ",");
		strcat(text, json_string_value(el));
	}
	r = lib_store_attr_put(rq->s, shelf, "lfs.anti_affinity", text, &rq->err);
	free(text);
	return r;
}

/* lfs.anti_affinity: shelf names, as a JSON array or "a,b". */
static int set_partners(struct req *rq, int64_t shelf, json_t *v)
{
	const char *p;
	json_t *arr;
	int r;

	if (!json_is_string(v))
		return put_partners(rq, shelf, v);
	arr = json_array();
	for (p = json_string_value(v); *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		json_array_append_new(arr, json_stringn(p, l));
		p += l + (c ? 1 : 0);
	}
	r = put_partners(rq, shelf, arr);
	json_decref(arr);
	return r;
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

static int set_policy(struct req *rq, int64_t shelf, json_t *v)
{
	enum lfs_policy p;
	char b[200], list[300];

	if (!json_is_string(v) || lfs_policy_parse(json_string_value(v), &p) < 0)
		return FAIL(rq, EINVAL, "unknown policy '%s' (%s)",
			    json_is_string(v) ? lib_shown(json_string_value(v), b, sizeof(b)) : "?",
			    policy_list(list, sizeof(list)));
	return lib_store_attr_put(rq->s, shelf, "lfs.policy", json_string_value(v), &rq->err);
}

/* A user attribute: a string of at most LIB_ATTR_VALUE_MAX bytes, within the count. */
static int set_user(struct req *rq, int64_t shelf, const char *key, json_t *v)
{
	bool has;
	int n, r;

	if (!json_is_string(v))
		return FAIL(rq, EINVAL, "value of attribute '%s' must be a string", key);
	if (strlen(json_string_value(v)) > LIB_ATTR_VALUE_MAX)
		return FAIL(rq, E2BIG, "value of attribute '%s' is %zu bytes (at most %d)", key,
			    strlen(json_string_value(v)), LIB_ATTR_VALUE_MAX);
	if (memchr(json_string_value(v), 0, json_string_length(v)))
		return FAIL(rq, EINVAL, "value of attribute '%s' contains a NUL byte", key);
	r = lib_store_attr_user_count(rq->s, shelf, key, &n, &has, &rq->err);
	if (r < 0)
		return r;
	if (n >= LIB_ATTRS_PER_SHELF && !has)
		return FAIL(rq, ENOSPC, "shelf already has %d attributes (the limit)",
			    LIB_ATTRS_PER_SHELF);
	return lib_store_attr_put(rq->s, shelf, key, json_string_value(v), &rq->err);
}

/* Check and store one attribute; lfs.* keys are the system's. */
int lib_attr_set(struct req *rq, const struct lib_shelf *sh, const char *key, json_t *v)
{
	int64_t shelf = sh->id;
	int r = check_key(rq, key);

	if (r < 0)
		return r;
	if (!strcmp(key, "lfs.allocation"))
		return FAIL(rq, EPERM, "attribute 'lfs.allocation' is read-only");
	if (!strcmp(key, "lfs.policy"))
		return set_policy(rq, shelf, v);
	if (!strcmp(key, "lfs.igs"))
		return set_igs(rq, shelf, v);
	if (!strcmp(key, "lfs.anti_affinity"))
		return set_partners(rq, shelf, v);
	if (!strcmp(key, "lfs.incomplete"))
		return FAIL(
			rq, EPERM,
			"attribute 'lfs.incomplete' is set only by shelf.create (lfsvol copy); attr.remove takes it off");
	if (!strcmp(key, "lfs.access"))
		return lib_access_set(rq, shelf, v);
	if (!strcmp(key, LIB_ATTR_SIZE))
		return lib_size_set(rq, sh, v);
	if (!strncmp(key, "lfs.", 4))
		return FAIL(
			rq, EINVAL,
			"unknown system attribute '%s' (lfs.policy, lfs.igs, lfs.anti_affinity, lfs.access, lfs.size, lfs.allocation, lfs.incomplete)",
			key);
	return set_user(rq, shelf, key, v);
}

/* The ids of the shelves named in lfs.anti_affinity text (not the shelf itself). */
static int load_partners(struct req *rq, struct lib_shelf *sh, char *text, struct lib_shelf_ctx *x)
{
	char *save = NULL, *tok;

	x->avoid = calloc(17, sizeof(*x->avoid));
	if (!x->avoid)
		return FAIL(rq, ENOMEM, "out of memory");
	for (tok = strtok_r(text, ",", &save); tok && x->navoid < 16;
	     tok = strtok_r(NULL, ",", &save)) {
		struct lib_shelf o;
		int r;

		if (!strcmp(tok, sh->name))
			continue;
		r = lib_store_shelf_find(rq->s, tok, &o, &rq->err);
		if (r == 0)
			r = partner_visible(rq, sh, &o);
		/* a partner that does not exist (yet), or not for them, constrains nothing */
		if (r > 0)
			x->avoid[x->navoid++] = o.id;
		else if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

/* What a grow of the shelf needs from its attributes: policy, lfs.igs, partners. */
/* The placement attributes, read in one statement. */
static const char *const placement_keys[3] = { "lfs.policy", "lfs.igs", "lfs.anti_affinity" };

static int ctx_parse(struct req *rq, struct lib_shelf *sh, char *const val[3], int found,
		     struct lib_shelf_ctx *x)
{
	int r = 0;

	if ((found & 1) && lfs_policy_parse(val[0], &x->policy) < 0)
		return FAIL(rq, EINVAL, "shelf '%s' has an unknown policy '%s'", sh->name, val[0]);
	if (found & 2) {
		json_t *text = json_string(val[1]);

		r = ig_list_parse(rq, text, &x->req_igs, &x->nreq_igs);
		json_decref(text);
	}
	if (r == 0 && (found & 4))
		r = load_partners(rq, sh, val[2], x);
	return r;
}

int lib_shelf_ctx_load(struct req *rq, struct lib_shelf *sh, int node, struct lib_shelf_ctx *x)
{
	char *buf = malloc(3 * (LIB_ATTR_VALUE_MAX + 1));
	char *val[3] = { buf, buf + LIB_ATTR_VALUE_MAX + 1, buf + 2 * (LIB_ATTR_VALUE_MAX + 1) };
	int r;

	memset(x, 0, sizeof(*x));
	x->shelf_id = sh->id;
	x->nbooks = sh->books;
	x->node = node;
	x->policy = rq->c->default_policy;
	if (!buf)
		return FAIL(rq, ENOMEM, "out of memory");
	r = lib_store_attr_get3(rq->s, sh->id, placement_keys, val, LIB_ATTR_VALUE_MAX + 1,
				&rq->err);
	if (r >= 0)
		r = ctx_parse(rq, sh, val, r, x);
	free(buf);
	return r;
}

int lib_shelf_ctx_texts(struct req *rq, struct lib_shelf *sh, int node, const char *const text[3],
			struct lib_shelf_ctx *x)
{
	char *val[3] = { NULL, NULL, NULL };
	int found = 0, r = 0;

	if (!text)
		return lib_shelf_ctx_load(rq, sh, node, x);
	memset(x, 0, sizeof(*x));
	x->shelf_id = sh->id;
	x->nbooks = sh->books;
	x->node = node;
	x->policy = rq->c->default_policy;
	for (int i = 0; i < 3; i++) {
		if (!text[i])
			continue;
		found |= 1 << i;
		if (!(val[i] = strdup(text[i])))
			r = FAIL(rq, ENOMEM, "out of memory");
	}
	if (r == 0)
		r = ctx_parse(rq, sh, val, found, x);
	for (int i = 0; i < 3; i++)
		free(val[i]);
	return r;
}

void lib_shelf_ctx_free(struct lib_shelf_ctx *x)
{
	free(x->req_igs);
	free(x->avoid);
	free(x->taken);
}

/* lfs.access as attr.get shows it: "WHO:LEVEL,..." (ENODATA if the shelf has none). */
static int access_text(struct req *rq, int64_t shelf, char *buf, size_t len)
{
	json_t *a = lib_access_list(rq, shelf), *el;
	size_t i, o = 0;

	buf[0] = 0;
	json_array_foreach(a, i, el)
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s", i ? "," : "",
			      json_string_value(el));
	json_decref(a);
	return buf[0] ? 0 : -ENODATA;
}

int lib_op_attr_get(struct req *rq)
{
	char buf[LIB_ATTR_VALUE_MAX + 1], b[200];
	const char *key, *v = buf;
	struct lib_shelf sh;
	int r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_str(rq, "key", true, &key)) < 0 ||
	    (r = check_key(rq, key)) < 0)
		return r;
	if (!strcmp(key, "lfs.allocation")) {
		char *t = lib_reply_allocation(rq, sh.id);

		rq->result = json_pack("{s:s,s:s}", "key", key, "value", t ? t : "{}");
		free(t);
		return 0;
	}
	if (!strcmp(key, "lfs.access"))
		r = access_text(rq, sh.id, buf, sizeof(buf));
	else
		r = lib_store_attr_get(rq->s, sh.id, key, buf, sizeof(buf), &rq->err);
	if (r == -ENODATA && !strcmp(key, "lfs.policy")) {
		v = lfs_policy_name(rq->c->default_policy);
		r = 0;
	}
	if (r == -ENODATA)
		return FAIL(rq, ENODATA, "shelf '%s' has no attribute '%s'", sh.name,
			    lib_shown(key, b, sizeof(b)));
	if (r < 0)
		return r;
	rq->result = json_pack("{s:s,s:s}", "key", key, "value", v);
	return 0;
}

/*
 * lfs.size is the size of the file the shelf is: the agent of any node
 * writing it ("shared" or "rw") updates it on close while others hold it.
 * 1 if the caller is such a holder.
 */
static int size_writer(struct req *rq, struct lib_shelf *sh, const char *key)
{
	char mode[8];
	int r;

	if (strcmp(key, LIB_ATTR_SIZE))
		return 0;
	r = lib_activation_mode(rq, sh->id, rq->who->name, mode, sizeof(mode));
	return r <= 0 ? r : lib_mode_writes(mode);
}

/*
 * A change of the shelf's attributes: "rw" access ("all" for lfs.access),
 * and no other node holding the shelf (the admin may do it anyway; a writing
 * holder sets lfs.size).
 */
static int attr_change(struct req *rq, struct lib_shelf *sh, const char *key)
{
	char holder[LFS_NODE_NAME_MAX + 1], mode[8];
	bool acl = !strcmp(key, "lfs.access");
	int n, r = lib_require_access(rq, sh, acl ? ACC_ALL : ACC_RW,
				      acl ? "change the access list of" : "change attributes of");

	if (r < 0 || rq->who->admin || (r = size_writer(rq, sh, key)) != 0)
		return r < 0 ? r : 0;
	n = lib_store_activation_others(rq->s, sh->id, rq->who->name, holder, sizeof(holder), mode,
					sizeof(mode), &rq->err);
	if (n > 0)
		return FAIL(
			rq, EBUSY,
			"cannot change attribute '%s' of shelf '%s': it is active on node '%s' (%s)%s",
			key, sh->name, holder, mode, n > 1 ? " and others" : "");
	return n;
}

int lib_op_attr_set(struct req *rq)
{
	struct lib_shelf sh;
	const char *key;
	json_t *v;
	int r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_same_shelf(rq, &sh)) < 0 ||
	    (r = lib_arg_str(rq, "key", true, &key)) < 0 || (r = check_key(rq, key)) < 0)
		return r;
	v = json_object_get(rq->args, "value");
	if (!v)
		return FAIL(rq, EINVAL, "op 'attr.set' needs the argument 'value'");
	if ((r = attr_change(rq, &sh, key)) < 0 || (r = lib_attr_set(rq, &sh, key, v)) < 0)
		return r;
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "key", key);
	return 0;
}

int lib_op_attr_list(struct req *rq)
{
	struct lib_shelf sh;
	int r = lib_arg_shelf(rq, &sh);

	if (r < 0)
		return r;
	rq->result = json_pack("{s:s,s:o}", "name", sh.name, "attrs", lib_reply_attrs(rq, sh.id));
	return 0;
}

int lib_op_attr_remove(struct req *rq)
{
	struct lib_shelf sh;
	const char *key;
	char b[200];
	int r;

	if ((r = lib_arg_shelf(rq, &sh)) < 0 || (r = lib_arg_str(rq, "key", true, &key)) < 0 ||
	    (r = check_key(rq, key)) < 0)
		return r;
	if (!strcmp(key, "lfs.allocation"))
		return FAIL(rq, EPERM, "attribute 'lfs.allocation' is read-only");
	if ((r = attr_change(rq, &sh, key)) < 0)
		return r;
	if (!strcmp(key, "lfs.access"))
		r = lib_store_access_clear(rq->s, sh.id, &rq->err) > 0 ? 0 : -ENODATA;
	else
		r = lib_store_attr_delete(rq->s, sh.id, key, &rq->err);
	if (r == -ENODATA)
		return FAIL(rq, ENODATA, "shelf '%s' has no attribute '%s'", sh.name,
			    lib_shown(key, b, sizeof(b)));
	if (r < 0)
		return r;
	rq->result = json_pack("{s:s,s:s}", "name", sh.name, "key", key);
	return 0;
}
