// SPDX-License-Identifier: GPL-2.0
/* activate and deactivate: the librarian arbitrates, the kernel builds /dev/lfsN. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblfs.h"
#include "lfs_librarian.h"
#include "lfsvol.h"

#define LINK_TIMEOUT_MS 10000


static bool same_uuid(const struct lfs_shelf_info *k, json_t *sh)
{
	uint8_t u[LFS_UUID_LEN];
	const char *s = json_string_value(json_object_get(sh, "uuid"));

	return s && !lfs_parse_uuid(s, u) && !memcmp(u, k->uuid, LFS_UUID_LEN);
}

/* A shared activation is read-only on every node: make the block device so. */
static int set_read_only(const char *disk)
{
	char dev[64];
	int fd, one = 1, r = 0;

	snprintf(dev, sizeof(dev), "/dev/%s", disk);
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKROSET, &one))
		r = -errno;
	close(fd);
	return r;
}

/* Is any fabric device of the config not attached (by IG)? */
static bool fabrics_missing(struct lfsvol_ctx *ctx, const struct lfs_fabric_info *fv, size_t nf)
{
	for (int i = 0; i < ctx->conf->nfabrics; i++) {
		bool have = false;

		for (size_t k = 0; k < nf; k++)
			have |= fv[k].ig == ctx->conf->fabrics[i].ig;
		if (!have)
			return true;
	}
	return false;
}

/*
 * Attach the config's fabric devices that are not yet (with the book size
 * of the librarian), then: are all IGs of the map attached here? One
 * fabric list when nothing is missing, the usual case.
 */
static bool igs_attached(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			 json_t *sh, uint32_t *missing)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0, i;
	json_t *el;
	bool ok = true;

	if (lfs_fabric_list(drv, &fv, &nf))
		return true;	/* let the kernel say what is wrong */
	if (fabrics_missing(ctx, fv, nf)) {
		free(fv);
		fv = NULL;
		nf = 0;
		lfsvol_attach_fabrics(ctx, drv, lfsvol_lib_book_size(lib), true);
		if (lfs_fabric_list(drv, &fv, &nf))
			return true;
	}
	json_array_foreach(json_object_get(sh, "map"), i, el) {
		json_int_t ig = json_integer_value(json_array_get(el, 0));
		bool have = false;

		for (size_t k = 0; k < nf; k++)
			have |= fv[k].ig == (uint32_t)ig;
		if (!have) {
			*missing = (uint32_t)ig;
			ok = false;
			break;
		}
	}
	free(fv);
	return ok;
}

/*
 * Activate NAME here. given: the librarian's answer to a shelf.create that
 * activated it already (create -a), or NULL to ask for the activation.
 */
