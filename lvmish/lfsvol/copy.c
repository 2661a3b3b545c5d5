// SPDX-License-Identifier: GPL-2.0
/*
 * copy SRC DST: a new shelf DST with SRC's size, policy, placement and
 * user attributes, and SRC's bytes. SRC must not be active for writing
 * anywhere; it is activated read-only here for the copy (unless it is
 * already), DST is created with the lfs.incomplete mark and activated
 * read-write here, the node agent moves the bytes (copyjob.c, followed
 * by copy_follow.c), the mark is removed and both go back to how they
 * were. A copy that fails or is interrupted removes DST. The copy
 * outlives its command: `copy --wait DST' follows it again and finishes
 * DST. A copy whose agent stopped leaves DST marked, and the librarian
 * refuses to activate it until it is removed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "copy_io.h"
#include "device.h"
#include "kernel.h"
#include "lfs_rules.h"
#include "liblfsnl.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

#define LINK_TIMEOUT_MS 10000

struct copy {
	struct lfsvol_ctx *ctx;
	struct lfsvol_lib *lib;
	struct lfs_client *drv;
	const char *src, *dst;
	char srcname[LFS_NAME_MAX + 1]; /* --wait: SRC as the agent's copy has it */
	uint64_t max_rate; /* --max-rate: bytes per second, 0 for none */
	bool wait; /* --wait: follow a copy an earlier command started */
	bool agent_lost; /* the agent went away during the copy */
	json_t *ssh; /* shelf.get of SRC */
	bool src_ro_here; /* SRC was active read-only here before: it stays so */
	bool src_ours; /* activated here for the copy: deactivated after it */
	bool dst_made; /* DST exists: removed unless the copy ends */
	bool dst_active;
	char sdisk[32], ddisk[32];
	uint64_t bytes; /* SRC's, as the kernel has it here */
	char what[160];
};

static volatile sig_atomic_t copy_stop;

static void on_signal(int sig)
{
	(void)sig;
	copy_stop = 1;
}

/* SIGINT, SIGTERM and SIGHUP end the copy between chunks, and DST is removed. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/* SRC's activations: read-only ones anywhere are fine; any other is a writer. */
static int src_writers(struct copy *c)
{
	const char *me = c->ctx->conf->node ?: "";
	size_t i;
	json_t *a;

	json_array_foreach(json_object_get(c->ssh, "activations"), i, a) {
		const char *node = str(a, "node"), *mode = str(a, "mode");

		if (!strcmp(mode, "ro")) {
			c->src_ro_here |= !strcmp(node, me);
			continue;
		}
		if (!strcmp(node, me))
			return lfsvol_fail(
				LFSVOL_EREFUSED, -EBUSY,
				"%s: shelf `%s' is active on this node for writing (mode %s); deactivate it (or activate it --shared) first",
				c->what, c->src, mode);
		return lfsvol_fail(
			LFSVOL_EREFUSED, -EBUSY,
			"%s: shelf `%s' is active on node `%s' for writing (mode %s); deactivate it there first",
			c->what, c->src, node, mode);
	}
	return 0;
}

/* SRC exists, is whole (not a copy under way) and nobody writes it. */
static int src_check(struct copy *c)
{
	json_t *mark;
	int r;

	r = lfsvol_lib_request(c->lib, c->what, "shelf.get",
			       json_pack("{s:s,s:i}", "name", c->src, "limit", 1), &c->ssh);
	if (r)
		return r;
	mark = json_object_get(json_object_get(c->ssh, "attrs"), LFSVOL_INCOMPLETE_KEY);
	if (mark)
		return lfsvol_fail(LFSVOL_EREFUSED, -EBUSY,
				   "%s: shelf `%s' is itself an incomplete copy (%s: %s)", c->what,
				   c->src, LFSVOL_INCOMPLETE_KEY, json_string_value(mark) ?: "?");
	return src_writers(c);
}

/* DST must not exist: nothing is changed if it does. */
static int dst_check(struct copy *c)
{
	json_t *res = NULL;
	int r = lfsvol_lib_call(c->lib, "shelf.get",
				json_pack("{s:s,s:i}", "name", c->dst, "limit", 1), &res);

	json_decref(res);
	if (!r)
		return lfsvol_fail(
			LFSVOL_EUSAGE, -EEXIST,
			"%s: shelf `%s' exists already; copy to a new name, or remove `%s' first",
			c->what, c->dst, c->dst);
	if (r != -ENOENT)
		return lfsvol_lib_fail(c->lib, c->what, r);
	return 0;
}

