// SPDX-License-Identifier: GPL-2.0
/* activate and deactivate: the librarian arbitrates, the kernel builds /dev/lfsN. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "device.h"
#include "kernel.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

#define LINK_TIMEOUT_MS 10000

/* One activation under way. */
struct act {
	struct lfsvol_ctx *ctx;
	struct lfsvol_lib *lib;
	struct lfs_client *drv;
	const char *name;
	const struct lfsvol_activation *how;
	json_t *sh; /* the librarian's answer: name, uuid, map */
	uint64_t sent; /* when the request that granted it was sent (CLOCK_BOOTTIME ns) */
	char what[128];
	char disk[32];
	bool already; /* active here already with the same UUID */
};

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

/*
 * The librarian heard this node when it read the request that granted the
 * activation: the kernel's lease runs from the request's send time. A
 * failure is left for the leased create to report (ENOLCK) if it matters:
 * the agent's renewal may hold the lease already.
 */
static void lease_renew(struct act *a)
{
	long long t = lfsvol_lib_lease_time(a->lib);
	int r = t > 0 ? lfsvol_lease_renew(a->ctx->conf, a->drv, a->sent, lfsvol_lease_ms(t)) :
			-ENODATA;

	if (r)
		lfsvol_trace("lease not renewed (%s): %s", strerror(-r), lfs_client_error(a->drv));
}

/*
 * The kernel shelf from the librarian's answer. -ENODEV (a book's IG is not
 * attached here) and -EEXIST (the kernel has a shelf of that name) come
 * back without a message: the caller sees to them.
 */
static int kernel_activate(struct act *a)
{
	const char *uuid_s = json_string_value(json_object_get(a->sh, "uuid"));
	struct lfs_book *books = NULL;
	uint8_t uuid[LFS_UUID_LEN];
	size_t n = 0;
	int r;

	if (!uuid_s || lfs_parse_uuid(uuid_s, uuid))
		return lfsvol_fail(LFSVOL_ELIBRARIAN, -EPROTO,
				   "the librarian's reply lacks the shelf's UUID");
	r = lfsvol_lib_shelf_map(a->lib, a->name, a->sh, &books, &n);
	if (r)
		return lfsvol_fail(
			LFSVOL_ELIBRARIAN, r,
			"cannot read the book map of shelf `%s' from the librarian: %s", a->name,
			lfsvol_lib_errmsg(a->lib)[0] ? lfsvol_lib_errmsg(a->lib) : strerror(-r));
	if (!n) {
		free(books);
		return lfsvol_usage(
			"shelf `%s' has no books; give it some with `%s resize %s -s 1b'", a->name,
			lfsvol_prog, a->name);
	}
	/*
	 * "zeroed" (shelf.create only): every book was scrubbed since its last
	 * use, so the driver can tell udev that probing the new device for
	 * signatures would find nothing.
	 */
	lease_renew(a);
	r = lfsvol_kernel_create(
		a->ctx->conf, a->drv, a->name, uuid,
		LFS_CREATE_LEASED |
			(json_is_true(json_object_get(a->sh, "zeroed")) ? LFS_CREATE_ZEROED : 0),
		books, n, a->disk, sizeof(a->disk));
	free(books);
	if (r == -ENOLCK)
		return lfsvol_fail(
			LFSVOL_EREFUSED, r,
			"%s: kernel reports: %s; the shelf is leased and this node's lease could not be renewed",
			a->what, lfs_client_error(a->drv));
	if (r && r != -ENODEV && r != -EEXIST)
		return lfsvol_drv_fail(a->drv, r, a->what);
	return r;
}

/* Is every IG of the map attached here? *missing: the first that is not. */
static bool map_attached(json_t *sh, const struct lfs_fabric_info *fv, size_t nf, uint32_t *missing)
{
	size_t i;
	json_t *el;

	json_array_foreach(json_object_get(sh, "map"), i, el) {
		json_int_t ig = json_integer_value(json_array_get(el, 0));
		bool have = false;

		for (size_t k = 0; k < nf; k++)
			have |= fv[k].ig == (uint32_t)ig;
		if (!have) {
			*missing = (uint32_t)ig;
			return false;
		}
	}
	return true;
}