int lfsvol_activate_one(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			const char *name, bool shared, bool quiet, json_t *given)
{
	struct lfs_shelf_info *kv = NULL, *act = NULL;
	json_t *sh = NULL;
	char what[128], disk[32] = "";
	uint32_t missing = 0;
	size_t kn = 0;
	int r;

	snprintf(what, sizeof(what), "activating shelf `%s'", name);
	lfsvol_trace("activate %s", name);
	if (given) {
		sh = json_incref(given);
		r = 0;
	} else {
		/* idempotent: a node that holds the activation may ask again */
		r = lfsvol_lib_call(lib, what, "shelf.activate",
				    json_pack("{s:s,s:s,s:b}", "name", name, "mode",
					      shared ? "ro" : "rw", "takeover", ctx->takeover),
				    &sh);
	}
	lfsvol_trace(given ? "activated by shelf.create" : "librarian shelf.activate: %d", r);
	if (r)
		goto out;
	/*
	 * The kernel refuses a book on an IG not attached (ENODEV): only then
	 * attach what lfs.conf maps and check the IGs, and try again. It
	 * refuses a name it has (EEXIST): then see which shelf that is.
	 */
	r = lfsvol_kernel_activate(ctx, lib, drv, sh, disk, sizeof(disk), true);
	lfsvol_trace("kernel shelf create: %d", r);
	if (r == -ENODEV) {
		if (!igs_attached(ctx, lib, drv, sh, &missing)) {
			lfsvol_err("%s: its books are on IG %u, which is not attached here; map it in the fabric list of %s",
				   what, missing, ctx->conf->path);
			lv_call(lib, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
			r = LFSVOL_EDRIVER;
			goto out;
		}
		lfsvol_trace("fabrics attached, IGs checked");
		r = lfsvol_kernel_activate(ctx, lib, drv, sh, disk, sizeof(disk), true);
		lfsvol_trace("kernel shelf create: %d", r);
	}
	if (r == -EEXIST) {
		/* active here already (a restart of the command, the agent's pass)? */
		r = lfs_shelf_list(drv, NULL, &kv, &kn);
		if (!r)
			act = lfsvol_find_active(kv, kn, name);
		/*
		 * For a shelf the librarian has just created (given), a
		 * same-named one here is always another shelf.
		 */
		if (r) {
			r = lfsvol_drv_fail(drv, r, what);
		} else if (act && !given && same_uuid(act, sh)) {
			/* restart-safe: already assembled here, only make sure of the name */
			snprintf(disk, sizeof(disk), "%s", act->disk);
			if (!quiet)
				lfsvol_info("shelf %s is already active as /dev/%s", name, disk);
		} else if (act) {
			lfsvol_err("%s: another shelf named `%s' is active here as /dev/%s (different UUID); deactivate it first",
				   what, name, act->disk);
			r = LFSVOL_EREFUSED;
		} else {
			lfsvol_err("%s: the kernel reported a shelf of that name, then none; try again",
				   what);
			r = LFSVOL_EREFUSED;
		}
	} else if (r < 0) {
		r = lfsvol_drv_fail(drv, r, what);
	} else if (!r && shared && set_read_only(disk)) {
		lfsvol_err("%s: cannot make /dev/%s read-only for a shared activation", what, disk);
		lfs_shelf_remove(drv, name);
		r = LFSVOL_EDRIVER;
	}
	if (r) {
		/* give the activation back so another attempt or node can have it */
		lv_call(lib, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
		goto out;
	}
	/*
	 * The agent runs from udev rules too: there udev makes the name after
	 * this event, so waiting for it would only stall the event queue.
	 */
	r = quiet && lfsvol_udev_running() ? 0 : lfsvol_dev_link_wait(name, disk, LINK_TIMEOUT_MS);
	lfsvol_trace("/dev/lfs/%s: %d", name, r);
	if (r) {
		lfsvol_err("%s: /dev/%s exists but udev made no /dev/lfs/%s within %d s; are the LFS udev rules installed?",
			   what, disk, name, LINK_TIMEOUT_MS / 1000);
		r = LFSVOL_EFAIL;
		goto out;
	}
	if (!act && !quiet)
		lfsvol_info("activated shelf %s as /dev/lfs/%s (/dev/%s)", name, name, disk);
out:
	json_decref(sh);
	lfs_shelf_list_free(kv, kn);
	return r;
}

/* Shelves to act on: NAME..., or from the librarian (--all: active here; --auto: config). */
static int collect(struct lfsvol_ctx *ctx, struct lv_lib *lib, bool all, bool autoa,
		   json_t *names)
{
	if (autoa) {
		for (int i = 0; i < ctx->conf->nshelves; i++)
			if (ctx->conf->shelves[i].auto_activate)
				json_array_append_new(names, json_string(ctx->conf->shelves[i].name));
	}
	if (all) {
		json_t *res = NULL, *el, *a;
		size_t i, k;
		int r = lfsvol_lib_call(lib, "listing shelves", "shelf.list",
					json_pack("{s:i}", "limit", 10000), &res);

		if (r)
			return r;
		json_array_foreach(json_object_get(res, "shelves"), i, el) {
			json_array_foreach(json_object_get(el, "activations"), k, a) {
				if (!strcmp(json_string_value(json_object_get(a, "node")) ?: "",
					    ctx->conf->node ?: ""))
					json_array_append(names, json_object_get(el, "name"));
			}
		}
		json_decref(res);
	}
	return 0;
}

int cmd_activate(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'A' },
		{ "auto", no_argument, NULL, 'u' },
		{ "shared", no_argument, NULL, 's' },
		{ "takeover", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	json_t *names = json_array(), *el;
	bool all = false, autoa = false, shared = false;
	size_t i;
	int c, r, failed = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'A')
			all = true;
		else if (c == 'u')
			autoa = true;
		else if (c == 's')
			shared = true;
		else if (c == 't')
			ctx->takeover = true;
		else
			return LFSVOL_EUSAGE;
	}
	if ((optind == argc) == !(all || autoa)) {
		lfsvol_err("usage: %s activate NAME...|--all|--auto [--shared] [--takeover]", lfsvol_prog);
		json_decref(names);
		return LFSVOL_EUSAGE;
	}
	for (int k = optind; k < argc; k++) {
		if (!lfsvol_valid_name(argv[k])) {
			lfsvol_err("invalid shelf name `%s'", argv[k]);
			json_decref(names);
			return LFSVOL_EUSAGE;
		}
		json_array_append_new(names, json_string(argv[k]));
	}
	r = lfsvol_need_root("activate");
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (!r)
		r = lfsvol_lib_connect(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (!r)
		r = collect(ctx, lib, all, autoa, names);
	if (r)
		goto out;
	json_array_foreach(names, i, el) {
		int e = lfsvol_activate_one(ctx, lib, drv, json_string_value(el), shared, false, NULL);

		if (e) {
			r = e;
			failed++;
		}
	}
	if (failed > 1)
		lfsvol_err("%d of %zu shelves were not activated", failed, json_array_size(names));
out:
	json_decref(names);
	lv_close(lib);
	lfs_client_close(drv);
	return r;
}

static int deactivate_one(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			  struct lfs_shelf_info *kv, size_t kn, const char *name)
{
	struct lfs_shelf_info *act = lfsvol_find_active(kv, kn, name);
	char what[128];
	int r, prio;

	snprintf(what, sizeof(what), "deactivating shelf `%s'", name);
	if (act) {
		/* mounted means open (the kernel checks again, atomically) */
		if (act->open) {
			lfsvol_err("%s: /dev/lfs/%s (/dev/%s) is mounted or open; unmount it first", what,
				   name, act->disk);
			return LFSVOL_EREFUSED;
		}
		lfsvol_trace("deactivate %s: checked", name);
		prio = lfsvol_priority_raise(ctx);
		r = lfs_shelf_remove(drv, name);
		lfsvol_priority_restore(prio);
		lfsvol_trace("kernel shelf remove: %d", r);
		if (r)
			return lfsvol_drv_fail(drv, r, what);
	}
	r = lv_call(lib, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
	lfsvol_trace("librarian shelf.deactivate: %d", r);
	/* after the librarian's answer: udev removed the name meanwhile */
	if (act)
		lfsvol_dev_link_drop(name, act->disk);
	lfsvol_trace("/dev/lfs/%s gone", name);
	if (r && !(r == -ENOENT && act))
		return lfsvol_lib_call(lib, what, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
	lfsvol_info("deactivated shelf %s", name);
	return 0;
}

int cmd_deactivate(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 }
	};
	struct lv_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	bool all = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'A')
			return LFSVOL_EUSAGE;
		all = true;
	}
	if ((optind == argc) == !all) {
		lfsvol_err("usage: %s deactivate NAME...|--all", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	for (int k = optind; k < argc; k++) {
		if (!lfsvol_valid_name(argv[k])) {
			lfsvol_err("invalid shelf name `%s'", argv[k]);
			return LFSVOL_EUSAGE;
		}
	}
	r = lfsvol_need_root("deactivate");
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (r)
		return r;
	r = lfs_shelf_list(drv, NULL, &kv, &kn);
	if (r) {
		r = lfsvol_drv_fail(drv, r, "listing active shelves");
		goto out;
	}
	lfsvol_trace("kernel shelf list");
	r = lfsvol_lib_connect(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (r)
		goto out;
	if (all) {
		for (size_t i = 0; i < kn; i++) {
			int e = deactivate_one(ctx, lib, drv, kv, kn, kv[i].name);

			r = e ? e : r;
		}
	}
	for (int k = optind; k < argc; k++) {
		int e = deactivate_one(ctx, lib, drv, kv, kn, argv[k]);

		r = e ? e : r;
	}
out:
	lfs_shelf_list_free(kv, kn);
	lv_close(lib);
	lfs_client_close(drv);
	return r;
}
