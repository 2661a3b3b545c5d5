// SPDX-License-Identifier: MIT
/*
 * upcalld's extended attributes, with HPE's names (docs/NAMESPACE.md):
 * user.LFS.AllocationPolicy, .AllocationPolicyList, .AllocationPolicyDefault
 * (the directory: s == NULL), .Interleave (read-only), .InterleaveRequest,
 * and every other user.NAME kept as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_rules.h"
#include "upcalld.h"

#define X_POLICY "user.LFS.AllocationPolicy"
#define X_LIST "user.LFS.AllocationPolicyList"
#define X_DEFAULT "user.LFS.AllocationPolicyDefault"
#define X_INTERLEAVE "user.LFS.Interleave"
#define X_REQUEST "user.LFS.InterleaveRequest"

static int dup_value(const char *s, char **val, size_t *len)
{
	*len = strlen(s);
	*val = malloc(*len + 1);
	if (!*val)
		return -ENOMEM;
	memcpy(*val, s, *len + 1);
	return 0;
}

static void policy_list(char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < LFS_POL_COUNT && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s", i ? "," : "", lfs_policy_name(i));
}

/* The IG of each book, in order, comma-separated. */
static int interleave(struct shelf *s, char **val, size_t *len)
{
	size_t cap = (size_t)s->nr_books * 7 + 1, o = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	buf[0] = '\0';
	for (uint32_t i = 0; i < s->nr_books; i++)
		o += snprintf(buf + o, cap - o, "%s%u", i ? "," : "", s->books[i].ig);
	*val = buf;
	*len = o;
	return 0;
}

static struct xattr *find(struct shelf *s, const char *name)
{
	for (size_t i = 0; i < s->nx; i++)
		if (!strcmp(s->x[i].name, name))
			return &s->x[i];
	return NULL;
}

int cat_getxattr(struct catalog *c, struct shelf *s, const char *name, char **val, size_t *len)
{
	char buf[512];
	struct xattr *x;

	if (!strcmp(name, X_LIST)) {
		policy_list(buf, sizeof(buf));
		return dup_value(buf, val, len);
	}
	if (!s)
		return strcmp(name, X_DEFAULT) ? -ENODATA : dup_value(c->policy_default, val, len);
	if (!strcmp(name, X_POLICY))
		return dup_value(s->policy[0] ? s->policy : c->policy_default, val, len);
	if (!strcmp(name, X_INTERLEAVE))
		return interleave(s, val, len);
	if (!strcmp(name, X_REQUEST))
		return s->igs[0] ? dup_value(s->igs, val, len) : -ENODATA;
	x = find(s, name);
	if (!x)
		return -ENODATA;
	*val = malloc(x->len + 1);
	if (!*val)
		return -ENOMEM;
	memcpy(*val, x->value, x->len);
	*len = x->len;
	return 0;
}

/* A NUL-free value as a string, or EINVAL. */
static int as_string(const char *val, size_t len, char *buf, size_t size)
{
	if (len >= size || memchr(val, '\0', len))
		return -EINVAL;
	memcpy(buf, val, len);
	buf[len] = '\0';
	return 0;
}

static int set_special(struct catalog *c, struct shelf *s, const char *name, const char *val,
		       size_t len)
{
	char buf[256], msg[128];
	uint32_t igs[256];
	enum lfs_policy p;

	if (!strcmp(name, X_LIST) || !strcmp(name, X_INTERLEAVE))
		return -EPERM;
	if (as_string(val, len, buf, sizeof(buf)))
		return -EINVAL;
	if (!strcmp(name, X_POLICY) || !strcmp(name, X_DEFAULT)) {
		if (lfs_policy_parse(buf, &p))
			return -EINVAL;
		if (s)
			snprintf(s->policy, sizeof(s->policy), "%.32s", buf);
		else
			snprintf(c->policy_default, sizeof(c->policy_default), "%.32s", buf);
		return 0;
	}
	if (lfs_ig_list_parse(buf, igs, 256, msg, sizeof(msg)) < 0)
		return -EINVAL;
	snprintf(s->igs, sizeof(s->igs), "%s", buf);
	return 0;
}

int cat_setxattr(struct catalog *c, struct shelf *s, const char *name, const char *val,
		 size_t len, uint32_t flags)
{
	struct xattr *x, *v;

	if (!strncmp(name, "user.LFS.", 9)) {
		if ((!s && strcmp(name, X_DEFAULT) && strcmp(name, X_LIST)) ||
		    (s && !strcmp(name, X_DEFAULT)))
			return -EPERM;
		if (strcmp(name, X_POLICY) && strcmp(name, X_DEFAULT) && strcmp(name, X_LIST) &&
		    strcmp(name, X_INTERLEAVE) && strcmp(name, X_REQUEST))
			return -EPERM;
		return set_special(c, s, name, val, len);
	}
	if (!s)
		return -EPERM;
	x = find(s, name);
	if ((flags & LFS_UP_F_XATTR_CREATE) && x)
		return -EEXIST;
	if ((flags & LFS_UP_F_XATTR_REPLACE) && !x)
		return -ENODATA;
	if (!x) {
		v = realloc(s->x, (s->nx + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->x = v;
		x = &s->x[s->nx++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
	}
	free(x->value);
	x->value = malloc(len + 1);
	if (!x->value)
		return -ENOMEM;
	memcpy(x->value, val, len);
	x->len = len;
	return 0;
}

int cat_removexattr(struct catalog *c, struct shelf *s, const char *name)
{
	struct xattr *x;

	(void)c;
	if (!strncmp(name, "user.LFS.", 9)) {
		if (s && !strcmp(name, X_REQUEST) && s->igs[0]) {
			s->igs[0] = '\0';
			return 0;
		}
		return -EPERM;
	}
	x = s ? find(s, name) : NULL;
	if (!x)
		return -ENODATA;
	free(x->value);
	*x = s->x[--s->nx];
	return 0;
}

static void add_name(char *buf, size_t *o, const char *name)
{
	size_t n = strlen(name) + 1;

	memcpy(buf + *o, name, n);
	*o += n;
}

int cat_listxattr(struct catalog *c, struct shelf *s, char **names, size_t *len)
{
	size_t cap = 512, o = 0;
	char *buf;

	(void)c;
	for (size_t i = 0; s && i < s->nx; i++)
		cap += strlen(s->x[i].name) + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	add_name(buf, &o, X_LIST);
	if (!s) {
		add_name(buf, &o, X_DEFAULT);
	} else {
		add_name(buf, &o, X_POLICY);
		add_name(buf, &o, X_INTERLEAVE);
		if (s->igs[0])
			add_name(buf, &o, X_REQUEST);
		for (size_t i = 0; i < s->nx; i++)
			add_name(buf, &o, s->x[i].name);
	}
	*names = buf;
	*len = o;
	return 0;
}
