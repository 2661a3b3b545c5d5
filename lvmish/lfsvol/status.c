// SPDX-License-Identifier: GPL-2.0
/* status [--json]: this node's fabric devices, active shelves and agent progress. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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
	bool loaded;
};

static void node_view_read(struct node_view *v)
{
	struct lfs_client *drv = NULL;

	v->loaded = !lfs_client_open(&drv);
	if (!v->loaded)
		return;
	lfs_fabric_list(drv, &v->fv, &v->nf);
	lfs_shelf_list(drv, NULL, &v->kv, &v->kn);
	lfs_client_close(drv);
}

static json_t *status_json(const struct lfsvol_conf *conf, const struct node_view *v, json_t *agent)
{
	json_t *o = json_object(), *fab = json_array(), *sh = json_array();

	for (size_t i = 0; i < v->nf; i++)
		json_array_append_new(fab, json_pack("{s:I,s:s,s:I,s:I,s:I,s:i}", "ig",
						     (json_int_t)v->fv[i].ig, "path", v->fv[i].path,
						     "book_size", (json_int_t)v->fv[i].book_size,
						     "books", (json_int_t)v->fv[i].nr_books,
						     "books_used", (json_int_t)v->fv[i].books_used,
						     "numa_node", v->fv[i].numa_node));
	for (size_t i = 0; i < v->kn; i++)
		json_array_append_new(
			sh, json_pack("{s:s,s:s,s:I,s:I,s:b}", "name", v->kv[i].name, "disk",
				      v->kv[i].disk, "books", (json_int_t)v->kv[i].nr_books, "size",
				      (json_int_t)(v->kv[i].nr_books * v->kv[i].book_size), "open",
				      v->kv[i].open > 0));
	json_object_set_new(o, "driver", json_string(v->loaded ? "loaded" : "not loaded"));
	json_object_set_new(o, "node", conf->node ? json_string(conf->node) : json_null());
	json_object_set_new(o, "fabric", fab);
	json_object_set_new(o, "active", sh);
	json_object_set(o, "agent", agent ? agent : json_null());
	return o;
}

static void agent_print(json_t *agent, const char *path)
{
	if (!agent) {
		printf("agent: no state in %s (not running yet?)\n", path);
		return;
	}
	printf("agent: librarian %s; last heartbeat %llds ago; scrub %s; %lld zeroed, %lld ZOMBIE books pending\n",
	       json_string_value(json_object_get(agent, "librarian")),
	       (long long)(time(NULL) -
			   json_integer_value(json_object_get(agent, "last_heartbeat"))),
	       json_string_value(json_object_get(agent, "scrub")),
	       (long long)json_integer_value(json_object_get(agent, "zeroed")),
	       (long long)json_integer_value(json_object_get(agent, "zombies_pending")));
	if (json_string_value(json_object_get(agent, "check")))
		printf("agent: check of FREE books: %s\n",
		       json_string_value(json_object_get(agent, "check")));
}

static void status_print(const struct lfsvol_conf *conf, const struct node_view *v, json_t *agent,
			 const char *path)
{
	char a[32];

	printf("node %s, lfs.ko %s\n", conf->node ? conf->node : "(unnamed)",
	       v->loaded ? "loaded" : "not loaded");
	for (size_t i = 0; i < v->nf; i++)
		printf("fabric IG %u: %s, %u books of %s, %u used\n", v->fv[i].ig, v->fv[i].path,
		       v->fv[i].nr_books, lfs_size_human(v->fv[i].book_size, a, sizeof(a)),
		       v->fv[i].books_used);
	for (size_t i = 0; i < v->kn; i++)
		printf("active: %s as /dev/%s, %u books%s\n", v->kv[i].name, v->kv[i].disk,
		       v->kv[i].nr_books, v->kv[i].open ? ", open" : "");
	agent_print(agent, path);
}

int cmd_status(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { NULL, 0, NULL, 0 } };
	struct node_view v = { 0 };
	json_t *agent, *o;
	char path[PATH_MAX], *s;
	bool json = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (c != 'j')
			return LFSVOL_EUSAGE;
		json = true;
	}
	r = lfsvol_need_conf(ctx);
	if (r)
		return lfsvol_exit_code(r);
	node_view_read(&v);
	snprintf(path, sizeof(path), "%s/agent.json", ctx->conf->state_dir);
	agent = json_load_file(path, 0, NULL);
	if (json) {
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
	lfs_shelf_list_free(v.kv, v.kn);
	return LFSVOL_OK;
}
