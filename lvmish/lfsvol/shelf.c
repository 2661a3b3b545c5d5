// SPDX-License-Identifier: GPL-2.0
/* create, remove, rename. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

struct create_opts {
	const char *name, *size_s, *policy, *igs, *away;
	struct lfs_size sz;
	uint32_t igv[LFSVOL_MAX_IGS]; /* --ig parsed: ranges such as 0-3 expanded */
	int nigv;
	bool activate;
};

/* An exact policy name for a command-line one in any letter case. */
static int check_policy(const char **p)
{
	enum lfs_policy pol;
	const char *hint;

	if (!lfs_policy_lookup(*p, &pol, &hint, NULL, 0)) {
		*p = lfs_policy_name(pol);
		return 0;
	}
	if (hint)
		return lfsvol_usage("unknown policy `%s'; did you mean `%s'?", *p, hint);
	return lfsvol_usage("unknown policy `%s'; see lfsvol(8) for the list", *p);
}

/* Everything create can check before it asks anyone. */
static int create_check(struct create_opts *o)
{
	char msg[256];
	int r;

	r = lfsvol_check_name(o->name);
	if (r)
		return r;
	if (lfs_size_parse(o->size_s, LFS_SIZE_BOOKS, &o->sz, msg, sizeof(msg)))
		return lfsvol_usage("%s", msg);
	if (o->policy) {
		r = check_policy(&o->policy);
		if (r)
			return r;
	}
	if (o->igs) {
		o->nigv = lfs_ig_list_parse(o->igs, o->igv, LFSVOL_MAX_IGS, msg, sizeof(msg));
		if (o->nigv < 0)
			return lfsvol_usage("%s", msg);
	}
	return o->away ? lfsvol_check_name(o->away) : 0;
}

static int create_options(int argc, char **argv, struct create_opts *o)
{
	static const struct option opts[] = { { "size", required_argument, NULL, 's' },
					      { "policy", required_argument, NULL, 'p' },
					      { "ig", required_argument, NULL, 'i' },
					      { "away-from", required_argument, NULL, 'A' },
					      { "activate", no_argument, NULL, 'a' },
					      { NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "s:p:a", opts, NULL)) != -1) {
		if (c == 's')
			o->size_s = optarg;
		else if (c == 'p')
			o->policy = optarg;
		else if (c == 'i')
			o->igs = optarg;
		else if (c == 'A')
			o->away = optarg;
		else if (c == 'a')
			o->activate = true;
		else
			return lfsvol_exit_as(LFSVOL_EUSAGE, -EINVAL);
	}
	if (optind != argc - 1 || !o->size_s)
		return lfsvol_usage(
			"usage: %s create NAME -s SIZE [-p POLICY] [--ig LIST] [--away-from SHELF] [-a]",
			lfsvol_prog);
	o->name = argv[optind];
	return create_check(o);
}

static json_t *ig_array(const uint32_t *igs, int n)
{
	json_t *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_integer(igs[i]));
	return arr;
}

/*
 * shelf.create's arguments: the config's entry for the shelf fills in what
 * is not given. The IG list goes as numbers: the librarian takes no ranges.
 */
static json_t *create_args(const struct create_opts *o, const struct lfsvol_conf *conf,
			   uint64_t books)
{
	const struct lfsvol_shelf_conf *sc = lfsvol_conf_shelf(conf, o->name);
	const char *policy = o->policy;
	json_t *args = json_pack("{s:s,s:I}", "name", o->name, "books", (json_int_t)books);

	if (!policy)
		policy = sc && sc->policy ? sc->policy : conf->default_policy;
	if (policy)
		json_object_set_new(args, "policy", json_string(policy));
	if (o->igs)
		json_object_set_new(args, "igs", ig_array(o->igv, o->nigv));
	else if (sc && sc->nigs)
		json_object_set_new(args, "igs", ig_array(sc->igs, sc->nigs));
	if (o->away)
		json_object_set_new(args, "anti_affinity", json_string(o->away));
	return args;
}

/*
 * shelf.create, with "activate" for create -a (one round trip less).
 * *activated: the reply holds the activation.
 */
static int create_send(struct lfsvol_lib *lib, const char *what, json_t *args, bool activate,
		       json_t **res, bool *activated, uint64_t *sent)
{
	int r;

	*sent = lfs_boottime_ns();
	if (activate)
		json_object_set_new(args, "activate", json_string("rw"));
	r = lfsvol_lib_request(lib, what, "shelf.create", json_incref(args), res);
	*activated = activate && !r;
	lfsvol_trace("librarian shelf.create: %d", r);
	return r;
}

static int create_shelf(struct lfsvol_ctx *ctx, const struct create_opts *o, struct lfsvol_lib *lib,
			json_t **res, bool *activated, uint64_t *sent)
{
	uint64_t book_size = lfsvol_lib_book_size(lib), books;
	char what[128], a[32];
	json_t *args;
	int r;

	if (!book_size)
		return lfsvol_fail(LFSVOL_ELIBRARIAN, -EPROTO,
				   "the librarian did not say its book size: %s",
				   lfsvol_lib_errmsg(lib));
	if (lfs_size_books(&o->sz, book_size, &books))
		return lfsvol_usage("SIZE `%s' is more than %u books of %s", o->size_s,
				    LFS_SHELF_BOOKS_MAX, lfs_size_human(book_size, a, sizeof(a)));
	args = create_args(o, ctx->conf, books);
	snprintf(what, sizeof(what), "creating shelf `%s'", o->name);
	lfsvol_trace("create: arguments checked");
	r = create_send(lib, what, args, o->activate, res, activated, sent);
	json_decref(args);
	if (r)
		return r;
	lfsvol_say_rounding(o->sz.books, o->sz.value, o->size_s, books, book_size);
	lfsvol_info("created shelf %s: %llu book%s, %s, policy %s", o->name,
		    (unsigned long long)books, books == 1 ? "" : "s",
		    lfs_size_human(books * book_size, a, sizeof(a)),
		    json_string_value(json_object_get(*res, "policy")) ?: "?");
	return 0;
}

