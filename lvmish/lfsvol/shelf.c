// SPDX-License-Identifier: GPL-2.0
/* create, remove, resize, rename, list, show. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liblfs.h"
#include "lfs_librarian.h"
#include "lfsvol.h"

static int check_name(const char *name)
{
	if (lfsvol_valid_name(name))
		return 0;
	lfsvol_err("invalid shelf name `%s': use 1-64 characters of A-Z a-z 0-9 . _ - (not starting with -)",
		   name);
	return LFSVOL_EUSAGE;
}

static const char *check_policy(const char *p)
{
	const char *hint, *canon = lfsvol_policy_lookup(p, &hint);

	if (canon)
		return canon;
	if (hint)
		lfsvol_err("unknown policy `%s'; did you mean `%s'?", p, hint);
	else
		lfsvol_err("unknown policy `%s'; see lfsvol(8) for the list", p);
	return NULL;
}

static void say_rounding(const struct lfsvol_size *sz, const char *arg, uint64_t books,
			 uint64_t book_size)
{
	char a[32], b[32];

	if (sz->books || sz->value == books * book_size)
		return;
	lfsvol_info("%s rounded up to %llu book%s of %s (%s)", arg, (unsigned long long)books,
		    books == 1 ? "" : "s", lfsvol_fmt_bytes(book_size, a, sizeof(a)),
		    lfsvol_fmt_bytes(books * book_size, b, sizeof(b)));
}


int cmd_create(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "ig", required_argument, NULL, 'i' },
		{ "away-from", required_argument, NULL, 'A' },
		{ "activate", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	const char *size_s = NULL, *policy = NULL, *igs = NULL, *away = NULL, *name;
	const struct lfsvol_shelf_conf *sc;
	struct lfsvol_size sz;
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	json_t *args, *res = NULL;
	uint32_t igv[LFSVOL_MAX_IGS];
	uint64_t book_size, books;
	bool activate = false, activated = false;
	char msg[256], a[32];
	int c, r;

	while ((c = getopt_long(argc, argv, "s:p:a", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			size_s = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'i':
			igs = optarg;
			break;
		case 'A':
			away = optarg;
			break;
		case 'a':
			activate = true;
			break;
		default:
			return LFSVOL_EUSAGE;
		}
	}
	if (optind != argc - 1 || !size_s) {
		lfsvol_err("usage: %s create NAME -s SIZE [-p POLICY] [--ig LIST] [--away-from SHELF] [-a]",
			   lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	name = argv[optind];
	r = check_name(name);
	if (r)
		return r;
	if (lfsvol_parse_size(size_s, false, &sz, msg, sizeof(msg))) {
		lfsvol_err("%s", msg);
		return LFSVOL_EUSAGE;
	}
	if (policy) {
		policy = check_policy(policy);
		if (!policy)
			return LFSVOL_EUSAGE;
	}
	if (igs && lfsvol_parse_ig_list(igs, igv, LFSVOL_MAX_IGS, msg, sizeof(msg)) < 0) {
		lfsvol_err("%s", msg);
		return LFSVOL_EUSAGE;
	}
	if (away) {
		r = check_name(away);
		if (r)
			return r;
	}
	if (activate) {
		r = lfsvol_need_root("create -a");
		if (!r)
			r = lfsvol_drv_open(&drv);
		if (r)
			return r;
	}
	r = lfsvol_lib_connect(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (r)
		goto out;
	sc = lfsvol_conf_shelf(ctx->conf, name);
	if (!policy)
		policy = sc && sc->policy ? sc->policy : ctx->conf->default_policy;
	book_size = lfsvol_lib_book_size(lib);
	if (lfsvol_size_to_books(&sz, book_size, &books)) {
		lfsvol_err("SIZE `%s' is more than %u books of %s", size_s, LFS_SHELF_BOOKS_MAX,
			   lfsvol_fmt_bytes(book_size, a, sizeof(a)));
		r = LFSVOL_EUSAGE;
		goto out;
	}
	args = json_pack("{s:s,s:I}", "name", name, "books", (json_int_t)books);
	if (policy)
		json_object_set_new(args, "policy", json_string(policy));
	if (igs) {
		json_object_set_new(args, "igs", json_string(igs));
	} else if (sc && sc->nigs) {
		json_t *arr = json_array();

		for (int i = 0; i < sc->nigs; i++)
			json_array_append_new(arr, json_integer(sc->igs[i]));
		json_object_set_new(args, "igs", arr);
	}
	if (away)
		json_object_set_new(args, "anti_affinity", json_string(away));
	snprintf(msg, sizeof(msg), "creating shelf `%s'", name);
	lfsvol_trace("create: arguments checked");
	if (activate) {
		/* create and activate in one librarian request */
		json_object_set_new(args, "activate", json_string("rw"));
		r = lv_call(lib, "shelf.create", json_incref(args), &res);
		activated = !r;
		if (r == -EINVAL && strstr(lv_errmsg(lib), "unknown argument 'activate'")) {
			json_object_del(args, "activate");	/* an older librarian */
			r = 0;
		} else if (r) {
			r = lfsvol_lib_fail(lib, msg, r);
		}
	} else {
		r = 0;
	}
	if (!activated && !r)
		r = lfsvol_lib_call(lib, msg, "shelf.create", json_incref(args), &res);
	json_decref(args);
	lfsvol_trace("librarian shelf.create: %d", r);
	if (r)
		goto out;
	say_rounding(&sz, size_s, books, book_size);
	lfsvol_info("created shelf %s: %llu book%s, %s, policy %s", name, (unsigned long long)books,
		    books == 1 ? "" : "s", lfsvol_fmt_bytes(books * book_size, a, sizeof(a)),
		    json_string_value(json_object_get(res, "policy")) ?: "?");
	if (activate)
		r = lfsvol_activate_one(ctx, lib, drv, name, false, false, activated ? res : NULL);
