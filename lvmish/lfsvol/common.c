// SPDX-License-Identifier: GPL-2.0
/*
 * What the subcommands share: librarian and driver sessions with their error
 * messages, the book map, libblkid probing, /dev/lfs links, fabric attach.
 */
#include <blkid.h>
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "liblfs.h"
#include "lfs_librarian.h"
#include "lfsvol.h"

int64_t lfsvol_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool lfsvol_tracing;

/* LFSVOL_TRACE=1: where a command spends its time, on stderr. */
void lfsvol_trace(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (!lfsvol_tracing)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "lfsvol: trace %lld.%03ld ms [%d] ", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		(ts.tv_nsec / 1000) % 1000, (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int lfsvol_lib_connect(struct lfsvol_ctx *ctx, struct lv_lib **out)
{
	struct lfs_lib_opts o = { 0 };
	char *msg = NULL;
	int r;

	r = lfsvol_need_conf(ctx);
	if (r)
		return r;
	/*
	 * The running agent's session, unless an explicit --librarian names
	 * another librarian or LFSVOL_NO_AGENT asks for a session of our own.
	 */
	if (!ctx->no_agent && !ctx->librarian && !getenv("LFSVOL_NO_AGENT") &&
	    !lv_open_agent(ctx->conf->state_dir, out))
		return 0;
	o.addr = ctx->conf->librarian;
	o.node = ctx->conf->node;
	o.key_file = ctx->conf->key_file;
	o.connect_timeout_ms = ctx->conf->connect_timeout * 1000;
	o.reply_timeout_ms = ctx->conf->reply_timeout * 1000;
	if (strncmp(o.addr, "unix:", 5) && (!o.node || !o.key_file)) {
		lfsvol_err("%s: `node' and `key_file' are needed to reach the librarian at %s over TLS",
			   ctx->conf->path, o.addr);
		return LFSVOL_ECONFIG;
	}
	if (o.key_file && strncmp(o.addr, "unix:", 5) && access(o.key_file, R_OK)) {
		r = errno;
		lfsvol_err("%s: key_file `%s': %s%s", ctx->conf->path, o.key_file, strerror(r),
			   r == EACCES ? " (it is readable by root only; run as root)" : "");
		return r == EACCES ? LFSVOL_EPERM : LFSVOL_ECONFIG;
	}
	r = lv_open(&o, out, &msg);
	if (r) {
		lfsvol_err("cannot reach the librarian at %s: %s", o.addr, msg ? msg : strerror(-r));
		lfsvol_err("check that it runs and that `librarian' in %s (or --librarian) is right; gave up after at most %d s",
			   ctx->conf->path, ctx->conf->connect_timeout);
		free(msg);
		return r == -EACCES || r == -EPERM ? LFSVOL_EPERM : LFSVOL_ELIBRARIAN;
	}
	return 0;
}

int lfsvol_lib_call(struct lv_lib *lib, const char *what, const char *op, json_t *args,
		    json_t **result)
{
	int r = lv_call(lib, op, args, result);

	return r ? lfsvol_lib_fail(lib, what, r) : 0;
}

/* Report a failed librarian call r (-errno); returns the exit code. */
int lfsvol_lib_fail(struct lv_lib *lib, const char *what, int r)
{
	lfsvol_err("%s: librarian: %s", what, lv_errmsg(lib));
	switch (-r) {
	case ENOENT:
		lfsvol_err("`%s list' shows the shelves that exist", lfsvol_prog);
		return LFSVOL_ENOENT;
	case EBUSY:
		return LFSVOL_EREFUSED;
	case EINVAL:
	case EEXIST:
		return LFSVOL_EUSAGE;
	case EACCES:
	case EPERM:
		return LFSVOL_EPERM;
	case ENOSPC:
		lfsvol_err("`%s fabric' shows the free books per node", lfsvol_prog);
		return LFSVOL_ELIBRARIAN;
	}
	return LFSVOL_ELIBRARIAN;
}

uint64_t lfsvol_lib_book_size(struct lv_lib *lib)
{
	json_t *info = lv_info(lib);

	return (uint64_t)json_integer_value(json_object_get(info, "book_size"));
}

int lfsvol_need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	lfsvol_err("%s needs root (CAP_SYS_ADMIN to configure lfs.ko); run it with sudo", what);
	return LFSVOL_EPERM;
}

int lfsvol_drv_open(struct lfs_client **out)
{
	int r;

	r = lfs_client_open(out);
	lfsvol_trace("netlink session: %d", r);
	if (r == -ENOENT) {
		lfsvol_err("the lfs kernel module is not loaded (no generic netlink family `lfs'); run `modprobe lfs'");
		return LFSVOL_EDRIVER;
	}
	if (r) {
		lfsvol_err("cannot talk to the lfs kernel module: %s", strerror(-r));
		return LFSVOL_EDRIVER;
	}
	return 0;
}

int lfsvol_priority_raise(const struct lfsvol_ctx *ctx)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, 0);
	if (errno || !ctx->conf || ctx->conf->process_priority >= old)
		return INT_MIN;
	/* not root, or no CAP_SYS_NICE: the kernel says no, nothing else changes */
	if (setpriority(PRIO_PROCESS, 0, ctx->conf->process_priority))
		return INT_MIN;
	lfsvol_trace("nice %d (was %d)", ctx->conf->process_priority, old);
	return old;
}

