// SPDX-License-Identifier: GPL-2.0
/*
 * The renewal thread's librarian session: connect (after a librarian that
 * left a heartbeat unanswered, the others of lfs.conf's list first), learn
 * the librarian's role (with the leader row only a leader's replies
 * renew), back off after a failure, drop the session, and follow a
 * standby's word to the leader (docs/HA.md, "Nodes follow the leader").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "renewer.h"

/* Connecting failed (or found a standby): say so, wait the back-off. */
static int renew_backoff(struct lfsvol_renewer *rn, int r, const char *msg)
{
	int cap = renew_interval(rn) * 1000 / (rn->replicated ? 4 : 1);

	renew_state(rn, "unreachable at %s: %s", rn->conf->librarian, msg ? msg : strerror(-r));
	renew_log_write(rn);
	renew_sleep(rn, rn->backoff_ms);
	rn->backoff_ms = rn->backoff_ms ? rn->backoff_ms * 2 : 250;
	if (rn->backoff_ms > cap)
		rn->backoff_ms = cap;
	return r;
}

/*
 * What the auth reply says of the librarian: with the leader row only a
 * leader's replies renew from now on (for good: a list may name an older
 * librarian too). A standby is left (it refuses heartbeats), 1.
 */
static int renew_role(struct lfsvol_renewer *rn, json_t *info)
{
	const char *role = json_string_value(json_object_get(info, "role")) ?: "";
	int64_t e = json_integer_value(json_object_get(info, "epoch"));

	if (strcmp(role, "leader") && strcmp(role, "standby"))
		return 0;
	if (!rn->replicated)
		lfsvol_err(
			"renewal: the librarian has standbys (a leader row): renewing only on a leader's replies");
	rn->replicated = true;
	if (!strcmp(role, "standby"))
		return 1;
	if (e > rn->epoch)
		rn->epoch = e;
	return 0;
}

static bool is_standby(struct lfs_lib *l)
{
	return !strcmp(json_string_value(json_object_get(lfs_lib_server_info(l), "role")) ?: "",
		       "standby");
}

/*
 * After a librarian left a heartbeat unanswered, the others of the list
 * first: a standby names it as the leader until its row expires, and a
 * stopped librarian's TCP stack accepts the connection but no handshake
 * ever ends. Then it, with half an interval to complete the handshake (a
 * librarian that runs does it in milliseconds), so the agent goes round
 * the list about once an interval until one leads.
 */
static int renew_open(struct lfsvol_renewer *rn, const struct lfs_lib_opts *o, char **msg)
{
	char a[LFS_ADDR_LIST_MAX][LFS_ADDR_MAX], rest[LFS_ADDR_LIST_MAX * LFS_ADDR_MAX], m[8];
	int n = lfs_lib_addr_split(o->addr, a, LFS_ADDR_LIST_MAX, m, sizeof(m)), r;
	struct lfs_lib_opts others = *o, one = *o;
	size_t len = 0;

	if (rn->suspect < 0 || rn->suspect >= n || n < 2)
		return lfs_lib_connect(o, &rn->lib, msg);
	for (int i = 0; i < n; i++)
		if (i != rn->suspect)
			len += (size_t)snprintf(rest + len, sizeof(rest) - len, "%s%s",
						len ? "," : "", a[i]);
	others.addr = rest;
	others.start = 0;
	r = lfs_lib_connect(&others, &rn->lib, msg);
	if (r == 0 && !is_standby(rn->lib))
		return 0;
	lfs_lib_close(rn->lib);
	rn->lib = NULL;
	free(*msg);
	*msg = NULL;
	one.addr = a[rn->suspect];
	if (one.connect_timeout_ms > renew_interval(rn) * 500)
		one.connect_timeout_ms = renew_interval(rn) * 500;
	return lfs_lib_connect(&one, &rn->lib, msg);
}

int renew_connect(struct lfsvol_renewer *rn)
{
	const struct lfsvol_conf *c = rn->conf;
	int ct = c->connect_timeout * 1000;
	struct lfs_lib_opts o = { .addr = c->librarian,
				  .node = c->node,
				  .key_file = c->key_file,
				  /* a stopped librarian must not hold up the next one */
				  .connect_timeout_ms =
					  rn->replicated && ct > renew_interval(rn) * 1000 ?
						  renew_interval(rn) * 1000 :
						  ct,
				  .reply_timeout_ms = c->reply_timeout * 1000,
				  .start = rn->start };
	json_t *info;
	char *msg = NULL, why[512];
	int r = renew_open(rn, &o, &msg);

	if (r) {
		r = renew_backoff(rn, r, msg);
		free(msg);
		return r;
	}
	info = lfs_lib_server_info(rn->lib);
	if (renew_role(rn, info)) {
		snprintf(why, sizeof(why), "%s is a standby", lfs_lib_addr(rn->lib));
		lfs_lib_close(rn->lib);
		rn->lib = NULL;
		return renew_backoff(rn, -EREMOTE, why);
	}
	renew_numbers(rn, info);
	rn->suspect = -1;
	rn->next_send = 0;
	rn->backoff_ms = 0;
	renew_state(rn, "connected to %s%s", lfs_lib_addr(rn->lib),
		    rn->probing ? " (probing)" : "");
	snprintf(why, sizeof(why), rn->replicated ? ", the leader, epoch %lld" : "",
		 (long long)rn->epoch);
	lfsvol_err("renewal: connected to the librarian at %s (heartbeat every %d s, lease %d s%s)",
		   lfs_lib_addr(rn->lib), renew_interval(rn), rn->lease_s, why);
	return 0;
}

void renew_drop(struct lfsvol_renewer *rn, const char *why)
{
	int k = rn->lib ? lfs_lib_addr_index(rn->conf->librarian, lfs_lib_addr(rn->lib)) : -1;

	if (k >= 0)
		rn->start = k + 1; /* a list: the next librarian first */
	if (rn->lib)
		renew_state(rn, "lost: %s", why);
	lfsvol_err("renewal: connection to the librarian lost: %s; connecting again", why);
	lfs_lib_close(rn->lib);
	rn->lib = NULL;
	rn->in.len = 0;
	rn->nq = 0;
	rn->backoff_ms = 0;
}

void renew_follow(struct lfsvol_renewer *rn, json_t *leader)
{
	char why[512];
	json_t *a;
	size_t i;

	snprintf(why, sizeof(why), "%s refuses heartbeats: %s", lfs_lib_addr(rn->lib),
		 lfs_lib_errmsg(rn->lib));
	renew_drop(rn, why);
	json_array_foreach(json_object_get(leader, "addresses"), i, a) {
		int k = lfs_lib_addr_index(rn->conf->librarian, json_string_value(a) ?: "");

		if (k >= 0) {
			rn->start = k;
			break;
		}
	}
}