out:
	json_decref(res);
	lv_close(lib);
	lfs_client_close(drv);
	return r;
}

/*
 * The shelf's first book seen through the fabric device, for a signature
 * check while it is not active here.
 */
static int probe_inactive(struct lfs_client *drv, json_t *shelf, struct lfsvol_fsinfo *fs)
{
	struct lfs_fabric_info *fv = NULL;
	json_t *first = json_array_get(json_object_get(shelf, "map"), 0);
	json_int_t ig, book;
	size_t nf = 0;
	int r = -ENODEV;

	if (!first || json_unpack(first, "[II]", &ig, &book))
		return -ENODATA;
	if (!drv || lfs_fabric_list(drv, &fv, &nf))
		return -ENODEV;
	for (size_t i = 0; i < nf; i++) {
		if (fv[i].ig != (uint32_t)ig)
			continue;
		r = lfsvol_probe_fs(fv[i].path, fv[i].offset + (uint64_t)book * fv[i].book_size,
				    fv[i].book_size, fs);
		break;
	}
	free(fv);
	return r;
}

/*
 * The filesystem guard of remove and shrink: refuse if a signature is on
 * the shelf, or if it cannot be checked.
 */
static int fs_guard(struct lfs_client *drv, struct lfs_shelf_info *act, json_t *shelf,
		    const char *name, const char *what)
{
	struct lfsvol_fsinfo fs;
	char dev[64];
	int r;

	if (act) {
		snprintf(dev, sizeof(dev), "/dev/%s", act->disk);
		r = lfsvol_probe_fs(dev, 0, 0, &fs);
	} else {
		r = probe_inactive(drv, shelf, &fs);
	}
	if (r == -ENODATA)
		return 0;
	if (r) {
		lfsvol_err("cannot check shelf `%s' for a filesystem (%s); %s it anyway with -f", name,
			   act ? strerror(-r) : "not active here and its first book's device is not attached",
			   what);
		return LFSVOL_EREFUSED;
	}
	if (!fs.type[0])
		return 0;
	lfsvol_err("shelf `%s' holds a filesystem (%s%s%s%s%s); %s it anyway with -f (its data is lost)",
		   name, fs.type, fs.label[0] ? " LABEL=" : "", fs.label,
		   fs.uuid[0] ? " UUID=" : "", fs.uuid, what);
	return LFSVOL_EREFUSED;
}

