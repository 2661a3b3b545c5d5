// SPDX-License-Identifier: GPL-2.0
/*
 * status [--json | --prometheus]: this node's lease, fabric devices, active and fenced
 * shelves (as the kernel has them now), and the agent's progress
 * (STATE_DIR/agent.json) and renewal log (STATE_DIR/renewal.json).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"

/* What the kernel has here. */
struct node_view {
	struct lfs_fabric_info *fv;
	size_t nf;
	struct lfs_shelf_info *kv;
	size_t kn;
	struct lfs_lease_info lease;
	bool loaded, have_lease;
	char mute[256]; /* loaded, but lfsvol cannot talk to it: why */
};

/* lfs.ko's state as status shows it. */
static const char *driver_state(const struct node_view *v)
{
	return v->loaded ? "loaded" : v->mute[0] ? "unusable" : "not loaded";
}

static void node_view_read(struct node_view *v)
{
	struct lfs_client *drv = NULL;

	int r = lfs_client_open(&drv);

	v->loaded = !r;
	if (r && r != -ENOENT)
		snprintf(v->mute, sizeof(v->mute), "%s",
			 r == -EPROTONOSUPPORT ? lfs_client_open_error() : strerror(-r));
	if (!v->loaded)
		return;
	lfsnl_fabric_list(drv, &v->fv, &v->nf);
	lfsnl_shelf_list(drv, NULL, &v->kv, &v->kn);
	v->have_lease = !lfsnl_lease_get(drv, &v->lease);
	lfs_client_close(drv);
}

/*
 * The fence latency of the lease's lapses (docs/FENCING.md), null before
 * the first: ns from the deadline to every covered object refusing, and to
 * the fence's end; "histogram": lapses refused within 1, 2, 4 .. 64 ms, later.
 */
static json_t *fence_latency_json(const struct lfs_lease_info *l)
{
	json_t *h;

	if (!l->fence_count)
		return json_null();
	h = json_array();
	for (int i = 0; i < LFS_FENCE_HIST_BUCKETS; i++)
		json_array_append_new(h, json_integer(l->fence_hist[i]));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o}", "count", (json_int_t)l->fence_count,
			 "last_ns", (json_int_t)l->fence_last_ns, "max_ns",
			 (json_int_t)l->fence_max_ns, "done_last_ns",
			 (json_int_t)l->fence_done_last_ns, "done_max_ns",
			 (json_int_t)l->fence_done_max_ns, "histogram", h);
}

static json_t *lease_json(const struct node_view *v)
{
	const struct lfs_lease_info *l = &v->lease;

	if (!v->have_lease)
		return json_null();
	return json_pack("{s:b,s:I,s:o,s:b,s:s,s:I,s:o}", "enforced", l->lease_ms != 0, "lease_ms",
			 (json_int_t)l->lease_ms, "left_ms",
			 l->lease_ms ? json_integer(l->left_ms) : json_null(), "expired",
			 l->lease_ms && l->left_ms <= 0, "fence_action",
			 lfs_fence_action_name(l->fence_action), "fenced", (json_int_t)l->nr_fenced,
			 "fence_latency", fence_latency_json(l));
}

static json_t *fabric_json(const struct lfs_fabric_info *f)
{
	char u[37];

	lfs_format_uuid(f->fabric_uuid, u);
	return json_pack("{s:I,s:s,s:I,s:I,s:I,s:i,s:b,s:o}", "ig", (json_int_t)f->ig, "path",
			 f->path, "book_size", (json_int_t)f->book_size, "books",
			 (json_int_t)f->nr_books, "books_used", (json_int_t)f->books_used,
			 "numa_node", f->numa_node, "labelled", f->labelled, "fabric_uuid",
			 f->labelled ? json_string(u) : json_null());
}

static json_t *shelf_json(const struct lfs_shelf_info *s)
{
	return json_pack("{s:s,s:s,s:I,s:I,s:b,s:s,s:b}", "name", s->name, "disk", s->disk, "books",
			 (json_int_t)s->nr_books, "size", (json_int_t)(s->nr_books * s->book_size),
			 "open", s->open > 0, "state",
			 s->state == LFS_SHELF_FENCED ? "fenced" : "active", "leased", s->leased);
}

static json_t *status_json(const struct lfsvol_conf *conf, const struct node_view *v, json_t *agent)
{
	json_t *o = json_object(), *fab = json_array(), *sh = json_array(), *fenced = json_array();

	for (size_t i = 0; i < v->nf; i++)
		json_array_append_new(fab, fabric_json(&v->fv[i]));
	for (size_t i = 0; i < v->kn; i++) {
		json_array_append_new(sh, shelf_json(&v->kv[i]));
		if (v->kv[i].state == LFS_SHELF_FENCED)
			json_array_append_new(fenced, json_string(v->kv[i].name));
	}
	json_object_set_new(o, "driver", json_string(driver_state(v)));
	if (v->mute[0])
		json_object_set_new(o, "driver_error", json_string(v->mute));
	json_object_set_new(o, "node", conf->node ? json_string(conf->node) : json_null());
	json_object_set_new(o, "lease", lease_json(v));
	json_object_set_new(o, "fabric", fab);
	json_object_set_new(o, "active", sh);
	json_object_set_new(o, "fenced", fenced);
	json_object_set(o, "agent", agent ? agent : json_null());
	return o;
}

