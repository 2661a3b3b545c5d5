// SPDX-License-Identifier: GPL-2.0
/*
 * `lfsvol book clear IG:BOOK...': the admin returns books whose bad memory
 * was cleared (ndctl clear-error, or the whole book rewritten: lfsvol(8))
 * to service. The librarian allows it to its admin key only (book.clear);
 * the books go through zeroing (ZOMBIE) before any shelf gets them. This
 * node's kernel is asked first: a book that lfs.ko here still lists bad
 * (lfsctl fabric) is refused, since its zeroing would fail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

/* "IG:BOOK" as [ig, book], or NULL. */
static json_t *book_arg(const char *s)
{
	unsigned long long ig, book;
	int end = 0;

	if (sscanf(s, "%llu:%llu%n", &ig, &book, &end) != 2 || s[end] || ig > 0xffffffffULL ||
	    book > 0xffffffffULL || strchr(s, '-') || strchr(s, '+') || strchr(s, ' '))
		return NULL;
	return json_pack("[I,I]", (json_int_t)ig, (json_int_t)book);
}

/* Does a bad range of a fabric attached here cover any byte of the book? */
static bool kernel_bad(const struct lfs_fabric_info *fv, size_t nf, uint32_t ig, uint32_t book)
{
	for (size_t j = 0; j < nf; j++) {
		uint64_t bs = fv[j].book_size, start = (uint64_t)book * bs, end = start + bs;

		for (uint32_t i = 0; fv[j].ig == ig && i < fv[j].nr_bad && i < LFS_BAD_MAX; i++) {
			uint64_t s = (uint64_t)fv[j].bad[i].book * bs + fv[j].bad[i].offset;

			if (s < end && s + fv[j].bad[i].length > start)
				return true;
		}
	}
	return false;
}

/* The books, each checked against this node's kernel (if lfs.ko is here). */
static int clear_args(int argc, char **argv, json_t *books)
{
	struct lfs_fabric_info *fv = NULL;
	struct lfs_client *drv = NULL;
	size_t nf = 0;
	int r = 0;

	if (!lfs_client_open(&drv))
		lfsnl_fabric_list(drv, &fv, &nf);
	for (int i = 0; i < argc && !r; i++) {
		json_t *b = book_arg(argv[i]);

		if (!b)
			r = lfsvol_usage("Invalid book: `%s' (IG:BOOK, e.g. 0:17)", argv[i]);
		else if (kernel_bad(fv, nf, json_integer_value(json_array_get(b, 0)),
				    json_integer_value(json_array_get(b, 1))))
			r = lfsvol_fail(
				LFSVOL_EREFUSED, -EBUSY,
				"book %s still holds bad memory on this node (lfsctl fabric lists it): clear the error first (ndctl clear-error, then detach and attach the fabric), nothing was changed",
				argv[i]);
		json_array_append_new(books, b);
	}
	free(fv);
	lfs_client_close(drv);
	return r;
}

int cmd_book(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lfsvol_lib *lib = NULL;
	json_t *books = json_array(), *res = NULL;
	int r;

	if (argc < 3 || strcmp(argv[1], "clear"))
		r = lfsvol_usage("usage: %s book clear IG:BOOK...", lfsvol_prog);
	else
		r = clear_args(argc - 2, argv + 2, books);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r)
		r = lfsvol_lib_request(lib, "clearing bad books", "book.clear",
				       json_pack("{s:O}", "books", books), &res);
	if (!r) {
		lfsvol_result_set("cleared", json_incref(json_object_get(res, "cleared")));
		lfsvol_info("%lld book%s cleared: each is zeroed by its node before reuse",
			    (long long)json_integer_value(json_object_get(res, "cleared")),
			    json_integer_value(json_object_get(res, "cleared")) == 1 ? "" : "s");
	}
	json_decref(res);
	json_decref(books);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