/*
 * udev's probe of a new device is over once it has made the name. Waited
 * for in steps, so that a signal ends the wait (the copy's handler only
 * sets copy_stop).
 */
static int link_ready(struct copy *c, const char *name, const char *disk)
{
	int64_t end = lfsvol_now_ms() + LINK_TIMEOUT_MS;
	int r;

	do
		r = lfsvol_dev_link_wait(name, disk, 100);
	while (r == -ETIMEDOUT && !copy_stop && lfsvol_now_ms() < end);
	if (copy_stop)
		return lfsvol_fail(LFSVOL_EFAIL, -EINTR, "%s: interrupted by a signal", c->what);
	if (r)
		return lfsvol_fail(LFSVOL_EFAIL, r,
				   "%s: udev made no /dev/lfs/%s for /dev/%s within %d s", c->what,
				   name, disk, LINK_TIMEOUT_MS / 1000);
	return 0;
}

/* The disk of an active shelf here (lfsN) and its bytes, once udev has named it. */
static int disk_of(struct copy *c, const char *name, char *disk, size_t len, uint64_t *bytes)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r = lfsnl_shelf_list(c->drv, name, &kv, &kn);

	if (r)
		return lfsvol_drv_fail(c->drv, r, c->what);
	snprintf(disk, len, "%s", kv[0].disk);
	*bytes = kv[0].book_size * kv[0].nr_books;
	lfsnl_shelf_list_free(kv, kn);
	return link_ready(c, name, disk);
}

/* SRC read-only here (a shared activation), unless it is already. */
static int src_activate(struct copy *c)
{
	struct lfsvol_activation how = { .shared = true, .quiet = true };
	int r = lfsvol_activate_one(c->ctx, c->lib, c->drv, c->src, &how);

	if (r)
		return r < 0 ? r : -EAGAIN;
	c->src_ours = !c->src_ro_here;
	return disk_of(c, c->src, c->sdisk, sizeof(c->sdisk), &c->bytes);
}

/* The mark's value: who copied what, when; shown by `attr list' and `show'. */
static json_t *create_attrs(struct copy *c)
{
	json_t *attrs = json_object(), *v;
	const char *key;
	char mark[256];

	json_object_foreach(json_object_get(c->ssh, "attrs"), key, v) {
		if (strncmp(key, "lfs.", 4))
			json_object_set(attrs, key, v);
	}
	snprintf(mark, sizeof(mark), "copy of %s (%s) by node %s started at %lld", c->src,
		 str(c->ssh, "uuid"), c->ctx->conf->node ?: "?", (long long)time(NULL));
	return json_pack("{s:o,s:s}", "attrs", attrs, "incomplete", mark);
}

/* shelf.create's arguments: SRC's books, policy, lfs.igs, lfs.anti_affinity, user attributes. */
static json_t *create_args(struct copy *c)
{
	json_t *sys = json_object_get(c->ssh, "attrs"), *args = create_attrs(c);
	static const char *const keys[][2] = { { "lfs.igs", "igs" },
					       { "lfs.anti_affinity", "anti_affinity" } };

	json_object_set_new(args, "name", json_string(c->dst));
	json_object_set(args, "books", json_object_get(c->ssh, "books"));
	json_object_set_new(args, "activate", json_string("rw"));
	if (json_object_get(c->ssh, "policy"))
		json_object_set(args, "policy", json_object_get(c->ssh, "policy"));
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (json_object_get(sys, keys[i][0]))
			json_object_set(args, keys[i][1], json_object_get(sys, keys[i][0]));
	return args;
}

/* DST, marked incomplete and active here for writing, in one request. */
static int dst_create(struct copy *c)
{
	struct lfsvol_activation how = { .quiet = true };
	json_t *res = NULL;
	uint64_t bytes = 0;
	int r;

	how.given_sent = lfs_boottime_ns();
	r = lfsvol_lib_request(c->lib, c->what, "shelf.create", create_args(c), &res);
	if (r)
		return r;
	c->dst_made = true;
	how.given = res;
	r = lfsvol_activate_one(c->ctx, c->lib, c->drv, c->dst, &how);
	json_decref(res);
	if (r)
		return r < 0 ? r : -EAGAIN;
	c->dst_active = true;
	r = disk_of(c, c->dst, c->ddisk, sizeof(c->ddisk), &bytes);
	if (!r && bytes != c->bytes)
		r = lfsvol_fail(LFSVOL_EFAIL, -EPROTO,
				"%s: /dev/%s has %llu bytes, /dev/%s %llu; the book sizes differ",
				c->what, c->ddisk, (unsigned long long)bytes, c->sdisk,
				(unsigned long long)c->bytes);
	return r;
}