static int kernel_shelves(struct lfs_client **drv, struct lfs_shelf_info **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (lfs_client_open(drv))
		return 0;	/* driver not loaded: nothing is active here */
	if (lfs_shelf_list(*drv, NULL, v, n))
		*n = 0;
	return 0;
}

int cmd_remove(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfs_shelf_info *kv = NULL, *act;
	json_t *sh = NULL, *res = NULL;
	bool force = false;
	const char *name;
	char what[128];
	size_t kn = 0;
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
	name = argv[optind];
	r = check_name(name);
	if (r)
		return r;
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		return r;
	snprintf(what, sizeof(what), "removing shelf `%s'", name);
	r = lfsvol_lib_call(lib, what, "shelf.get", json_pack("{s:s,s:i}", "name", name, "limit", 1), &sh);
	if (r)
		goto out;
	kernel_shelves(&drv, &kv, &kn);
	act = lfsvol_find_active(kv, kn, name);
	if (act && (act->open || lfsvol_dev_mounted(act->devt))) {
		lfsvol_err("shelf `%s' is in use on this node (/dev/%s is mounted or open); unmount it first",
			   name, act->disk);
		r = LFSVOL_EREFUSED;
		goto out;
	}
	if (!force) {
		r = fs_guard(drv, act, sh, name, "remove");
		if (r)
			goto out;
	}
	if (act) {
		int prio;

		r = lfsvol_need_root("removing an active shelf");
		if (r)
			goto out;
		prio = lfsvol_priority_raise(ctx);
		r = lfs_shelf_remove(drv, name);
		lfsvol_priority_restore(prio);
		if (r) {
			r = lfsvol_drv_fail(drv, r, what);
			goto out;
		}
		lfsvol_dev_link_drop(name, act->disk);
		r = lfsvol_lib_call(lib, what, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
		if (r)
			goto out;
	}
	r = lfsvol_lib_call(lib, what, "shelf.destroy", json_pack("{s:s}", "name", name), &res);
	if (r)
		goto out;
	lfsvol_info("removed shelf %s; %lld book%s wait to be zeroed (ZOMBIE)", name,
		    (long long)json_integer_value(json_object_get(res, "zombies")),
		    json_integer_value(json_object_get(res, "zombies")) == 1 ? "" : "s");
out:
	json_decref(sh);
	json_decref(res);
	lfs_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	lv_close(lib);
	return r;
}

int cmd_resize(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfs_shelf_info *kv = NULL, *act;
	struct lfs_book *books = NULL;
	json_t *sh = NULL, *res = NULL;
	const char *name, *size_s = NULL;
	struct lfsvol_size sz;
	uint64_t book_size, cur, delta, target;
	bool force = false;
	char what[128], msg[256], a[32];
	size_t kn = 0, nb = 0;
	int c, r;

	while ((c = getopt(argc, argv, "s:f")) != -1) {
		if (c == 's')
			size_s = optarg;
		else if (c == 'f')
			force = true;
		else
			return LFSVOL_EUSAGE;
	}
	if (optind != argc - 1 || !size_s) {
		lfsvol_err("usage: %s resize NAME -s [+|-]SIZE [-f]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	name = argv[optind];
	r = check_name(name);
	if (r)
		return r;
	if (lfsvol_parse_size(size_s, true, &sz, msg, sizeof(msg))) {
		lfsvol_err("%s", msg);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		return r;
	book_size = lfsvol_lib_book_size(lib);
	snprintf(what, sizeof(what), "resizing shelf `%s'", name);
	r = lfsvol_lib_call(lib, what, "shelf.get", json_pack("{s:s,s:i}", "name", name, "limit", 1), &sh);
	if (r)
		goto out;
	cur = (uint64_t)json_integer_value(json_object_get(sh, "books"));
	if (lfsvol_size_to_books(&sz, book_size, &delta)) {
		lfsvol_err("SIZE `%s' is more than %u books", size_s, LFS_SHELF_BOOKS_MAX);
		r = LFSVOL_EUSAGE;
		goto out;
	}
	if (sz.sign > 0)
		target = cur + delta;
	else if (sz.sign < 0)
		target = delta >= cur ? 0 : cur - delta;
	else
		target = delta;
	if (target == 0) {
		lfsvol_err("SIZE `%s' would leave shelf `%s' (%llu books) with no book; remove it with `%s remove %s'",
			   size_s, name, (unsigned long long)cur, lfsvol_prog, name);
		r = LFSVOL_EUSAGE;
		goto out;
	}
	if (target > LFS_SHELF_BOOKS_MAX) {
		lfsvol_err("SIZE `%s' would give shelf `%s' more than %u books", size_s, name,
			   LFS_SHELF_BOOKS_MAX);
		r = LFSVOL_EUSAGE;
		goto out;
	}
	if (sz.sign < 0 && !sz.books && sz.value % book_size)
		lfsvol_info("%s rounded up to %llu book%s of %s", size_s, (unsigned long long)delta,
			    delta == 1 ? "" : "s", lfsvol_fmt_bytes(book_size, a, sizeof(a)));
	else if (sz.sign >= 0)
		say_rounding(&sz, size_s, delta, book_size);
	if (target == cur) {
		lfsvol_info("shelf %s already has %llu books", name, (unsigned long long)cur);
		goto out;
	}
	kernel_shelves(&drv, &kv, &kn);
	act = lfsvol_find_active(kv, kn, name);
	if (act) {
		r = lfsvol_need_root("resizing an active shelf");
		if (r)
			goto out;
	}
	if (target < cur) {
		if (act && (act->open || lfsvol_dev_mounted(act->devt))) {
			lfsvol_err("shelf `%s' is in use on this node (/dev/%s is mounted or open); it can only shrink unmounted",
				   name, act->disk);
			r = LFSVOL_EREFUSED;
			goto out;
		}
		if (!force) {
			r = fs_guard(drv, act, sh, name, "shrink");
			if (r)
				goto out;
		}
		if (act) {
			r = lfs_shelf_shrink(drv, name, (uint32_t)target);
			if (r) {
				r = lfsvol_drv_fail(drv, r, what);
				goto out;
			}
		}
	}
	r = lfsvol_lib_call(lib, what, "shelf.resize",
			    json_pack("{s:s,s:I}", "name", name, "books", (json_int_t)target), &res);
	if (r)
		goto out;
	if (target > cur && act) {
		json_t *added = json_object_get(res, "added");
		json_t *tmp = json_pack("{s:I,s:O,s:b}", "books", (json_int_t)(target - cur), "map",
					added ? added : json_array(), "map_complete", added != NULL);

		r = lfsvol_lib_shelf_map(lib, name, tmp, &books, &nb);
		json_decref(tmp);
		if (r) {
			lfsvol_err("%s: the librarian did not return the added books; run `%s deactivate %s' and activate it again",
				   what, lfsvol_prog, name);
			r = LFSVOL_ELIBRARIAN;
			goto out;
		}
		r = lfs_shelf_extend(drv, name, books, nb);
		if (r) {
			r = lfsvol_drv_fail(drv, r, what);
			goto out;
		}
	}
	lfsvol_info("resized shelf %s: %llu -> %llu books (%s)%s", name, (unsigned long long)cur,
		    (unsigned long long)target, lfsvol_fmt_bytes(target * book_size, a, sizeof(a)),
		    target < cur ? "; the dropped books wait to be zeroed" : "");
out:
	free(books);
	json_decref(sh);
	json_decref(res);
	lfs_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	lv_close(lib);
	return r;
}

int cmd_rename(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfs_shelf_info *kv = NULL;
	char what[160];
	size_t kn = 0;
	int r;

	if (argc != 3) {
		lfsvol_err("usage: %s rename OLD NEW", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = check_name(argv[1]);
	if (!r)
		r = check_name(argv[2]);
	if (r)
		return r;
	kernel_shelves(&drv, &kv, &kn);
	if (lfsvol_find_active(kv, kn, argv[1])) {
		lfsvol_err("shelf `%s' is active on this node; deactivate it, rename it, then activate `%s'",
			   argv[1], argv[2]);
		r = LFSVOL_EREFUSED;
		goto out;
	}
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		goto out;
	snprintf(what, sizeof(what), "renaming shelf `%s' to `%s'", argv[1], argv[2]);
	r = lfsvol_lib_call(lib, what, "shelf.rename",
			    json_pack("{s:s,s:s}", "name", argv[1], "new_name", argv[2]), NULL);
	if (!r)
		lfsvol_info("renamed shelf %s to %s", argv[1], argv[2]);
out:
	lfs_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	lv_close(lib);
	return r;
}

/* One shelf as the JSON object of list/show: librarian facts plus this node's. */
static json_t *shelf_object(json_t *ls, struct lfs_shelf_info *act)
{
	json_t *o = json_object(), *nodes = json_array(), *el;
	struct lfsvol_fsinfo fs = { 0 };
	char dev[80];
	size_t i;

	json_object_set(o, "name", json_object_get(ls, "name"));
	json_object_set(o, "uuid", json_object_get(ls, "uuid"));
	json_object_set(o, "size", json_object_get(ls, "size"));
	json_object_set(o, "books", json_object_get(ls, "books"));
	json_object_set(o, "policy", json_object_get(ls, "policy"));
	json_array_foreach(json_object_get(ls, "activations"), i, el)
		json_array_append(nodes, json_object_get(el, "node"));
	json_object_set_new(o, "active", nodes);
	json_object_set(o, "activations", json_object_get(ls, "activations"));
	if (act) {
		snprintf(dev, sizeof(dev), "/dev/lfs/%s", act->name);
		json_object_set_new(o, "device", json_string(dev));
		snprintf(dev, sizeof(dev), "/dev/%s", act->disk);
		json_object_set_new(o, "disk", json_string(dev));
		lfsvol_probe_fs(dev, 0, 0, &fs);
	} else {
		json_object_set_new(o, "device", json_null());
		json_object_set_new(o, "disk", json_null());
	}
	json_object_set_new(o, "fstype", fs.type[0] ? json_string(fs.type) : json_null());
	json_object_set_new(o, "label", fs.label[0] ? json_string(fs.label) : json_null());
	json_object_set_new(o, "fsuuid", fs.uuid[0] ? json_string(fs.uuid) : json_null());
	return o;
}

static void print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

static int list_or_show(int argc, char **argv, struct lfsvol_ctx *ctx, bool show)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfs_shelf_info *kv = NULL;
	json_t *res = NULL, *out = json_array(), *el, *alloc = NULL;
	const char *name = NULL;
	bool json = false;
	size_t kn = 0, i;
	char what[128];
	int c, r;

	while ((c = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (c != 'j')
			return LFSVOL_EUSAGE;
		json = true;
	}
	if (show ? optind != argc - 1 : optind != argc) {
		lfsvol_err("usage: %s %s [--json]", lfsvol_prog, show ? "show NAME" : "list");
		return LFSVOL_EUSAGE;
	}
	if (show) {
		name = argv[optind];
		r = check_name(name);
		if (r)
			return r;
	}
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		goto out;
	kernel_shelves(&drv, &kv, &kn);
	if (show) {
		json_t *o, *a = NULL;

		snprintf(what, sizeof(what), "showing shelf `%s'", name);
		r = lfsvol_lib_call(lib, what, "shelf.get", json_pack("{s:s}", "name", name), &res);
		if (r)
			goto out;
		o = shelf_object(res, lfsvol_find_active(kv, kn, name));
		if (!lv_call(lib, "attr.get", json_pack("{s:s,s:s}", "name", name, "key",
							     "lfs.allocation"), &a))
			alloc = json_loads(json_string_value(json_object_get(a, "value")), 0, NULL);
		json_decref(a);
		json_object_set(o, "allocation", alloc ? alloc : json_null());
		json_object_set(o, "attrs", json_object_get(res, "attrs"));
		json_object_set(o, "owner", json_object_get(res, "owner"));
		json_object_set(o, "map", json_object_get(res, "map"));
		json_array_append_new(out, o);
	} else {
		json_int_t off = 0, total;

		do {
			json_decref(res);
			r = lfsvol_lib_call(lib, "listing shelves", "shelf.list",
					    json_pack("{s:I,s:i}", "offset", off, "limit", 1000), &res);
			if (r)
				goto out;
			json_array_foreach(json_object_get(res, "shelves"), i, el) {
				const char *n = json_string_value(json_object_get(el, "name"));

				json_array_append_new(out, shelf_object(el, lfsvol_find_active(kv, kn, n)));
			}
			total = json_integer_value(json_object_get(res, "total"));
			off += (json_int_t)json_array_size(json_object_get(res, "shelves"));
		} while (off < total && json_array_size(json_object_get(res, "shelves")));
	}
	if (json) {
		print_json(out);
		goto out;
	}
	if (!show) {
		printf("%-20s %10s %7s %-13s %-14s %-16s %s\n", "NAME", "SIZE", "BOOKS", "POLICY",
		       "ACTIVE", "DEVICE", "FSTYPE");
		json_array_foreach(out, i, el) {
			char sz[32], active[64] = "";
			json_t *n;
			size_t k;

			json_array_foreach(json_object_get(el, "active"), k, n) {
				if (k)
					strncat(active, ",", sizeof(active) - strlen(active) - 1);
				strncat(active, json_string_value(n), sizeof(active) - strlen(active) - 1);
			}
			printf("%-20s %10s %7lld %-13s %-14s %-16s %s\n",
			       json_string_value(json_object_get(el, "name")),
			       lfsvol_fmt_bytes((uint64_t)json_integer_value(json_object_get(el, "size")), sz, sizeof(sz)),
			       (long long)json_integer_value(json_object_get(el, "books")),
			       json_string_value(json_object_get(el, "policy")),
			       active[0] ? active : "-",
			       json_is_string(json_object_get(el, "device")) ? json_string_value(json_object_get(el, "device")) : "-",
			       json_is_string(json_object_get(el, "fstype")) ? json_string_value(json_object_get(el, "fstype")) : "-");
		}
	} else {
		json_t *o = json_array_get(out, 0), *v;
		const char *k;
		char sz[32];

		printf("name:        %s\n", json_string_value(json_object_get(o, "name")));
		printf("uuid:        %s\n", json_string_value(json_object_get(o, "uuid")));
		printf("size:        %s (%lld books)\n",
		       lfsvol_fmt_bytes((uint64_t)json_integer_value(json_object_get(o, "size")), sz, sizeof(sz)),
		       (long long)json_integer_value(json_object_get(o, "books")));
		printf("policy:      %s (requested)\n", json_string_value(json_object_get(o, "policy")));
		printf("allocation:");
		json_object_foreach(json_object_get(alloc, "igs"), k, v)
			printf(" IG %s: %lld", k, (long long)json_integer_value(v));
		printf(" |");
		json_object_foreach(json_object_get(alloc, "nodes"), k, v)
			printf(" node %s: %lld", k, (long long)json_integer_value(v));
		printf("\nactive on:  ");
		json_array_foreach(json_object_get(o, "activations"), i, el)
			printf(" %s (%s)", json_string_value(json_object_get(el, "node")),
			       json_string_value(json_object_get(el, "mode")));
		printf("%s\n", json_array_size(json_object_get(o, "activations")) ? "" : " -");
		printf("device:      %s\n", json_is_string(json_object_get(o, "device")) ?
		       json_string_value(json_object_get(o, "device")) : "- (not active here)");
		printf("filesystem:  %s", json_is_string(json_object_get(o, "fstype")) ?
		       json_string_value(json_object_get(o, "fstype")) : "-");
		if (json_is_string(json_object_get(o, "label")))
			printf(" LABEL=%s", json_string_value(json_object_get(o, "label")));
		if (json_is_string(json_object_get(o, "fsuuid")))
			printf(" UUID=%s", json_string_value(json_object_get(o, "fsuuid")));
		printf("\n");
	}
out:
	json_decref(alloc);
	json_decref(res);
	json_decref(out);
	lfs_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	lv_close(lib);
	return r;
}

int cmd_list(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	return list_or_show(argc, argv, ctx, false);
}

int cmd_show(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	return list_or_show(argc, argv, ctx, true);
}
