// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: a list of librarians (docs/HA.md, "Nodes follow the
 * leader"). With a PostgreSQL catalogue one librarian leads and the others
 * stand by, refusing every request but auth and ping with EREMOTE. A
 * client given several addresses connects to each in turn and keeps the
 * first whose auth reply says it serves; a standby's reply names the
 * leader, which is tried next if it is in the list.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_librarian.h"

struct tries {
	char a[LFS_ADDR_LIST_MAX][LFS_ADDR_MAX];
	bool tried[LFS_ADDR_LIST_MAX];
	int n;
	char msg[2048];
	size_t len;
};

static void note(struct tries *t, const char *addr, const char *what)
{
	if (t->len < sizeof(t->msg))
		t->len += snprintf(t->msg + t->len, sizeof(t->msg) - t->len, "%s%s: %s",
				   t->len ? "; " : "", addr, what);
}

/* A standby: note the leader it names; the listed, untried address of it, or -1. */
static int standby_leader(struct tries *t, const char *addr, json_t *info)
{
	json_t *ld = json_object_get(info, "leader"), *a;
	char what[512];
	size_t i;
	int next = -1;

	if (!json_is_object(ld) || !json_is_true(json_object_get(ld, "live"))) {
		note(t, addr, "a standby, and no librarian leads now");
		return -1;
	}
	snprintf(what, sizeof(what), "a standby; the leader is '%s' (epoch %lld)",
		 json_string_value(json_object_get(ld, "name")) ?: "?",
		 (long long)json_integer_value(json_object_get(ld, "epoch")));
	note(t, addr, what);
	json_array_foreach(json_object_get(ld, "addresses"), i, a)
		for (int k = 0; k < t->n && next < 0; k++)
			if (!t->tried[k] && !strcmp(t->a[k], json_string_value(a) ?: ""))
				next = k;
	return next;
}

static int next_untried(const struct tries *t, int k)
{
	for (int i = 1; i <= t->n; i++)
		if (!t->tried[(k + i) % t->n])
			return (k + i) % t->n;
	return -1;
}

static bool serves(struct lfs_lib *l)
{
	const char *role = json_string_value(json_object_get(lfs_lib_server_info(l), "role"));

	return role && strcmp(role, "standby"); /* every auth reply has it (PROTOCOL.md) */
}

static int connect_list(const struct lfs_lib_opts *o, struct tries *t, struct lfs_lib **out)
{
	struct lfs_lib_opts one = *o;
	int k = o->start > 0 ? o->start % t->n : 0, r, last = -ECONNREFUSED;
	bool standby = false;

	while (k >= 0) {
		struct lfs_lib *l = NULL;
		char *m = NULL;
		int next = -1;

		t->tried[k] = true;
		one.addr = t->a[k];
		r = lfs_lib_connect_one(&one, &l, &m);
		if (r == 0 && serves(l)) {
			*out = l;
			return 0;
		}
		if (r == 0) {
			standby = true;
			next = standby_leader(t, t->a[k], lfs_lib_server_info(l));
			lfs_lib_close(l);
		} else {
			last = r;
			note(t, t->a[k], m ? m : "cannot connect");
			free(m);
		}
		k = next >= 0 ? next : next_untried(t, k);
	}
	return standby ? -EREMOTE : last;
}

int lfs_lib_connect(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg)
{
	struct tries *t;
	char full[2200];
	int r;

	if (!o->addr || !strchr(o->addr, ','))
		return lfs_lib_connect_one(o, out, errmsg);
	*out = NULL;
	if (errmsg)
		*errmsg = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	r = lfs_lib_addr_split(o->addr, t->a, LFS_ADDR_LIST_MAX, t->msg, sizeof(t->msg));
	if (r < 0) {
		snprintf(full, sizeof(full), "%s", t->msg);
	} else {
		t->n = r;
		t->msg[0] = 0;
		r = connect_list(o, t, out);
		snprintf(full, sizeof(full), "no librarian serves at %s (%s)", o->addr, t->msg);
	}
	if (r < 0 && errmsg)
		*errmsg = strdup(full);
	free(t);
	return r;
}