/* "1.5 s" */
static const char *secs(long long ms, char *buf, size_t len)
{
	snprintf(buf, len, "%lld.%lld s", ms / 1000, (ms < 0 ? -ms : ms) % 1000 / 100);
	return buf;
}

/* "1.234 ms" */
static const char *msecs(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%03llu ms", (unsigned long long)(ns / 1000000),
		 (unsigned long long)(ns / 1000 % 1000));
	return buf;
}

static void lease_print(const struct node_view *v)
{
	const struct lfs_lease_info *l = &v->lease;
	char a[32], b[32], c[32], d[32];

	if (!v->have_lease)
		return;
	if (!l->lease_ms)
		printf("lease: none held (no leased shelf may be activated until the agent renews it)\n");
	else if (l->left_ms > 0)
		printf("lease: %u s, ends in %s; fence action %s; %u shelves fenced\n",
		       l->lease_ms / 1000, secs(l->left_ms, a, sizeof(a)),
		       lfs_fence_action_name(l->fence_action), l->nr_fenced);
	else
		printf("lease: %u s, EXPIRED %s ago: leased shelves are fenced, no activation until the agent renews it; %u shelves fenced\n",
		       l->lease_ms / 1000, secs(-l->left_ms, a, sizeof(a)), l->nr_fenced);
	if (l->fence_count)
		printf("fence latency: last %s, max %s over %u lapses (fence ended after last %s, max %s)\n",
		       msecs(l->fence_last_ns, a, sizeof(a)), msecs(l->fence_max_ns, b, sizeof(b)),
		       l->fence_count, msecs(l->fence_done_last_ns, c, sizeof(c)),
		       msecs(l->fence_done_max_ns, d, sizeof(d)));
}

/* "zeroing ZOMBIE books: 12 of 30 (768 MiB), 45 MiB/s, 25 s left" */
static void progress_print(const char *label, json_t *p)
{
	json_t *left = json_object_get(p, "seconds_left");
	char a[32], b[32], l[48] = "rate not known yet";

	if (!json_is_object(p))
		return;
	if (json_is_integer(left))
		snprintf(l, sizeof(l), "%lld s left", (long long)json_integer_value(left));
	printf("agent: %s %s: %lld of %lld done (%s), %s/s, %s\n", label,
	       json_string_value(json_object_get(p, "what")) ?: "books",
	       (long long)json_integer_value(json_object_get(p, "done")),
	       (long long)json_integer_value(json_object_get(p, "total")),
	       lfs_size_human((uint64_t)json_integer_value(json_object_get(p, "bytes")), a,
			      sizeof(a)),
	       lfs_size_human((uint64_t)json_real_value(json_object_get(p, "bytes_per_s")), b,
			      sizeof(b)),
	       l);
}

static void renewal_print(json_t *rl)
{
	json_t *f, *el;
	size_t i;

	if (!json_is_object(rl))
		return;
	printf("agent: renewals: librarian %s; %lld renewals (%lld on acknowledgement), last %llds ago; longest gap %lld ms; %lld late (gap over interval + 1 s)\n",
	       json_string_value(json_object_get(rl, "librarian")),
	       (long long)json_integer_value(json_object_get(rl, "renewals")),
	       (long long)json_integer_value(json_object_get(rl, "renewals_by_ack")),
	       (long long)(time(NULL) - json_integer_value(json_object_get(rl, "last_renewal"))),
	       (long long)json_integer_value(json_object_get(rl, "longest_gap_ms")),
	       (long long)json_integer_value(json_object_get(rl, "late")));
	f = json_object_get(rl, "fenced");
	json_array_foreach(f, i, el)
		printf("agent: fenced %s: %s\n", json_string_value(json_object_get(el, "name")),
		       json_string_value(json_object_get(el, "why")));
}

/* "agent: copy src to dst: 32 MiB of 64 MiB (50%), 61 MiB/s, running" */
static void copies_print(json_t *copies)
{
	char a[32], b[32];
	json_t *c;
	size_t i;

	json_array_foreach(copies, i, c) {
		uint64_t done = (uint64_t)json_integer_value(json_object_get(c, "bytes"));
		uint64_t total = (uint64_t)json_integer_value(json_object_get(c, "total"));
		const char *err = json_string_value(json_object_get(c, "error"));

		printf("agent: copy %s to %s: %s of %s (%.0f%%), %.0f MiB/s, %s%s%s\n",
		       json_string_value(json_object_get(c, "source")),
		       json_string_value(json_object_get(c, "dest")),
		       lfs_size_human(done, a, sizeof(a)), lfs_size_human(total, b, sizeof(b)),
		       total ? 100.0 * (double)done / (double)total : 100.0,
		       json_real_value(json_object_get(c, "mib_per_s")),
		       json_string_value(json_object_get(c, "state")), err ? ": " : "", err ?: "");
	}
}