void lfsvol_priority_restore(int old)
{
	if (old != INT_MIN)
		setpriority(PRIO_PROCESS, 0, old);
}

int lfsvol_drv_fail(struct lfs_client *c, int err, const char *what)
{
	const char *m = c ? lfs_client_error(c) : NULL;

	lfsvol_err("%s: kernel reports: %s", what, m && *m ? m : strerror(-err));
	if (err == -EPERM)
		return LFSVOL_EPERM;
	if (err == -EBUSY)
		return LFSVOL_EREFUSED;
	return LFSVOL_EDRIVER;
}

struct lfs_shelf_info *lfsvol_find_active(struct lfs_shelf_info *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static int map_append(json_t *map, struct lfs_book *books, size_t *n, size_t cap)
{
	size_t i;
	json_t *el;

	json_array_foreach(map, i, el) {
		json_int_t ig, b;

		if (json_unpack(el, "[II]", &ig, &b) || ig < 0 || ig > LFS_IG_MAX || b < 0 ||
		    b > UINT32_MAX || *n >= cap)
			return -EPROTO;
		books[*n].ig = (uint32_t)ig;
		books[*n].book = (uint32_t)b;
		(*n)++;
	}
	return 0;
}

int lfsvol_lib_shelf_map(struct lv_lib *lib, const char *name, json_t *first,
			 struct lfs_book **books, size_t *n)
{
	json_int_t total = json_integer_value(json_object_get(first, "books"));
	json_t *cur = json_incref(first);
	int r = 0;

	*n = 0;
	if (total < 0 || total > LFS_SHELF_BOOKS_MAX) {
		json_decref(cur);
		return -EPROTO;
	}
	*books = calloc(total ? (size_t)total : 1, sizeof(**books));
	if (!*books) {
		json_decref(cur);
		return -ENOMEM;
	}
	for (;;) {
		r = map_append(json_object_get(cur, "map"), *books, n, (size_t)total);
		if (r || json_is_true(json_object_get(cur, "map_complete")) || *n >= (size_t)total)
			break;
		json_decref(cur);
		cur = NULL;
		r = lv_call(lib, "shelf.get",
				 json_pack("{s:s,s:I}", "name", name, "offset", (json_int_t)*n), &cur);
		if (r)
			break;
	}
	json_decref(cur);
	if (!r && *n != (size_t)total)
		r = -EPROTO;
	if (r) {
		free(*books);
		*books = NULL;
	}
	return r;
}

int lfsvol_probe_fs(const char *dev, uint64_t offset, uint64_t size, struct lfsvol_fsinfo *fs)
{
	blkid_probe pr;
	const char *v;
	int fd, r;

	memset(fs, 0, sizeof(*fs));
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	pr = blkid_new_probe();
	if (!pr) {
		close(fd);
		return -ENOMEM;
	}
	r = blkid_probe_set_device(pr, fd, (blkid_loff_t)offset, (blkid_loff_t)size);
	if (r == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
						  BLKID_SUBLKS_UUID);
		blkid_probe_enable_partitions(pr, 1);
		r = blkid_do_safeprobe(pr);
		if (r == 0) {
			if (!blkid_probe_lookup_value(pr, "TYPE", &v, NULL))
				snprintf(fs->type, sizeof(fs->type), "%s", v);
			else if (!blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL))
				snprintf(fs->type, sizeof(fs->type), "%s partition table", v);
			if (!blkid_probe_lookup_value(pr, "LABEL", &v, NULL))
				snprintf(fs->label, sizeof(fs->label), "%s", v);
			if (!blkid_probe_lookup_value(pr, "UUID", &v, NULL))
				snprintf(fs->uuid, sizeof(fs->uuid), "%s", v);
		} else if (r == -2) {
			snprintf(fs->type, sizeof(fs->type), "ambivalent signatures");
		}
		r = r < 0 && r != -2 ? -EIO : 0;
	} else {
		r = -EIO;
	}
	blkid_free_probe(pr);
	close(fd);
	return r;
}

