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

static json_t *state_json(const struct lfsvol_conf *conf, const struct agent_state *st)
{
	const char *check = st->check[0]		   ? st->check :
			    st->daemon && conf->check_free ? "starting" :
							     "off";

	return json_pack("{s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:I,s:I,s:I,s:s}", "pid",
			 (int)getpid(), "daemon", st->daemon, "updated", (json_int_t)time(NULL),
			 "zeroed", (json_int_t)st->zeroed, "zombies_pending",
			 (json_int_t)st->pending, "heartbeats", (json_int_t)st->heartbeats,
			 "last_heartbeat", (json_int_t)st->last_heartbeat, "librarian",
			 st->librarian, "scrub", st->scrub, "checked_zero",
			 (json_int_t)st->checked_zero, "checked_other",
			 (json_int_t)st->checked_other, "checked_skipped",
			 (json_int_t)st->checked_skipped, "check", check);
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

int lfsvol_state_lock(const struct lfsvol_conf *conf)
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
	if (flock(fd, LOCK_EX)) {
		r = -errno;
		close(fd);
		if (r == -EINTR) /* the agent is stopping */
			return lfsvol_exit_as(LFSVOL_ECONFIG, r);
		return lfsvol_fail(LFSVOL_ECONFIG, r, "cannot lock %s: %s", path, strerror(-r));
	}
	return fd;
}
