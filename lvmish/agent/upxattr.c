// SPDX-License-Identifier: GPL-2.0
/*
 * The extended attributes of the lfs filesystem, HPE's names
 * (docs/NAMESPACE.md, "Extended attributes") on the librarian's shelf
 * attributes: user.LFS.AllocationPolicy is lfs.policy,
 * user.LFS.InterleaveRequest lfs.igs, user.LFS.Interleave the IG of each
 * book of the map, user.LFS.AllocationPolicyList the policy names
 * (lfs_rules.h); every other user.NAME is the shelf's attribute user.NAME.
 * The directory (no name, no UUID) has the list and the mount's default
 * policy, which the kernel keeps: the agent only checks a new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "upserver.h"

#define X_POLICY "user.LFS.AllocationPolicy"
#define X_LIST "user.LFS.AllocationPolicyList"
#define X_DEFAULT "user.LFS.AllocationPolicyDefault"
#define X_INTERLEAVE "user.LFS.Interleave"
#define X_REQUEST "user.LFS.InterleaveRequest"

static int answer_text(struct up_worker *w, const struct up_req *r, const char *s)
{
	return up_answer_blob(w, r->id, LFS_A_XATTR_VALUE, s, strlen(s));
}

static int answer_policies(struct up_worker *w, const struct up_req *r)
{
	char buf[512];
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < LFS_POL_COUNT && o < sizeof(buf); i++)
		o += snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? "," : "", lfs_policy_name(i));
	return answer_text(w, r, buf);
}

/* A value as a NUL-free string (the librarian keeps strings), or NULL. */
static char *value_text(const struct up_req *r)
{
	if (!r->xvalue || memchr(r->xvalue, '\0', r->xlen))
		return NULL;
	r->xvalue[r->xlen] = '\0';
	return r->xvalue;
}

/* The librarian's default_policy, from its auth reply: the answer, or an errno. */
static int answer_default(struct up_worker *w, const struct up_req *r)
{
	const char *p;
	int ret = 0;

	if (!w->lib || !lfs_lib_connected(w->lib))
		ret = up_call(w, "ping", NULL, NULL); /* a session, for its reply */
	if (ret)
		return ret;
	p = json_string_value(json_object_get(lfs_lib_server_info(w->lib), "default_policy"));
	return p ? answer_text(w, r, p) : -EPROTO; /* every auth reply has it (PROTOCOL.md) */
}

static int dir_xattr(struct up_worker *w, const struct up_req *r)
{
	static const char names[] = X_LIST "\0" X_DEFAULT;
	enum lfs_policy p;
	char *v;

	switch (r->op) {
	case LFS_UP_GETXATTR:
		if (!strcmp(r->xname, X_LIST))
			return answer_policies(w, r);
		/* asked here only without a mount policy: the librarian's default */
		return strcmp(r->xname, X_DEFAULT) ? -ENODATA : answer_default(w, r);
	case LFS_UP_LISTXATTR:
		return up_answer_blob(w, r->id, LFS_A_XATTR_NAMES, names, sizeof(names));
	case LFS_UP_SETXATTR:
		if (strcmp(r->xname, X_DEFAULT))
			return -EPERM;
		v = value_text(r);
		if (!v || lfs_policy_parse(v, &p))
			return -EINVAL;
		return up_answer_errno(w, r->id, 0);
	default:
		return -EPERM;
	}
}

/* The IG of each book, in order, comma-separated. */
static int answer_interleave(struct up_worker *w, const struct up_req *r, json_t *j)
{
	struct up_shelf s;
	size_t cap, o = 0;
	char *buf;
	int ret = up_shelf_from(w, j, true, &s);

	if (ret)
		return ret;
	cap = (size_t)s.nr_books * 7 + 1;
	buf = malloc(cap);
	if (buf) {
		buf[0] = '\0';
		for (uint32_t i = 0; i < s.nr_books; i++)
			o += snprintf(buf + o, cap - o, "%s%u", i ? "," : "", s.books[i].ig);
		ret = o > LFS_XATTR_VALUE_MAX ? -E2BIG : answer_text(w, r, buf);
	}
	free(buf);
	up_shelf_free(&s);
	return buf ? ret : -ENOMEM;
}

static int file_get(struct up_worker *w, const struct up_req *r, json_t *j)
{
	json_t *attrs = json_object_get(j, "attrs");
	const char *v;

	if (!strcmp(r->xname, X_LIST))
		return answer_policies(w, r);
	if (!strcmp(r->xname, X_POLICY))
		return answer_text(w, r, json_string_value(json_object_get(j, "policy")) ?: "");
	if (!strcmp(r->xname, X_INTERLEAVE))
		return answer_interleave(w, r, j);
	if (!strcmp(r->xname, X_REQUEST))
		v = json_string_value(json_object_get(attrs, "lfs.igs"));
	else if (!strncmp(r->xname, "user.LFS.", 9))
		v = NULL;
	else
		v = json_string_value(json_object_get(attrs, r->xname));
	return v ? answer_text(w, r, v) : -ENODATA;
}