/* Does lfs.conf map IG ig to a device that is not present (yet)? */
static bool device_absent(const struct lfsvol_conf *conf, uint32_t ig)
{
	char path[PATH_MAX];

	for (int i = 0; i < conf->nfabrics; i++)
		if (conf->fabrics[i].ig == ig)
			return lfsvol_fabric_resolve(&conf->fabrics[i], path, sizeof(path)) ==
			       -ENODEV;
	return false;
}

/*
 * The kernel refused a book on an IG not attached (ENODEV): attach what
 * lfs.conf maps, check the map's IGs, and try again.
 */
static int retry_attached(struct act *a)
{
	struct lfs_fabric_info *fv = NULL;
	struct lfsvol_fabric_id id;
	uint32_t missing = 0;
	size_t nf = 0;
	bool ok = true;
	int r;

	if (!lfsvol_fabric_id_get(a->lib, 0, &id))
		lfsvol_attach_fabrics(a->ctx->conf, a->drv, &id, true);
	if (!lfsnl_fabric_list(a->drv, &fv, &nf))
		ok = map_attached(a->sh, fv, nf, &missing);
	free(fv);
	if (!ok && a->how->wait_absent && device_absent(a->ctx->conf, missing)) {
		lfsvol_info("shelf `%s' waits for IG %u: its device is not present yet", a->name,
			    missing);
		return LFSVOL_WAITING;
	}
	if (!ok)
		return lfsvol_fail(
			LFSVOL_EDRIVER, -ENODEV,
			"%s: its books are on IG %u, which is not attached here; map it in the fabric list of %s",
			a->what, missing, a->ctx->conf->path);
	lfsvol_trace("fabrics attached, IGs checked");
	r = kernel_activate(a);
	if (r == -ENODEV)
		return lfsvol_drv_fail(a->drv, r, a->what);
	return r;
}

/*
 * The same shelf, fenced here (its lease ran out, or the librarian stopped
 * listing it): the librarian has granted it again, so the fenced device is
 * removed and made anew, unless something still holds it open. Returns 1
 * to try the kernel's create again.
 */
static int fenced_again(struct act *a, const struct lfs_shelf_info *k)
{
	int r;

	if (k->open)
		return lfsvol_fail(
			LFSVOL_EREFUSED, -EBUSY,
			"%s: the shelf is fenced here (/dev/%s: the node's lease ran out, or the librarian stopped listing it) and still open; unmount it, or end what holds it, then activate it again",
			a->what, k->disk);
	r = lfsvol_kernel_remove(a->ctx->conf, a->drv, a->name);
	if (r)
		return lfsvol_drv_fail(a->drv, r, a->what);
	lfsvol_dev_link_drop(a->name, k->disk);
	if (!a->how->quiet)
		lfsvol_info("shelf %s was fenced here (/dev/%s); removed it to activate it again",
			    a->name, k->disk);
	return 1;
}

/*
 * The kernel has a shelf of that name (EEXIST): the same one (the same
 * UUID: a restart of the command, the agent's pass) is success, or, if it
 * is fenced, made anew (1); another is refused. For a shelf the librarian
 * has just created (given), a same-named one here is always another shelf.
 */
