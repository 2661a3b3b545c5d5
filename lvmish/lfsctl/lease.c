// SPDX-License-Identifier: MIT
/*
 * lfsctl lease: the node's lease as the kernel keeps it. Normally the node
 * agent renews it with the send time of a heartbeat the librarian received
 * (docs/FENCING.md); --renew renews it from now without any librarian,
 * for tests and recovery, and --release gives it up when no leased shelf
 * is left.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "lfsctl.h"

const char *lfsctl_state_name(uint32_t state)
{
	return state == LFS_SHELF_FENCED ? "fenced" : state == LFS_SHELF_ACTIVE ? "active" : "?";
}

/* The fence latency (docs/FENCING.md), in ns, or null before any lapse. */
static json_t *fence_latency_json(const struct lfs_lease_info *l)
{
	if (!l->fence_count)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)l->fence_count,
			 "last_ns", (json_int_t)l->fence_last_ns, "max_ns",
			 (json_int_t)l->fence_max_ns, "done_last_ns",
			 (json_int_t)l->fence_done_last_ns, "done_max_ns",
			 (json_int_t)l->fence_done_max_ns);
}

static void lease_print(const struct lfs_lease_info *l, bool json)
{
	json_t *o;

	if (json) {
		o = json_pack("{s:b, s:I, s:I, s:b, s:s, s:I, s:o}", "enforced", l->lease_ms != 0,
			      "lease_ms", (json_int_t)l->lease_ms, "left_ms",
			      (json_int_t)(l->lease_ms ? l->left_ms : 0), "expired",
			      l->lease_ms && l->left_ms <= 0, "fence_action",
			      lfs_fence_action_name(l->fence_action), "fenced",
			      (json_int_t)l->nr_fenced, "fence_latency", fence_latency_json(l));
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else if (!l->lease_ms) {
		printf("no lease held (not enforced); fence action %s; %u shelves fenced\n",
		       lfs_fence_action_name(l->fence_action), l->nr_fenced);
	} else {
		printf("lease %u ms, %s %lld ms%s; fence action %s; %u shelves fenced\n",
		       l->lease_ms, l->left_ms > 0 ? "ends in" : "expired",
		       (long long)(l->left_ms > 0 ? l->left_ms : -l->left_ms),
		       l->left_ms > 0 ? "" : " ago", lfs_fence_action_name(l->fence_action),
		       l->nr_fenced);
	}
	if (!json && l->fence_count)
		printf("fence latency %llu us, max %llu us over %u lapses; fence ended after %llu us, max %llu us\n",
		       (unsigned long long)l->fence_last_ns / 1000,
		       (unsigned long long)l->fence_max_ns / 1000, l->fence_count,
		       (unsigned long long)l->fence_done_last_ns / 1000,
		       (unsigned long long)l->fence_done_max_ns / 1000);
}

struct lease_opts {
	bool json, renew, release;
	uint32_t ms;
	int action;
};

static int lease_options(int argc, char **argv, struct lease_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "renew", required_argument, NULL, 'r' },
		{ "action", required_argument, NULL, 'a' },
		{ "release", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j') {
			o->json = true;
		} else if (opt == 'x') {
			o->release = true;
		} else if (opt == 'r') {
			o->renew = true;
			if (lfs_parse_u32(optarg, LFS_LEASE_MS_MAX, &o->ms) ||
			    o->ms < LFS_LEASE_MS_MIN) {
				lfsctl_err("%s lease: invalid lease `%s': give %u to %u ms\n", prog,
					   optarg, LFS_LEASE_MS_MIN, LFS_LEASE_MS_MAX);
				return -EINVAL;
			}
		} else if (opt == 'a' && (!strcmp(optarg, "reset") || !strcmp(optarg, "eio"))) {
			o->action = !strcmp(optarg, "eio") ? LFS_FENCE_EIO : LFS_FENCE_RESET;
		} else {
			if (opt == 'a')
				lfsctl_err("%s lease: invalid fence action `%s': reset or eio\n",
					   prog, optarg);
			lfsctl_usage("lease");
			return -EINVAL;
		}
	}
	if (optind != argc || (o->renew && o->release) || (o->action >= 0 && !o->renew)) {
		lfsctl_usage("lease");
		return -EINVAL;
	}
	return 0;
}

int cmd_lease(int argc, char **argv)
{
	struct lease_opts o = { .json = lfsctl_json, .action = -1 };
	struct lfs_lease_info l;
	struct lfs_client *c;
	int ret = 0;

	if (lease_options(argc, argv, &o))
		return EXIT_USAGE;
	c = lfsctl_connect("lease");
	if (!c)
		return EXIT_FAILURE;
	if (o.renew || o.release)
		ret = lfsnl_lease_renew(c, lfs_boottime_ns(), o.release ? 0 : o.ms, o.action);
	if (ret)
		return lfsctl_fail(c, "lease", o.release ? "giving up the lease" : "renewing", ret);
	ret = lfsnl_lease_get(c, &l);
	if (ret)
		return lfsctl_fail(c, "lease", "reading the lease", ret);
	lfs_client_close(c);
	lease_print(&l, o.json);
	return 0;
}
