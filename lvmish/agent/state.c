// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's progress file STATE_DIR/agent.json (replaced atomically, read
 * by `lfsvol status'), and STATE_DIR/agent.lock, the flock that serialises
 * the daemon's passes, `agent --once' from udev and scrub.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "lfs_rules.h"
#include "msg.h"

volatile sig_atomic_t lfsvol_agent_stop;

/* agent.json belongs to a running agent daemon other than this process */
static bool daemon_owns_state(const char *path)
{
	json_t *o = json_load_file(path, 0, NULL);
	int pid = (int)json_integer_value(json_object_get(o, "pid"));
	bool owned = json_is_true(json_object_get(o, "daemon")) && pid > 0 && pid != getpid() &&
		     (kill(pid, 0) == 0 || errno == EPERM);

	json_decref(o);
	return owned;
}

/* [[run, books zeroed], ...] for the last AGENT_RECENT_RUNS runs, oldest first. */
static json_t *recent_runs(const struct agent_state *st)
{
	long long k = st->runs > AGENT_RECENT_RUNS ? st->runs - AGENT_RECENT_RUNS + 1 : 1;
	json_t *a = json_array();

	for (; a && k <= st->runs; k++)
		json_array_append_new(
			a, json_pack("[I,I]", (json_int_t)k,
				     (json_int_t)st->recent_zeroed[k % AGENT_RECENT_RUNS]));
	return a;
}

static json_t *state_json(const struct lfsvol_conf *conf, const struct agent_state *st)
{
	const char *check = st->check[0]		   ? st->check :
			    st->daemon && conf->check_free ? "starting" :
							     "off";
	json_t *o = json_pack(
		"{s:i,s:b,s:I,s:I,s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "pid", (int)getpid(), "daemon",
		st->daemon, "updated", (json_int_t)time(NULL), "zeroed", (json_int_t)st->zeroed,
		"zombies_pending", (json_int_t)st->pending, "librarian", st->librarian, "scrub",
		st->scrub, "checked_zero", (json_int_t)st->checked_zero, "checked_other",
		(json_int_t)st->checked_other, "checked_skipped", (json_int_t)st->checked_skipped,
		"zeroed_free", (json_int_t)st->zeroed_free, "check", check);

	if (o) {
		json_object_set_new(o, "zeroing", lfsvol_progress_json(&st->zeroing));
		json_object_set_new(o, "sweep", lfsvol_progress_json(&st->sweep));
		json_object_set_new(o, "runs", json_integer(st->runs));
		json_object_set_new(o, "recent_runs", recent_runs(st));
		json_object_set_new(o, "copies",
				    st->copies ? json_incref(st->copies) : json_array());
	}
	return o;
}

void lfsvol_state_write(const struct lfsvol_conf *conf, const struct agent_state *st)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	json_t *o;

	mkdir(conf->state_dir, 0755);
	snprintf(path, sizeof(path), "%s/agent.json", conf->state_dir);
	/*
	 * A --once pass (udev) or scrub while the daemon runs leaves the
	 * daemon's progress in place: `lfsvol status' shows the agent's.
	 */
	if (!st->daemon && daemon_owns_state(path))
		return;
	snprintf(tmp, sizeof(tmp), "%s/.agent.json.%d", conf->state_dir, (int)getpid());
	o = state_json(conf, st);
	if (o && !json_dump_file(o, tmp, JSON_COMPACT))
		rename(tmp, path);
	else
		unlink(tmp);
	json_decref(o);
}

bool lfsvol_state_daemon_runs(const struct lfsvol_conf *conf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/agent.json", conf->state_dir);
	return daemon_owns_state(path);
}

int lfsvol_state_lock(const struct lfsvol_conf *conf, bool nowait)
{
	char path[PATH_MAX];
	int fd, r;

	mkdir(conf->state_dir, 0755);
	snprintf(path, sizeof(path), "%s/agent.lock", conf->state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return lfsvol_fail(
			LFSVOL_ECONFIG, -errno,
			"cannot open %s: %s; set agent.state_dir in %s to a writable directory",
			path, strerror(errno), conf->path);
	if (flock(fd, LOCK_EX | (nowait ? LOCK_NB : 0))) {
		r = -errno;
		close(fd);
		if (r == -EWOULDBLOCK && nowait)
			return r;
		if (r == -EINTR) /* the agent is stopping */
			return lfsvol_exit_as(LFSVOL_ECONFIG, r);
		return lfsvol_fail(LFSVOL_ECONFIG, r, "cannot lock %s: %s", path, strerror(-r));
	}
	return fd;
}

void lfsvol_progress_start(struct agent_progress *p, const char *what, long long total)
{
	*p = (struct agent_progress){ .total = total };
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->started_ms = p->updated_ms = lfsvol_now_ms();
}

void lfsvol_progress_add(struct agent_progress *p, long long books, uint64_t bytes)
{
	p->done += books;
	p->bytes += bytes;
	if (p->done > p->total)
		p->total = p->done;
	p->updated_ms = lfsvol_now_ms();
}

/* Books per second so far; 0 until something is done. */
static double progress_rate(const struct agent_progress *p, double *bytes_s)
{
	double s = (double)(p->updated_ms - p->started_ms) / 1000;

	*bytes_s = s > 0 ? (double)p->bytes / s : 0;
	return s > 0 ? (double)p->done / s : 0;
}

json_t *lfsvol_progress_json(const struct agent_progress *p)
{
	double bytes_s, rate;

	if (!p->what[0])
		return json_null();
	rate = progress_rate(p, &bytes_s);
	return json_pack(
		"{s:s,s:I,s:I,s:I,s:f,s:f,s:o,s:I}", "what", p->what, "done", (json_int_t)p->done,
		"total", (json_int_t)p->total, "bytes", (json_int_t)p->bytes, "books_per_s", rate,
		"bytes_per_s", bytes_s, "seconds_left",
		rate > 0 ? json_integer((json_int_t)((double)(p->total - p->done) / rate)) :
			   json_null(),
		"started", (json_int_t)(time(NULL) - (lfsvol_now_ms() - p->started_ms) / 1000));
}

void lfsvol_progress_text(const struct agent_progress *p, uint64_t book_size, char *buf, size_t len)
{
	char a[32], b[32], c[32];
	double bytes_s, rate = progress_rate(p, &bytes_s);

	snprintf(buf, len, "%lld of %lld %s (%s of %s), %s/s, %s", p->done, p->total, p->what,
		 lfs_size_human(p->bytes, a, sizeof(a)),
		 lfs_size_human((uint64_t)p->total * book_size, b, sizeof(b)),
		 lfs_size_human((uint64_t)bytes_s, c, sizeof(c)),
		 rate > 0 ? "" : "rate not known yet");
	if (rate > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "%.0f s left",
			 (double)(p->total - p->done) / rate);
}