static int already_active(struct act *a)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r;

	r = lfsnl_shelf_list(a->drv, a->name, &kv, &kn);
	if (r == -ENOENT)
		return 1; /* removed meanwhile: try again */
	if (r)
		return lfsvol_drv_fail(a->drv, r, a->what);
	if (!a->how->given && same_uuid(&kv[0], a->sh) && kv[0].state == LFS_SHELF_FENCED) {
		r = fenced_again(a, &kv[0]);
	} else if (!a->how->given && same_uuid(&kv[0], a->sh)) {
		snprintf(a->disk, sizeof(a->disk), "%s", kv[0].disk);
		a->already = true;
		if (!a->how->quiet)
			lfsvol_info("shelf %s is already active as /dev/%s", a->name, a->disk);
	} else {
		r = lfsvol_fail(
			LFSVOL_EREFUSED, -EEXIST,
			"%s: another shelf named `%s' is active here as /dev/%s (different UUID); deactivate it first",
			a->what, a->name, kv[0].disk);
	}
	lfsnl_shelf_list_free(kv, kn);
	return r;
}

/* The librarian's activation first (idempotent for the node that holds it), or given. */
static int activation(struct act *a)
{
	int r = 0;

	if (a->how->given) {
		a->sh = json_incref(a->how->given);
		a->sent = a->how->given_sent;
	} else {
		r = lfsvol_lease_usable(a->drv, a->what);
		a->sent = lfs_boottime_ns();
	}
	if (!a->how->given && !r)
		r = lfsvol_lib_request(a->lib, a->what, "shelf.activate",
				       json_pack("{s:s,s:s,s:b}", "name", a->name, "mode",
						 a->how->shared ? "ro" : "rw", "takeover",
						 a->how->takeover),
				       &a->sh);
	lfsvol_trace(a->how->given ? "activated by shelf.create" : "librarian shelf.activate: %d",
		     r);
	return r;
}

/* The kernel's part: the shelf here, with the read-only flag of a shared activation. */
static int kernel_part(struct act *a)
{
	int r = kernel_activate(a);

	if (r == -ENODEV)
		r = retry_attached(a);
	if (r == -EEXIST)
		r = already_active(a);
	if (r == 1) {
		r = kernel_activate(a);
		if (r == -EEXIST || r == -ENODEV)
			r = lfsvol_drv_fail(a->drv, r, a->what);
	}
	if (!r && a->how->shared && !a->already && set_read_only(a->disk)) {
		lfsnl_shelf_remove(a->drv, a->name);
		r = lfsvol_fail(LFSVOL_EDRIVER, -EIO,
				"%s: cannot make /dev/%s read-only for a shared activation",
				a->what, a->disk);
	}
	return r;
}

/* Only the node agent renews the lease: without it the new shelf is fenced when it runs out. */
static void warn_no_agent(struct act *a)
{
	struct lfs_lease_info l;

	if (a->how->quiet || lfsvol_lib_borrowed(a->lib) ||
	    lfsvol_agent_answers(a->ctx->conf->state_dir) || lfsnl_lease_get(a->drv, &l))
		return;
	lfsvol_err(
		"warning: no node agent answers on %s/agent.sock: shelf %s will be fenced when this node's lease runs out, in %lld s, unless `%s agent' starts",
		a->ctx->conf->state_dir, a->name, (long long)(l.left_ms > 0 ? l.left_ms / 1000 : 0),
		lfsvol_prog);
}

/* Under --json: the shelf and its device paths, appended to "shelves". */
static void activated_result(struct act *a)
{
	char dev[80], disk[80];

	snprintf(dev, sizeof(dev), "/dev/lfs/%s", a->name);
	snprintf(disk, sizeof(disk), "/dev/%s", a->disk);
	lfsvol_result_append("shelves",
			     json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", a->name, "device", dev,
				       "disk", disk, "mode", a->how->shared ? "ro" : "rw",
				       "already", a->already));
}