static int file_list(struct up_worker *w, const struct up_req *r, json_t *j)
{
	json_t *attrs = json_object_get(j, "attrs"), *v;
	char buf[LFS_XATTR_LIST_MAX];
	const char *key;
	size_t o = 0;

	memcpy(buf, X_LIST "\0" X_POLICY "\0" X_INTERLEAVE,
	       sizeof(X_LIST X_POLICY X_INTERLEAVE) + 2);
	o = sizeof(X_LIST X_POLICY X_INTERLEAVE) + 2;
	if (json_object_get(attrs, "lfs.igs")) {
		memcpy(buf + o, X_REQUEST, sizeof(X_REQUEST));
		o += sizeof(X_REQUEST);
	}
	json_object_foreach(attrs, key, v) {
		size_t n = strlen(key) + 1;

		if (strncmp(key, "user.", 5) || !strncmp(key, "user.LFS.", 9))
			continue;
		if (o + n > sizeof(buf))
			return -E2BIG;
		memcpy(buf + o, key, n);
		o += n;
	}
	return up_answer_blob(w, r->id, LFS_A_XATTR_NAMES, buf, o);
}

/* The librarian's key for a settable name; NULL (*err set) for the others. */
static const char *file_key(const struct up_req *r, int *err)
{
	*err = -EPERM;
	if (!strcmp(r->xname, X_POLICY))
		return r->op == LFS_UP_SETXATTR ? "lfs.policy" : NULL;
	if (!strcmp(r->xname, X_REQUEST))
		return "lfs.igs";
	if (!strncmp(r->xname, "user.LFS.", 9))
		return NULL;
	return r->xname;
}

/*
 * An InterleaveRequest as the librarian keeps lfs.igs, "0,1,2,3": the
 * ranges that lfs(5) allows (0-3) written out. NULL: not an IG list.
 */
static char *igs_text(const char *v)
{
	uint32_t igs[256]; /* the librarian's LIB_MAX_IGS */
	char msg[160], *t;
	size_t o = 0;
	int n = lfs_ig_list_parse(v, igs, (int)(sizeof(igs) / sizeof(igs[0])), msg, sizeof(msg));

	if (n <= 0)
		return NULL;
	t = malloc((size_t)n * 7 + 1);
	if (!t)
		return NULL;
	for (int i = 0; i < n; i++)
		o += (size_t)sprintf(t + o, "%s%u", i ? "," : "", igs[i]);
	return t;
}

static int file_change(struct up_worker *w, const struct up_req *r, json_t *j)
{
	const char *name = json_string_value(json_object_get(j, "name")) ?: "";
	bool has;
	const char *key;
	char *v = NULL, *igs = NULL;
	int err, ret;

	key = file_key(r, &err);
	if (!key)
		return err;
	has = json_object_get(json_object_get(j, "attrs"), key);
	if (r->op == LFS_UP_REMOVEXATTR) {
		if (!has)
			return -ENODATA;
		ret = up_call(w, "attr.remove", json_pack("{s:s,s:s}", "name", name, "key", key),
			      NULL);
		return ret ? ret : up_answer_errno(w, r->id, 0);
	}
	if ((r->flags & LFS_UP_F_XATTR_CREATE) && has)
		return -EEXIST;
	if ((r->flags & LFS_UP_F_XATTR_REPLACE) && !has)
		return -ENODATA;
	v = value_text(r);
	if (v && !strcmp(key, "lfs.igs"))
		v = igs = igs_text(v);
	if (!v)
		return -EINVAL;
	ret = up_call(w, "attr.set",
		      json_pack("{s:s,s:s,s:s}", "name", name, "key", key, "value", v), NULL);
	free(igs);
	return ret ? ret : up_answer_errno(w, r->id, 0);
}

int up_xattr(struct up_worker *w, const struct up_req *r)
{
	bool interleave;
	json_t *j = NULL;
	int ret;

	if (r->op != LFS_UP_LISTXATTR && !r->xname)
		return -EINVAL;
	if (!r->has_uuid && !r->name)
		return dir_xattr(w, r);
	interleave = r->op == LFS_UP_GETXATTR && !strcmp(r->xname, X_INTERLEAVE);
	ret = up_find(w, r, interleave, &j);
	if (!ret && r->op == LFS_UP_GETXATTR)
		ret = file_get(w, r, j);
	else if (!ret && r->op == LFS_UP_LISTXATTR)
		ret = file_list(w, r, j);
	else if (!ret)
		ret = file_change(w, r, j);
	json_decref(j);
	return ret;
}