bool lfsvol_dev_mounted(uint32_t devt)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], want[32];
	bool found = false;

	if (!f)
		return false;
	snprintf(want, sizeof(want), " %u:%u ", major(devt), minor(devt));
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	fclose(f);
	return found;
}

bool lfsvol_udev_running(void)
{
	return access("/run/udev/control", F_OK) == 0;
}

static bool link_points_to(const char *link, const char *disk)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	const char *base;

	if (n < 0)
		return false;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	return !strcmp(base ? base + 1 : buf, disk);
}

/*
 * Wait until want(link, disk) holds, or until end (ms, monotonic). udev
 * makes and removes its links in /dev/lfs by rename and unlink: inotify on
 * the directory wakes us at once. The timed wake-up (50 ms) covers a
 * directory that does not exist yet.
 */
static bool link_wait(const char *link, const char *disk, bool want, int64_t end)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool ok;

	if (fd >= 0 && inotify_add_watch(fd, "/dev/lfs", IN_CREATE | IN_MOVED_TO | IN_DELETE |
					 IN_MOVED_FROM) < 0) {
		close(fd);
		fd = -1;
	}
	for (;;) {
		int64_t left = end - lfsvol_now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };

		ok = link_points_to(link, disk) == want;
		if (ok || left <= 0)
			break;
		if (fd < 0) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);	/* no inotify: poll the link */
			continue;
		}
		if (poll(&p, 1, left < 50 ? (int)left : 50) > 0)
			while (read(fd, buf, sizeof(buf)) > 0)
				;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int lfsvol_dev_link_wait(const char *name, const char *disk, int timeout_ms)
{
	char link[PATH_MAX], target[64];

	snprintf(link, sizeof(link), "/dev/lfs/%s", name);
	if (!lfsvol_udev_running()) {
		/* no udev: make the name ourselves, as lvm does with udev_sync off */
		snprintf(target, sizeof(target), "../%s", disk);
		mkdir("/dev/lfs", 0755);
		unlink(link);
		if (symlink(target, link))
			return -errno;
		return 0;
	}
	return link_wait(link, disk, true, lfsvol_now_ms() + timeout_ms) ? 0 : -ETIMEDOUT;
}

void lfsvol_dev_link_drop(const char *name, const char *disk)
{
	char link[PATH_MAX];

	snprintf(link, sizeof(link), "/dev/lfs/%s", name);
	/*
	 * With udev, the name goes when udev has handled the disk's remove
	 * event: wait for that (as lvm's udev_sync does), so that the name is
	 * gone when deactivate returns. Should udev not get to it in time, the
	 * stale name is dropped here.
	 */
	if (lfsvol_udev_running())
		link_wait(link, disk, false, lfsvol_now_ms() + LINK_DROP_TIMEOUT_MS);
	if (link_points_to(link, disk))
		unlink(link);
}