int lfsvol_activate_one(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			const char *name, const struct lfsvol_activation *how)
{
	struct act a = { .ctx = ctx, .lib = lib, .drv = drv, .name = name, .how = how };
	int r;

	snprintf(a.what, sizeof(a.what), "activating shelf `%s'", name);
	lfsvol_trace("activate %s", name);
	r = activation(&a);
	if (r)
		goto out;
	r = kernel_part(&a);
	if (r) {
		/* give the activation back so another attempt or node can have it */
		lfsvol_lib_call(lib, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
		goto out;
	}
	/*
	 * The agent runs from udev rules too: there udev makes the name after
	 * this event, so waiting for it would only stall the event queue.
	 */
	r = how->quiet && lfsvol_udev_running() ?
		    0 :
		    lfsvol_dev_link_wait(name, a.disk, LINK_TIMEOUT_MS);
	lfsvol_trace("/dev/lfs/%s: %d", name, r);
	if (r)
		r = lfsvol_fail(
			LFSVOL_EFAIL, r,
			"%s: /dev/%s exists but udev made no /dev/lfs/%s within %d s; are the LFS udev rules installed?",
			a.what, a.disk, name, LINK_TIMEOUT_MS / 1000);
	else if (!a.already && !how->quiet)
		lfsvol_info("activated shelf %s as /dev/lfs/%s (/dev/%s)", name, name, a.disk);
	if (!r && !how->quiet)
		activated_result(&a);
	if (!r)
		warn_no_agent(&a);
out:
	json_decref(a.sh);
	return r;
}

/* Shelves to act on: NAME..., or from the librarian (--all: active here; --auto: config). */
static int collect(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, bool all, bool autoa,
		   json_t *names)
{
	json_t *res = NULL, *el, *a;
	size_t i, k;
	int r;

	for (int s = 0; autoa && s < ctx->conf->nshelves; s++)
		if (ctx->conf->shelves[s].auto_activate)
			json_array_append_new(names, json_string(ctx->conf->shelves[s].name));
	if (!all)
		return 0;
	r = lfsvol_lib_request(lib, "listing shelves", "shelf.list",
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
	return 0;
}

struct activate_opts {
	bool all, autoa;
	struct lfsvol_activation how;
};

static int activate_options(int argc, char **argv, struct activate_opts *o, json_t *names)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'A' },
					      { "auto", no_argument, NULL, 'u' },
					      { "shared", no_argument, NULL, 's' },
					      { "takeover", no_argument, NULL, 't' },
					      { NULL, 0, NULL, 0 } };
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'A')
			o->all = true;
		else if (c == 'u')
			o->autoa = true;
		else if (c == 's')
			o->how.shared = true;
		else if (c == 't')
			o->how.takeover = true;
		else
			return lfsvol_exit_as(LFSVOL_EUSAGE, -EINVAL);
	}
	if ((optind == argc) == !(o->all || o->autoa))
		return lfsvol_usage(
			"usage: %s activate NAME...|--all|--auto [--shared] [--takeover]",
			lfsvol_prog);
	for (int k = optind; k < argc; k++) {
		r = lfsvol_check_name(argv[k]);
		if (r)
			return r;
		json_array_append_new(names, json_string(argv[k]));
	}
	return 0;
}

/* Each shelf in turn; the last failure is the command's. */
static int activate_names(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			  json_t *names, const struct lfsvol_activation *how)
{
	int r = 0, failed = 0;
	size_t i;
	json_t *el;

	json_array_foreach(names, i, el) {
		int e = lfsvol_activate_one(ctx, lib, drv, json_string_value(el), how);

		if (e) {
			r = e;
			failed++;
		}
	}
	if (failed > 1)
		lfsvol_err("%d of %zu shelves were not activated", failed, json_array_size(names));
	return r;
}

int cmd_activate(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct activate_opts o = { 0 };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	json_t *names = json_array();
	int r;

	lfsvol_result_set("shelves", json_array());
	r = activate_options(argc, argv, &o, names);
	if (!r)
		r = lfsvol_need_root("activate");
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (!r)
		r = collect(ctx, lib, o.all, o.autoa, names);
	if (!r)
		r = activate_names(ctx, lib, drv, names, &o.how);
	json_decref(names);
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}

