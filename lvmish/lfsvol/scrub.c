// SPDX-License-Identifier: GPL-2.0
/*
 * `lfsvol scrub': zero this node's ZOMBIE books now (with --free also its
 * never-used FREE books). If the node agent runs, the command asks it to
 * start at once (agent.scrub) and follows its progress in agent.json;
 * otherwise it zeroes in its own process as `agent --once' does
 * (lvmish/agent/zero.c). Either way progress is books done of total, rate
 * and time left.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "kernel.h"
#include "lfsagent.h"
#include "lfs_rules.h"
#include "lfsvol.h"
#include "result.h"
#include "session.h"

#define SAY_EVERY_MS 2000 /* progress lines of scrub */

static void scrub_done(bool free_too, long long zeroed, long long fresh)
{
	lfsvol_result_set("zeroed", zeroed >= 0 ? json_integer(zeroed) : json_null());
	lfsvol_result_set("never_scrubbed", free_too ? json_integer(fresh) : json_null());
	if (free_too)
		lfsvol_info("scrub done: %lld book%s zeroed, %lld of them never scrubbed before",
			    zeroed, zeroed == 1 ? "" : "s", fresh);
	else
		lfsvol_info("scrub done: %lld book%s zeroed", zeroed, zeroed == 1 ? "" : "s");
}

/* No agent runs: zero in this process, under the agent's lock. */
static int scrub_here(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
		      bool free_too)
{
	long long zeroed, fresh;
	int r = lfsvol_agent_scrub(ctx->conf, lib, drv, free_too, &zeroed, &fresh);

	if (!r)
		scrub_done(free_too, zeroed, fresh);
	return r;
}

/* agent.json of the running agent, or NULL. */
static json_t *agent_json(const struct lfsvol_conf *conf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/agent.json", conf->state_dir);
	return json_load_file(path, 0, NULL);
}

static void say_progress(json_t *z)
{
	json_t *left = json_object_get(z, "seconds_left");
	char a[32], l[48] = "rate not known yet";

	if (json_is_integer(left))
		snprintf(l, sizeof(l), "%lld s left", (long long)json_integer_value(left));
	lfsvol_info("zeroing (by the node agent): %lld of %lld %s, %s/s, %s",
		    (long long)json_integer_value(json_object_get(z, "done")),
		    (long long)json_integer_value(json_object_get(z, "total")),
		    json_string_value(json_object_get(z, "what")) ?: "books",
		    lfs_size_human((uint64_t)json_real_value(json_object_get(z, "bytes_per_s")), a,
				   sizeof(a)),
		    l);
}

/* Books zeroed by run `run' in agent.json's recent_runs, or -1 if no longer kept. */
static long long run_count(json_t *o, long long run)
{
	json_t *el;
	size_t i;

	json_array_foreach(json_object_get(o, "recent_runs"), i, el) {
		if (json_integer_value(json_array_get(el, 0)) == run)
			return json_integer_value(json_array_get(el, 1));
	}
	return -1;
}

/*
 * Follow the agent's run until its `runs' count reaches until; *zeroed is
 * what that run zeroed (it may have begun before the request), read in the
 * same agent.json that shows it ended: later runs may end before we look.
 */
static int follow_agent(const struct lfsvol_conf *conf, long long until, long long *zeroed)
{
	int64_t said = lfsvol_now_ms();

	for (;;) {
		json_t *o = agent_json(conf);
		int pid = (int)json_integer_value(json_object_get(o, "pid"));
		bool done = json_integer_value(json_object_get(o, "runs")) >= until;

		if (!o || pid <= 0 || kill(pid, 0)) {
			json_decref(o);
			return lfsvol_fail(LFSVOL_EFAIL, -ESRCH,
					   "the node agent ended while zeroing; see its log");
		}
		if (!done && lfsvol_now_ms() - said >= SAY_EVERY_MS &&
		    json_is_object(json_object_get(o, "zeroing"))) {
			say_progress(json_object_get(o, "zeroing"));
			fflush(stdout); /* seen as it goes, in a log too */
			said = lfsvol_now_ms();
		}
		if (done)
			*zeroed = run_count(o, until);
		json_decref(o);
		if (done)
			return 0;
		if (lfsvol_agent_stop)
			return lfsvol_exit_as(LFSVOL_EFAIL, -EINTR);
		usleep(200000);
	}
}

/* The agent runs: --free's books go ZOMBIE here, the agent zeroes them; follow it. */
static int scrub_by_agent(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, bool free_too)
{
	json_t *res = NULL;
	long long fresh = 0, zeroed = -1;
	bool more = free_too;
	int r = 0;

	while (more && !r) {
		r = lfsvol_lib_request(lib, "sending never-scrubbed FREE books to be zeroed",
				       "free.scrub", json_pack("{s:i}", "limit", 65536), &res);
		fresh += json_integer_value(json_object_get(res, "books"));
		more = json_is_true(json_object_get(res, "more")) &&
		       json_integer_value(json_object_get(res, "books")) > 0;
		json_decref(res);
		res = NULL;
	}
	if (!r)
		r = lfsvol_lib_request(lib, "asking the node agent to zero now", "agent.scrub",
				       NULL, &res);
	if (!r)
		r = follow_agent(ctx->conf, json_integer_value(json_object_get(res, "until")),
				 &zeroed);
	json_decref(res);
	if (!r && zeroed < 0) {
		lfsvol_result_set("zeroed", json_null());
		lfsvol_info("scrub done: the node agent's run ended; %d later runs ended before "
			    "its count was read",
			    AGENT_RECENT_RUNS);
	} else if (!r) {
		scrub_done(free_too, zeroed, fresh);
	}
	return r;
}

int cmd_scrub(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "free", no_argument, NULL, 'f' },
					      { NULL, 0, NULL, 0 } };
	struct lfsvol_lib *lib = NULL;
	struct lfs_client *drv = NULL;
	bool free_too = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'f') {
			lfsvol_err("usage: %s scrub [--free]", lfsvol_prog);
			return LFSVOL_EUSAGE;
		}
		free_too = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s scrub [--free]: unexpected argument `%s'", lfsvol_prog,
			   argv[optind]);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_need_root("scrub");
	if (!r)
		r = lfsvol_need_conf(ctx);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (!r && lfsvol_lib_borrowed(lib))
		r = scrub_by_agent(ctx, lib, free_too);
	else if (!r && !(r = lfsvol_drv_open(&drv)))
		r = scrub_here(ctx, lib, drv, free_too);
	lfsvol_lib_close(lib);
	lfs_client_close(drv);
	return lfsvol_exit_code(r);
}