/* Kernel first, then udev's name, then the librarian. */
static int put_back(struct copy *c, const char *name, const char *disk)
{
	int r = lfsvol_kernel_remove(c->ctx->conf, c->drv, name);

	if (r && r != -ENOENT)
		return lfsvol_drv_fail(c->drv, r, c->what);
	if (disk[0])
		lfsvol_dev_link_drop(name, disk);
	return lfsvol_lib_request(c->lib, c->what, "shelf.deactivate",
				  json_pack("{s:s}", "name", name), NULL);
}

/* A copy that did not end: DST goes (its books become ZOMBIE and are zeroed). */
static void dst_drop(struct copy *c)
{
	int r = 0;

	if (c->dst_active)
		r = put_back(c, c->dst, c->ddisk);
	if (!r)
		r = lfsvol_lib_request(c->lib, c->what, "shelf.destroy",
				       json_pack("{s:s}", "name", c->dst), NULL);
	if (r)
		lfsvol_err("shelf `%s' stays, marked %s; remove it with `%s remove -f %s'", c->dst,
			   LFSVOL_INCOMPLETE_KEY, lfsvol_prog, c->dst);
	else
		lfsvol_info("removed the incomplete copy %s", c->dst);
	lfsvol_result_set("removed", json_boolean(!r));
}

/*
 * Our ro activation keeps rw holders out, but the librarian lets a
 * "shared" (writing) one in beside it, and a grow needs no activation: SRC
 * is read again after the bytes, and a writer or a new size fails the copy.
 */
static int src_recheck(struct copy *c)
{
	json_t *now = NULL, *books = json_incref(json_object_get(c->ssh, "books"));
	int r = lfsvol_lib_request(c->lib, c->what, "shelf.get",
				   json_pack("{s:s,s:i}", "name", c->src, "limit", 1), &now);

	json_decref(c->ssh);
	c->ssh = now;
	if (!r && !json_equal(books, json_object_get(now, "books")))
		r = lfsvol_fail(LFSVOL_EFAIL, -ESTALE,
				"%s: shelf `%s' was resized during the copy; copy it again",
				c->what, c->src);
	if (!r)
		r = src_writers(c);
	json_decref(books);
	return r;
}

/* lfs.size, the size of the file a shelf is under /lfs (unset: the whole shelf), then the mark off. */
static int dst_finish(struct copy *c)
{
	json_t *size;
	int r;

	r = src_recheck(c);
	size = json_object_get(json_object_get(c->ssh, "attrs"), "lfs.size");
	if (!r && size)
		r = lfsvol_lib_request(c->lib, c->what, "attr.set",
				       json_pack("{s:s,s:s,s:O}", "name", c->dst, "key", "lfs.size",
						 "value", size),
				       NULL);
	if (!r)
		r = lfsvol_lib_request(
			c->lib, c->what, "attr.remove",
			json_pack("{s:s,s:s}", "name", c->dst, "key", LFSVOL_INCOMPLETE_KEY), NULL);
	return r;
}

/* The copy's figures, from the agent's record. */
static void copy_report(struct copy *c, json_t *rec)
{
	double secs = json_real_value(json_object_get(rec, "seconds"));
	double rate = json_real_value(json_object_get(rec, "mib_per_s"));
	json_int_t bytes = json_integer_value(json_object_get(rec, "bytes"));
	char a[32];

	lfsvol_result_set("bytes", json_integer(bytes));
	lfsvol_result_set("seconds", json_real(secs));
	lfsvol_result_set("mib_per_s", json_real(rate));
	lfsvol_info("copied shelf %s to %s: %s in %.1f s, %.0f MiB/s", c->src, c->dst,
		    lfs_size_human((uint64_t)bytes, a, sizeof(a)), secs, rate);
}