/* Under --json: the shelf, the disk it had here (null if none), whether it was fenced. */
static void deactivated_result(struct lfs_shelf_info *act, const char *name)
{
	char disk[80];

	snprintf(disk, sizeof(disk), "/dev/%s", act ? act->disk : "");
	lfsvol_result_append("shelves", json_pack("{s:s,s:o,s:b}", "name", name, "disk",
						  act ? json_string(disk) : json_null(), "fenced",
						  act && act->state == LFS_SHELF_FENCED));
}

/* Kernel first (it refuses while open), then the librarian, then udev's name. */
static int deactivate_one(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			  struct lfs_shelf_info *act, const char *name)
{
	char what[128];
	int r;

	snprintf(what, sizeof(what), "deactivating shelf `%s'", name);
	if (act) {
		/* mounted means open (the kernel checks again, atomically) */
		if (act->open)
			return lfsvol_fail(
				LFSVOL_EREFUSED, -EBUSY,
				"%s: /dev/lfs/%s (/dev/%s) is mounted or open; unmount it first",
				what, name, act->disk);
		lfsvol_trace("deactivate %s: checked", name);
		r = lfsvol_kernel_remove(ctx->conf, drv, name);
		if (r)
			return lfsvol_drv_fail(drv, r, what);
	}
	r = lfsvol_lib_call(lib, "shelf.deactivate", json_pack("{s:s}", "name", name), NULL);
	lfsvol_trace("librarian shelf.deactivate: %d", r);
	/* after the librarian's answer: udev removed the name meanwhile */
	if (act)
		lfsvol_dev_link_drop(name, act->disk);
	lfsvol_trace("/dev/lfs/%s gone", name);
	/* a shelf fenced here may have been taken over meanwhile: it is gone here all the same */
	if (r && act && (r == -ENOENT || (r == -EPERM && act->state == LFS_SHELF_FENCED))) {
		lfsvol_info(
			"deactivated shelf %s (%s here; the librarian has no activation of it for this node: %s)",
			name, act->state == LFS_SHELF_FENCED ? "it was fenced" : "it was active",
			lfsvol_lib_errmsg(lib));
		deactivated_result(act, name);
		return 0;
	}
	if (r)
		return lfsvol_lib_fail(lib, what, r);
	lfsvol_info("deactivated shelf %s", name);
	deactivated_result(act, name);
	return 0;
}

/* The shelf NAME (or every shelf, name NULL) as the kernel has it here. */
static int deactivate_some(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			   const char *name)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r, e;

	r = lfsnl_shelf_list(drv, name, &kv, &kn);
	if (r && !(r == -ENOENT && name))
		return lfsvol_drv_fail(drv, r, "listing active shelves");
	lfsvol_trace("kernel shelf list");
	r = 0;
	if (name)
		r = deactivate_one(ctx, lib, drv, lfsvol_find_active(kv, kn, name), name);
	for (size_t i = 0; !name && i < kn; i++) {
		e = deactivate_one(ctx, lib, drv, &kv[i], kv[i].name);
		r = e ? e : r;
	}
	lfsnl_shelf_list_free(kv, kn);
	return r;
}

int cmd_deactivate(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'A' },
					      { NULL, 0, NULL, 0 } };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	bool all = false;
	int c, r, e;

	lfsvol_result_set("shelves", json_array());
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'A')
			return LFSVOL_EUSAGE;
		all = true;
	}
	if ((optind == argc) == !all) {
		lfsvol_err("usage: %s deactivate NAME...|--all", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = 0;
	for (int k = optind; k < argc && !r; k++)
		r = lfsvol_check_name(argv[k]);
	if (!r)
		r = lfsvol_need_root("deactivate");
	if (!r)
		r = lfsvol_drv_open(&drv);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	lfsvol_trace("librarian session: %d", r);
	if (!r && all)
		r = deactivate_some(ctx, lib, drv, NULL);
	for (int k = optind; k < argc && lib; k++) {
		e = deactivate_some(ctx, lib, drv, argv[k]);
		r = e ? e : r;
	}
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}