int cmd_create(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct create_opts o = { 0 };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	json_t *res = NULL;
	bool activated = false;
	uint64_t sent = 0;
	int r;

	r = create_options(argc, argv, &o);
	if (!r && o.activate) {
		r = lfsvol_need_root("create -a");
		if (!r)
			r = lfsvol_drv_open(&drv);
		/* a node whose lease expired activates nothing: ask before creating */
		if (!r)
			r = lfsvol_lease_usable(drv, "create -a");
	}
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (!r)
		r = create_shelf(ctx, &o, lib, &res, &activated, &sent);
	if (!r && o.activate) {
		struct lfsvol_activation how = { .given = activated ? res : NULL,
						 .given_sent = sent };

		r = lfsvol_activate_one(ctx, lib, drv, o.name, &how);
	}
	/* under --json: the new shelf as show --json has it */
	if (!r && lfsvol_json)
		lfsvol_result_set("shelf", lfsvol_shelf_describe(lib, o.name));
	json_decref(res);
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}

/* The active shelf: kernel first (refused while open), then the librarian. */
static int remove_active(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			 struct lfs_shelf_info *act, const char *what)
{
	int r = lfsvol_need_root("removing an active shelf");

	if (r)
		return r;
	r = lfsvol_kernel_remove(ctx->conf, drv, act->name);
	if (r)
		return lfsvol_drv_fail(drv, r, what);
	lfsvol_dev_link_drop(act->name, act->disk);
	return lfsvol_lib_request(lib, what, "shelf.deactivate",
				  json_pack("{s:s}", "name", act->name), NULL);
}

static int remove_shelf(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, const char *name,
			bool force)
{
	struct lfs_shelf_info *kv = NULL, *act;
	struct lfs_client *drv = NULL;
	json_t *sh = NULL, *res = NULL;
	char what[128];
	size_t kn = 0;
	int r;

	snprintf(what, sizeof(what), "removing shelf `%s'", name);
	r = lfsvol_lib_request(lib, what, "shelf.get",
			       json_pack("{s:s,s:i}", "name", name, "limit", 1), &sh);
	if (r)
		return r;
	r = lfsvol_kernel_shelves(&drv, name, &kv, &kn, true);
	act = lfsvol_find_active(kv, kn, name);
	if (!r)
		r = lfsvol_check_unused(act, name, "unmount it first");
	if (!r && !force)
		r = lfsvol_fs_guard(drv, act, sh, name, "remove");
	if (!r && act)
		r = remove_active(ctx, lib, drv, act, what);
	if (!r)
		r = lfsvol_lib_request(lib, what, "shelf.destroy", json_pack("{s:s}", "name", name),
				       &res);
	if (!r)
		lfsvol_result_set("removed", json_pack("{s:s,s:O?,s:O?,s:O?}", "name", name, "uuid",
						       json_object_get(sh, "uuid"), "books",
						       json_object_get(sh, "books"), "zombies",
						       json_object_get(res, "zombies")));
	if (!r)
		lfsvol_info("removed shelf %s; %lld book%s wait to be zeroed (ZOMBIE)", name,
			    (long long)json_integer_value(json_object_get(res, "zombies")),
			    json_integer_value(json_object_get(res, "zombies")) == 1 ? "" : "s");
	json_decref(sh);
	json_decref(res);
	lfsnl_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	return r;
}

int cmd_remove(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lfsvol_lib *lib = NULL;
	bool force = false;
	int c, r;

	while ((c = getopt(argc, argv, "f")) != -1) {
		if (c != 'f')
			return LFSVOL_EUSAGE;
		force = true;
	}
	if (optind != argc - 1) {
		lfsvol_err("usage: %s remove NAME [-f]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_check_name(argv[optind]);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r)
		r = remove_shelf(ctx, lib, argv[optind], force);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}

int cmd_rename(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lfs_shelf_info *kv = NULL;
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	char what[160];
	size_t kn = 0;
	int r;

	if (argc != 3) {
		lfsvol_err("usage: %s rename OLD NEW", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_check_name(argv[1]);
	if (!r)
		r = lfsvol_check_name(argv[2]);
	if (r)
		return lfsvol_exit_code(r);
	r = lfsvol_kernel_shelves(&drv, argv[1], &kv, &kn, true);
	if (!r && lfsvol_find_active(kv, kn, argv[1]))
		r = lfsvol_fail(
			LFSVOL_EREFUSED, -EBUSY,
			"shelf `%s' is active on this node; deactivate it, rename it, then activate `%s'",
			argv[1], argv[2]);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	snprintf(what, sizeof(what), "renaming shelf `%s' to `%s'", argv[1], argv[2]);
	if (!r)
		r = lfsvol_lib_request(lib, what, "shelf.rename",
				       json_pack("{s:s,s:s}", "name", argv[1], "new_name", argv[2]),
				       NULL);
	if (!r)
		lfsvol_info("renamed shelf %s to %s", argv[1], argv[2]);
	if (!r && lfsvol_json) {
		lfsvol_result_set("old_name", json_string(argv[1]));
		lfsvol_result_set("shelf", lfsvol_shelf_describe(lib, argv[2]));
	}
	lfsnl_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