/*
 * The agent's copy followed to its end (started already, or by an earlier
 * command), then the mark off: DST is whole, and the agent forgets it.
 */
static int copy_follow(struct copy *c)
{
	json_t *rec = NULL;
	int r = lfsvol_copy_follow(c->lib, c->what, c->dst, &copy_stop, !c->wait, &rec);

	c->agent_lost = !lfsvol_lib_alive(c->lib);
	if (!r)
		r = dst_finish(c);
	if (!r)
		copy_report(c, rec);
	json_decref(rec);
	if (!c->agent_lost && !(r == -EINTR && c->wait))
		lfsvol_lib_call(c->lib, LFSVOL_COPY_OP_FORGET, json_pack("{s:s}", "dst", c->dst),
				NULL);
	return r;
}

/* The bytes are the node agent's to copy: asked here, followed until done. */
static int copy_bytes(struct copy *c)
{
	int r = lfsvol_lib_request(c->lib, c->what, LFSVOL_COPY_OP_START,
				   json_pack("{s:s,s:s,s:b,s:I}", "src", c->src, "dst", c->dst,
					     "src_ours", c->src_ours, "max_rate",
					     (json_int_t)c->max_rate),
				   NULL);

	return r ? r : copy_follow(c);
}

/* A shelf of no books has no bytes: its copy is the shelf.create alone. */
static int copy_empty(struct copy *c)
{
	json_t *args = create_args(c);

	json_object_del(args, "activate");
	json_object_del(args, "incomplete");
	lfsvol_info("copied shelf %s to %s: no books, no bytes", c->src, c->dst);
	return lfsvol_lib_request(c->lib, c->what, "shelf.create", args, NULL);
}

/*
 * Both back as they were (DST inactive, or gone). Not if the agent went
 * away: its copy may not have ended, and DST stays marked (activate
 * refuses it); a --wait interrupted leaves the copy running.
 */
static int copy_end(struct copy *c, int r)
{
	int e;

	if (c->agent_lost) {
		lfsvol_err(
			"the node agent went away during the copy: shelf `%s' stays marked %s, and activate refuses it; remove it with `%s remove -f %s'%s%s",
			c->dst, LFSVOL_INCOMPLETE_KEY, lfsvol_prog, c->dst,
			c->src_ours ? ", and deactivate " : "", c->src_ours ? c->src : "");
		return r;
	}
	if (r == -EINTR && c->wait) {
		lfsvol_err("the copy to `%s' goes on; `%s copy --wait %s' follows it again", c->dst,
			   lfsvol_prog, c->dst);
		return r;
	}
	if (!r && c->dst_active)
		r = put_back(c, c->dst, c->ddisk);
	if (r && c->dst_made)
		dst_drop(c);
	if (c->src_ours) {
		e = put_back(c, c->src, c->sdisk);
		r = r ? r : e;
	}
	return r;
}

/* Both shelves here, the bytes by the agent, then both back as they were. */
static int copy_run(struct copy *c)
{
	int r;

	if (!json_integer_value(json_object_get(c->ssh, "books")))
		return copy_empty(c);
	catch_signals();
	r = src_activate(c);
	if (!r)
		r = dst_create(c);
	if (!r)
		r = copy_bytes(c);
	return copy_end(c, r);
}

/* The bytes are the node agent's to copy: its session, borrowed, is the way to it. */
static int agent_needed(struct copy *c)
{
	if (lfsvol_lib_borrowed(c->lib))
		return 0;
	return lfsvol_fail(
		LFSVOL_EFAIL, -ENOTCONN,
		"%s: the node agent copies the bytes, and none answers on %s/agent.sock; start it (`%s agent') and do not bypass it (--librarian, LFSVOL_NO_AGENT)",
		c->what, c->ctx->conf->state_dir, lfsvol_prog);
}

/* The librarian's refusals first (nothing is changed by them), then root and the kernel. */
static int copy_open(struct copy *c)
{
	int r = lfsvol_lib_open(c->ctx, &c->lib);

	if (!r)
		r = src_check(c);
	if (!r)
		r = dst_check(c);
	if (!r)
		r = lfsvol_need_root("copy");
	if (!r)
		r = lfsvol_drv_open(&c->drv);
	if (!r)
		r = lfsvol_lease_usable(c->drv, c->what);
	if (!r)
		r = agent_needed(c);
	return r;
}

