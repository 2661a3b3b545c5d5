// SPDX-License-Identifier: GPL-2.0
/*
 * attach [--init]: attach this node's configured fabric devices now (the
 * agent and udev do it too), and with --init first write each device's
 * label: the librarian's fabric UUID, the IG, book size and data offset
 * lfs.conf gives it (docs/FENCING.md, "Safe reuse"). --init writes only on
 * a device that is not attached, carries no label and no signature
 * libblkid knows, and only after checking the values against lfs.conf and
 * the librarian's geometry; run it once per fabric, when the memory is new.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

/* The book counts of one node's IGs, for the configured ones. */
static void node_books(json_t *node, const struct lfsvol_conf *conf, long long *books)
{
	json_t *ig;
	size_t gi;

	json_array_foreach(json_object_get(node, "igs"), gi, ig) {
		for (int i = 0; i < conf->nfabrics; i++)
			if (json_integer_value(json_object_get(ig, "ig")) == conf->fabrics[i].ig)
				books[i] = json_integer_value(json_object_get(ig, "books"));
	}
}

/* The librarian's book count for each configured IG; -1 if the fabric has no such IG. */
static int igs_books(struct lfsvol_lib *lib, const struct lfsvol_conf *conf, long long *books)
{
	json_t *geo = NULL, *rack, *enc, *node;
	size_t ri, ei, ni;
	int r;

	for (int i = 0; i < conf->nfabrics; i++)
		books[i] = -1;
	r = lfsvol_lib_request(lib, "reading the fabric's geometry", "geometry", NULL, &geo);
	if (r)
		return r;
	json_array_foreach(json_object_get(geo, "racks"), ri, rack)
		json_array_foreach(json_object_get(rack, "enclosures"), ei, enc)
			json_array_foreach(json_object_get(enc, "nodes"), ni, node)
				node_books(node, conf, books);
	json_decref(geo);
	return 0;
}

static int label_all(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
		     const struct lfsvol_fabric_id *id)
{
	long long *books = calloc((size_t)ctx->conf->nfabrics + 1, sizeof(*books));
	int r;

	if (!books)
		return lfsvol_fail(LFSVOL_EFAIL, -ENOMEM, "out of memory");
	if (!id->has_uuid)
		r = lfsvol_fail(
			LFSVOL_ELIBRARIAN, -EPROTONOSUPPORT,
			"the librarian at %s gives no fabric UUID (its auth reply has no fabric_uuid): it is too old for fabric labels",
			ctx->conf->librarian);
	else
		r = igs_books(lib, ctx->conf, books);
	if (!r)
		r = lfsvol_label_fabrics(ctx->conf, drv, lib, id, books);
	free(books);
	return r;
}

/* One line per configured IG: attached, and labelled or not. */
static void attach_summary(const struct lfsvol_conf *conf, struct lfs_client *drv)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0;

	if (lfsnl_fabric_list(drv, &fv, &nf))
		return;
	for (int i = 0; i < conf->nfabrics; i++) {
		const struct lfs_fabric_info *f = NULL;

		for (size_t k = 0; k < nf; k++)
			if (fv[k].ig == conf->fabrics[i].ig)
				f = &fv[k];
		if (f)
			lfsvol_info("IG %u: %s attached, %u books, %s", f->ig, f->path, f->nr_books,
				    f->labelled ? "labelled" : "no label");
		else
			lfsvol_info("IG %u: not attached", conf->fabrics[i].ig);
		lfsvol_result_append("fabric",
				     json_pack("{s:i,s:b,s:o,s:o,s:b}", "ig",
					       (int)conf->fabrics[i].ig, "attached", f != NULL,
					       "path", f ? json_string(f->path) : json_null(),
					       "books", f ? json_integer(f->nr_books) : json_null(),
					       "labelled", f && f->labelled));
	}
	free(fv);
}

int cmd_attach(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "init", no_argument, NULL, 'i' },
					      { NULL, 0, NULL, 0 } };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfsvol_fabric_id id;
	bool init = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'i')
			return LFSVOL_EUSAGE;
		init = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s attach [--init]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_need_root("attach");
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r && lfsvol_fabric_id_get(lib, 0, &id))
		r = lfsvol_fail(LFSVOL_ELIBRARIAN, -EPROTO,
				"the librarian did not say its book size: %s",
				lfsvol_lib_errmsg(lib));
	if (!r && init)
		r = label_all(ctx, lib, drv, &id);
	if (!r)
		r = lfsvol_attach_fabrics(ctx->conf, drv, &id, false);
	if (drv)
		attach_summary(ctx->conf, drv);
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}