static void agent_print(json_t *agent, const char *path)
{
	if (!agent) {
		printf("agent: no state in %s (not running yet?)\n", path);
		return;
	}
	printf("agent: librarian %s; scrub %s; %lld zeroed, %lld ZOMBIE books pending\n",
	       json_string_value(json_object_get(agent, "librarian")),
	       json_string_value(json_object_get(agent, "scrub")),
	       (long long)json_integer_value(json_object_get(agent, "zeroed")),
	       (long long)json_integer_value(json_object_get(agent, "zombies_pending")));
	progress_print("zeroing", json_object_get(agent, "zeroing"));
	if (json_string_value(json_object_get(agent, "check")))
		printf("agent: check of FREE books: %s\n",
		       json_string_value(json_object_get(agent, "check")));
	progress_print("sweep of", json_object_get(agent, "sweep"));
	copies_print(json_object_get(agent, "copies"));
	renewal_print(json_object_get(agent, "renewal"));
}

static void status_print(const struct lfsvol_conf *conf, const struct node_view *v, json_t *agent,
			 const char *path)
{
	char a[32], u[37];

	printf("node %s, lfs.ko %s%s%s\n", conf->node ? conf->node : "(unnamed)", driver_state(v),
	       v->mute[0] ? ": " : "", v->mute);
	lease_print(v);
	for (size_t i = 0; i < v->nf; i++) {
		lfs_format_uuid(v->fv[i].fabric_uuid, u);
		printf("fabric IG %u: %s, %u books of %s, %u used, %s%s%s\n", v->fv[i].ig,
		       v->fv[i].path, v->fv[i].nr_books,
		       lfs_size_human(v->fv[i].book_size, a, sizeof(a)), v->fv[i].books_used,
		       v->fv[i].labelled ? "labelled for fabric " : "no label",
		       v->fv[i].labelled ? u : "", "");
	}
	for (size_t i = 0; i < v->kn; i++)
		printf("%s: %s as /dev/%s, %u books%s%s\n",
		       v->kv[i].state == LFS_SHELF_FENCED ? "FENCED" : "active", v->kv[i].name,
		       v->kv[i].disk, v->kv[i].nr_books, v->kv[i].open ? ", open" : "",
		       v->kv[i].state == LFS_SHELF_FENCED ?
			       " (I/O fails; only removal is possible: lfsvol deactivate)" :
		       v->kv[i].leased ? "" :
					 " (not leased)");
	agent_print(agent, path);
}

/* agent.json, with renewal.json in it as "renewal" (the renewal thread's own file). */
static json_t *agent_read(const struct lfsvol_conf *conf, char *path, size_t len)
{
	char rpath[PATH_MAX];
	json_t *agent, *rl;

	snprintf(path, len, "%s/agent.json", conf->state_dir);
	snprintf(rpath, sizeof(rpath), "%s/renewal.json", conf->state_dir);
	agent = json_load_file(path, 0, NULL);
	rl = json_load_file(rpath, 0, NULL);
	if (agent && rl)
		json_object_set(agent, "renewal", rl);
	json_decref(rl);
	return agent;
}

int cmd_status(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "prometheus", no_argument, NULL, 'p' },
					      { NULL, 0, NULL, 0 } };
	struct node_view v = { 0 };
	json_t *agent, *o;
	char path[PATH_MAX], *s;
	int json = lfsvol_json; /* 1: --json (also main's), 2: --prometheus */
	int c, r;

	while ((c = getopt_long(argc, argv, "jp", opts, NULL)) != -1) {
		if (c != 'j' && c != 'p')
			return LFSVOL_EUSAGE;
		json = c == 'j' ? 1 : 2;
	}
	r = lfsvol_need_conf(ctx);
	if (r)
		return lfsvol_exit_code(r);
	node_view_read(&v);
	agent = agent_read(ctx->conf, path, sizeof(path));
	if (json == 2) {
		o = status_json(ctx->conf, &v, agent);
		lfsvol_status_prometheus(o);
		json_decref(o);
	} else if (json) {
		/* like every --json output: an array of objects */
		o = json_pack("[o]", status_json(ctx->conf, &v, agent));
		s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		puts(s ? s : "[]");
		free(s);
		json_decref(o);
	} else {
		status_print(ctx->conf, &v, agent, path);
	}
	json_decref(agent);
	free(v.fv);
	lfsnl_shelf_list_free(v.kv, v.kn);
	return LFSVOL_OK;
}
