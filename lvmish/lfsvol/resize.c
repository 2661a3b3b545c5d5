// SPDX-License-Identifier: GPL-2.0
/*
 * resize: grow (librarian, then the kernel's EXTEND if active here: works
 * while mounted) or shrink (guards, the kernel's SHRINK if active here,
 * then the librarian: the kernel refuses while open, so the librarian is
 * never told about books still in use).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel.h"
#include "lfs_rules.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

struct resize {
	const char *name, *size_s;
	struct lfs_size sz;
	bool force;
	uint64_t book_size, cur, delta, target;
	char what[128];
};

static int resize_options(int argc, char **argv, struct resize *z)
{
	char msg[256];
	int c, r;

	while ((c = getopt(argc, argv, "s:f")) != -1) {
		if (c == 's')
			z->size_s = optarg;
		else if (c == 'f')
			z->force = true;
		else
			return lfsvol_exit_as(LFSVOL_EUSAGE, -EINVAL);
	}
	if (optind != argc - 1 || !z->size_s)
		return lfsvol_usage("usage: %s resize NAME -s [+|-]SIZE [-f]", lfsvol_prog);
	z->name = argv[optind];
	r = lfsvol_check_name(z->name);
	if (r)
		return r;
	if (lfs_size_parse(z->size_s, LFS_SIZE_BOOKS | LFS_SIZE_SIGN, &z->sz, msg, sizeof(msg)))
		return lfsvol_usage("%s", msg);
	snprintf(z->what, sizeof(z->what), "resizing shelf `%s'", z->name);
	return 0;
}

/* The new size in books, from the current one; says how SIZE was rounded. */
static int resize_target(struct resize *z)
{
	char a[32];

	if (lfs_size_books(&z->sz, z->book_size, &z->delta))
		return lfsvol_usage("SIZE `%s' is more than %u books", z->size_s,
				    LFS_SHELF_BOOKS_MAX);
	if (z->sz.sign > 0)
		z->target = z->cur + z->delta;
	else if (z->sz.sign < 0)
		z->target = z->delta >= z->cur ? 0 : z->cur - z->delta;
	else
		z->target = z->delta;
	if (z->target == 0)
		return lfsvol_usage(
			"SIZE `%s' would leave shelf `%s' (%llu books) with no book; remove it with `%s remove %s'",
			z->size_s, z->name, (unsigned long long)z->cur, lfsvol_prog, z->name);
	if (z->target > LFS_SHELF_BOOKS_MAX)
		return lfsvol_usage("SIZE `%s' would give shelf `%s' more than %u books", z->size_s,
				    z->name, LFS_SHELF_BOOKS_MAX);
	if (z->sz.sign < 0 && !z->sz.books && z->sz.value % z->book_size)
		lfsvol_info("%s rounded up to %llu book%s of %s", z->size_s,
			    (unsigned long long)z->delta, z->delta == 1 ? "" : "s",
			    lfs_size_human(z->book_size, a, sizeof(a)));
	else if (z->sz.sign >= 0)
		lfsvol_say_rounding(z->sz.books, z->sz.value, z->size_s, z->delta, z->book_size);
	return 0;
}

/* Shrinking: the guards, then the kernel if active here (before the librarian). */
static int shrink_kernel(struct resize *z, struct lfs_client *drv, struct lfs_shelf_info *act,
			 json_t *sh)
{
	int r = lfsvol_check_unused(act, z->name, "it can only shrink unmounted");

	if (!r && !z->force)
		r = lfsvol_fs_guard(drv, act, sh, z->name, "shrink");
	if (r || !act)
		return r;
	r = lfsnl_shelf_shrink(drv, z->name, (uint32_t)z->target);
	return r ? lfsvol_drv_fail(drv, r, z->what) : 0;
}

/* Growing a shelf active here: the librarian's added books to the kernel. */
static int grow_kernel(struct resize *z, struct lfsvol_lib *lib, struct lfs_client *drv,
		       json_t *res)
{
	json_t *added = json_object_get(res, "added");
	json_t *tmp = json_pack("{s:I,s:O,s:b}", "books", (json_int_t)(z->target - z->cur), "map",
				added ? added : json_array(), "map_complete", added != NULL);
	struct lfs_book *books = NULL;
	size_t nb = 0;
	int r;

	r = lfsvol_lib_shelf_map(lib, z->name, tmp, &books, &nb);
	json_decref(tmp);
	if (r)
		return lfsvol_fail(
			LFSVOL_ELIBRARIAN, r,
			"%s: the librarian did not return the added books; run `%s deactivate %s' and activate it again",
			z->what, lfsvol_prog, z->name);
	r = lfsnl_shelf_extend(drv, z->name, books, nb);
	free(books);
	return r ? lfsvol_drv_fail(drv, r, z->what) : 0;
}

static int resize_shelf(struct resize *z, struct lfsvol_lib *lib, json_t *sh)
{
	struct lfs_shelf_info *kv = NULL, *act;
	struct lfs_client *drv = NULL;
	json_t *res = NULL;
	size_t kn = 0;
	char a[32];
	int r;

	r = lfsvol_kernel_shelves(&drv, z->name, &kv, &kn, true);
	act = lfsvol_find_active(kv, kn, z->name);
	if (!r && act)
		r = lfsvol_need_root("resizing an active shelf");
	if (!r && z->target < z->cur)
		r = shrink_kernel(z, drv, act, sh);
	if (!r)
		r = lfsvol_lib_request(lib, z->what, "shelf.resize",
				       json_pack("{s:s,s:I}", "name", z->name, "books",
						 (json_int_t)z->target),
				       &res);
	if (!r && z->target > z->cur && act)
		r = grow_kernel(z, lib, drv, res);
	if (!r)
		lfsvol_info("resized shelf %s: %llu -> %llu books (%s)%s", z->name,
			    (unsigned long long)z->cur, (unsigned long long)z->target,
			    lfs_size_human(z->target * z->book_size, a, sizeof(a)),
			    z->target < z->cur ? "; the dropped books wait to be zeroed" : "");
	json_decref(res);
	lfsnl_shelf_list_free(kv, kn);
	lfs_client_close(drv);
	return r;
}

int cmd_resize(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct resize z = { 0 };
	struct lfsvol_lib *lib = NULL;
	json_t *sh = NULL;
	int r;

	r = resize_options(argc, argv, &z);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r) {
		z.book_size = lfsvol_lib_book_size(lib);
		r = lfsvol_lib_request(lib, z.what, "shelf.get",
				       json_pack("{s:s,s:i}", "name", z.name, "limit", 1), &sh);
	}
	if (!r && !z.book_size)
		r = lfsvol_fail(LFSVOL_ELIBRARIAN, -EPROTO,
				"the librarian did not say its book size");
	if (!r) {
		z.cur = (uint64_t)json_integer_value(json_object_get(sh, "books"));
		r = resize_target(&z);
	}
	if (!r && z.target == z.cur)
		lfsvol_info("shelf %s already has %llu books", z.name, (unsigned long long)z.cur);
	else if (!r)
		r = resize_shelf(&z, lib, sh);
	if (!r && lfsvol_json) {
		lfsvol_result_set("books_before", json_integer((json_int_t)z.cur));
		lfsvol_result_set("changed", json_boolean(z.target != z.cur));
		lfsvol_result_set("shelf", lfsvol_shelf_describe(lib, z.name));
	}
	json_decref(sh);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