/* --wait: the SRC of the agent's copy to DST, and how it was activated. */
static int rejoin_source(struct copy *c)
{
	json_t *rec = NULL;
	int r = lfsvol_copy_ask(c->lib, c->what, LFSVOL_COPY_OP_GET, c->dst, &rec);

	if (r == -ENOENT)
		lfsvol_err(
			"if shelf `%s' is marked %s, its copy ended with an agent that stopped; remove it with `%s remove -f %s'",
			c->dst, LFSVOL_INCOMPLETE_KEY, lfsvol_prog, c->dst);
	if (r)
		return r;
	snprintf(c->srcname, sizeof(c->srcname), "%s",
		 json_string_value(json_object_get(rec, "source")) ?: "");
	c->src = c->srcname;
	c->src_ours = json_is_true(json_object_get(rec, "src_ours"));
	json_decref(rec);
	snprintf(c->what, sizeof(c->what), "copying shelf `%s' to `%s'", c->src, c->dst);
	lfsvol_result_set("source", json_string(c->src));
	return lfsvol_lib_request(c->lib, c->what, "shelf.get",
				  json_pack("{s:s,s:i}", "name", c->src, "limit", 1), &c->ssh);
}

/* copy --wait DST: follow the agent's copy to DST, then finish DST as copy does. */
static int copy_rejoin(struct copy *c)
{
	uint64_t bytes = 0;
	int r = lfsvol_lib_open(c->ctx, &c->lib);

	if (!r)
		r = lfsvol_need_root("copy --wait");
	if (!r)
		r = agent_needed(c);
	if (!r)
		r = rejoin_source(c);
	if (!r)
		r = lfsvol_drv_open(&c->drv);
	if (!r)
		r = disk_of(c, c->src, c->sdisk, sizeof(c->sdisk), &c->bytes);
	if (!r)
		r = disk_of(c, c->dst, c->ddisk, sizeof(c->ddisk), &bytes);
	if (r)
		return r;
	c->dst_made = c->dst_active = true;
	catch_signals();
	return copy_end(c, copy_follow(c));
}

/* copy [--max-rate SIZE] SRC DST | copy --wait DST */
static int copy_args(struct copy *c, int argc, char **argv)
{
	static const struct option opts[] = { { "wait", no_argument, NULL, 'w' },
					      { "max-rate", required_argument, NULL, 'r' },
					      { NULL, 0, NULL, 0 } };
	struct lfs_size sz;
	char msg[256];
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'w')
			c->wait = true;
		else if (o != 'r')
			return -EINVAL;
		else if (lfs_size_parse(optarg, 0, &sz, msg, sizeof(msg)))
			return lfsvol_usage("copy --max-rate: %s", msg);
		else
			c->max_rate = sz.value;
	}
	if (c->wait && optind == argc - 1 && !c->max_rate) {
		c->dst = argv[optind];
		return lfsvol_check_name(c->dst);
	}
	if (c->wait || optind != argc - 2)
		return lfsvol_usage(
			"usage: %s copy [--max-rate SIZE] SRC DST, or %s copy --wait DST",
			lfsvol_prog, lfsvol_prog);
	c->src = argv[optind];
	c->dst = argv[optind + 1];
	return lfsvol_check_name(c->src) ?: lfsvol_check_name(c->dst);
}

int cmd_copy(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct copy c = { .ctx = ctx };
	int r = copy_args(&c, argc, argv);

	if (!r && !c.wait && !strcmp(c.src, c.dst))
		r = lfsvol_usage("copy: SRC and DST are both `%s'; name a new shelf", c.src);
	if (c.wait)
		snprintf(c.what, sizeof(c.what), "following the copy to `%s'", c.dst);
	else
		snprintf(c.what, sizeof(c.what), "copying shelf `%s' to `%s'", c.src ?: "?",
			 c.dst ?: "?");
	if (!r && c.wait) {
		r = copy_rejoin(&c);
	} else if (!r) {
		lfsvol_result_set("source", json_string(c.src));
		r = copy_open(&c);
		if (!r)
			r = copy_run(&c);
	}
	if (!r && lfsvol_json)
		lfsvol_result_set("shelf", lfsvol_shelf_describe(c.lib, c.dst));
	json_decref(c.ssh);
	lfsvol_lib_close(c.lib);
	lfs_client_close(c.drv);
	return lfsvol_exit_code(r);
}