int lfsvol_attach_fabrics(struct lfsvol_ctx *ctx, struct lfs_client *drv, uint64_t book_size,
			  bool quiet)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0;
	int failed = 0, r;

	r = lfs_fabric_list(drv, &fv, &nf);
	if (r)
		return lfsvol_drv_fail(drv, r, "listing fabric devices"), 1;
	for (int i = 0; i < ctx->conf->nfabrics; i++) {
		const struct lfsvol_fabric_conf *f = &ctx->conf->fabrics[i];
		struct lfsvol_fsinfo fs;
		char path[PATH_MAX], real[PATH_MAX], what[PATH_MAX + 64];
		bool have = false;

		for (size_t k = 0; k < nf; k++)
			have |= fv[k].ig == f->ig;
		if (have)
			continue;
		if (lfsvol_fabric_resolve(f, path, sizeof(path))) {
			if (!quiet)
				lfsvol_err("%s:%d: fabric device for IG %u is not present (yet)",
					   ctx->conf->path, f->line, f->ig);
			failed++;
			continue;
		}
		if (!realpath(path, real))
			snprintf(real, sizeof(real), "%s", path);
		if (!f->force && !lfsvol_probe_fs(real, 0, 0, &fs) && fs.type[0]) {
			lfsvol_err("refusing to attach %s as IG %u: it carries a signature (%s%s%s); wipe it (wipefs -a) or set force = true for it in %s:%d",
				   real, f->ig, fs.type, fs.label[0] ? " LABEL=" : "", fs.label,
				   ctx->conf->path, f->line);
			failed++;
			continue;
		}
		r = lfs_attach(drv, real, f->ig, book_size, f->offset);
		if (r && r != -EEXIST) {
			snprintf(what, sizeof(what), "attaching %s as IG %u", real, f->ig);
			lfsvol_drv_fail(drv, r, what);
			failed++;
		} else if (!quiet) {
			lfsvol_info("attached %s as IG %u", real, f->ig);
		}
	}
	free(fv);
	return failed;
}

int lfsvol_kernel_activate(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			   json_t *shelf, char *disk, size_t disklen, bool raw_errors)
{
	const char *name = json_string_value(json_object_get(shelf, "name"));
	const char *uuid_s = json_string_value(json_object_get(shelf, "uuid"));
	struct lfs_shelf_info info;
	struct lfs_book *books = NULL;
	uint8_t uuid[LFS_UUID_LEN];
	char what[128];
	size_t n = 0;
	int r, prio;

	if (!name || !uuid_s || lfs_parse_uuid(uuid_s, uuid)) {
		lfsvol_err("the librarian's reply lacks the shelf's name or UUID");
		return LFSVOL_ELIBRARIAN;
	}
	r = lfsvol_lib_shelf_map(lib, name, shelf, &books, &n);
	if (r) {
		lfsvol_err("cannot read the book map of shelf `%s' from the librarian: %s", name,
			   lv_errmsg(lib)[0] ? lv_errmsg(lib) : strerror(-r));
		return LFSVOL_ELIBRARIAN;
	}
	if (!n) {
		free(books);
		lfsvol_err("shelf `%s' has no books; give it some with `%s resize %s -s 1b'", name,
			   lfsvol_prog, name);
		return LFSVOL_EUSAGE;
	}
	memset(&info, 0, sizeof(info));
	/*
	 * "zeroed" (shelf.create only): every book was scrubbed since its last
	 * use, so the driver can tell udev that probing the new device for
	 * signatures would find nothing.
	 */
	prio = lfsvol_priority_raise(ctx);
	r = lfs_shelf_create(drv, name, uuid, json_is_true(json_object_get(shelf, "zeroed")), books,
			     n, &info);
	lfsvol_priority_restore(prio);
	free(books);
	if ((r == -ENODEV || r == -EEXIST) && raw_errors)
		return r;	/* an IG is not attached, or the name is taken: the caller sees to it */
	if (r) {
		snprintf(what, sizeof(what), "activating shelf `%s'", name);
		return lfsvol_drv_fail(drv, r, what);
	}
	snprintf(disk, disklen, "%s", info.disk);
	free(info.books);
	return 0;
}
