// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's copies of shelves (copyjob.h). `lfsvol copy' prepares both
 * shelves (SRC read-only here, DST made with lfs.incomplete and active
 * here for writing) and asks the agent to copy; the agent finds both
 * devices in the kernel and starts a child, `lfsvol agent --copy', which
 * moves the bytes (copy_data.c) and writes a record after every chunk.
 * The command polls the record, and so does a later `lfsvol copy --wait'
 * if the command was killed: the copy outlives it. Once the copy is done,
 * the command finishes DST (the mark off) and the agent forgets the copy.
 *
 * The child is a new program (as job.c's): nothing of the agent's threads
 * is in it. It dies with the agent (PR_SET_PDEATHSIG), and a stopping
 * agent stops it: a copy does not outlive the agent, and its DST stays
 * marked incomplete, which activate refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copy_io.h"
#include "copyjob.h"
#include "msg.h"

#define COPY_NICE 5
#define COPY_WRITE_MS 500

struct copy_record {
	uint64_t done;
	int32_t status; /* 0 or -errno, at the end */
	uint32_t end; /* 1: the last record */
	char msg[COPY_RECORD_SIZE - 16];
};

extern char **environ;

static const char *const state_names[] = { "running", "done", "failed", "cancelled" };

void lfsvol_copies_init(struct agent_copies *cs)
{
	memset(cs, 0, sizeof(*cs));
	for (int i = 0; i < AGENT_COPIES; i++)
		cs->v[i].fd = -1;
}

static json_t *copy_json(const struct agent_copy *c)
{
	int64_t ms = c->updated_ms - c->started_ms;

	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:f,s:f,s:b,s:o}", "source", c->src, "dest", c->dst,
			 "state", state_names[c->state], "bytes", (json_int_t)c->done, "total",
			 (json_int_t)c->bytes, "seconds", (double)ms / 1000, "mib_per_s",
			 lfsvol_copy_mib_s(c->done, ms), "src_ours", c->src_ours, "error",
			 c->msg[0] ? json_string(c->msg) : json_null());
}

json_t *lfsvol_copies_json(const struct agent_copies *cs)
{
	json_t *a = json_array();

	for (int i = 0; a && i < AGENT_COPIES; i++)
		if (cs->v[i].used)
			json_array_append_new(a, copy_json(&cs->v[i]));
	return a;
}

static struct agent_copy *copy_find(struct agent_copies *cs, const char *dst)
{
	for (int i = 0; dst && i < AGENT_COPIES; i++)
		if (cs->v[i].used && !strcmp(cs->v[i].dst, dst))
			return &cs->v[i];
	return NULL;
}

/* A free slot, or the finished copy that started first (its command never came back). */
static struct agent_copy *copy_slot(struct agent_copies *cs)
{
	struct agent_copy *old = NULL;

	for (int i = 0; i < AGENT_COPIES; i++) {
		struct agent_copy *c = &cs->v[i];

		if (!c->used)
			return c;
		if (c->state != COPY_RUNNING && (!old || c->started_ms < old->started_ms))
			old = c;
	}
	return old;
}

/* The child ended: reap it; a child that ended without its last record failed. */
static void copy_reap(struct agent_copy *c)
{
	int status = 0;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	while (c->pid > 0 && waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	c->updated_ms = lfsvol_now_ms();
	if (c->state != COPY_RUNNING)
		return;
	c->state = COPY_FAILED;
	c->err = -EPIPE;
	snprintf(c->msg, sizeof(c->msg), "the agent's copy process ended (%s %d)",
		 WIFSIGNALED(status) ? "signal" : "status",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void copy_take(struct agent_copy *c, const struct copy_record *rec)
{
	c->done = rec->done;
	c->updated_ms = lfsvol_now_ms();
	if (!rec->end || c->state != COPY_RUNNING)
		return;
	c->state = rec->status ? COPY_FAILED : COPY_DONE;
	c->err = rec->status;
	snprintf(c->msg, sizeof(c->msg), "%.*s", (int)sizeof(rec->msg) - 1, rec->msg);
}

/* What the child wrote; it ended if its pipe did. */
static void copy_read(struct agent_copies *cs, struct agent_copy *c)
{
	uint8_t buf[16 * COPY_RECORD_SIZE];
	ssize_t n;

	while (c->fd >= 0) {
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			copy_reap(c);
			cs->changed = true;
			return;
		}
		for (ssize_t k = 0; k < n; k++) {
			c->part[c->plen++] = buf[k];
			if (c->plen == sizeof(struct copy_record)) {
				struct copy_record rec;

				memcpy(&rec, c->part, sizeof(rec));
				copy_take(c, &rec);
				c->plen = 0;
			}
		}
	}
}

void lfsvol_copies_fds(const struct agent_copies *cs, struct pollfd *p)
{
	for (int i = 0; i < AGENT_COPIES; i++)
		p[i] = (struct pollfd){ .fd = cs->v[i].fd, .events = POLLIN };
}

void lfsvol_copies_collect(struct agent_copies *cs, const struct pollfd *p)
{
	for (int i = 0; i < AGENT_COPIES; i++)
		if (p[i].revents && cs->v[i].fd >= 0)
			copy_read(cs, &cs->v[i]);
}

bool lfsvol_copies_due(struct agent_copies *cs)
{
	int64_t now = lfsvol_now_ms();
	bool running = false;

	for (int i = 0; i < AGENT_COPIES; i++)
		running |= cs->v[i].used && cs->v[i].state == COPY_RUNNING;
	if (!cs->changed && !(running && now - cs->written_ms >= COPY_WRITE_MS))
		return false;
	cs->changed = false;
	cs->written_ms = now;
	return true;
}

/* Stop a running child and wait for it: nothing writes DST afterwards. */
static void copy_kill(struct agent_copy *c)
{
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
	copy_reap(c);
}

void lfsvol_copies_stop(struct agent_copies *cs)
{
	for (int i = 0; i < AGENT_COPIES; i++)
		if (cs->v[i].used)
			copy_kill(&cs->v[i]);
}

static int copy_spawn(struct agent_copy *c)
{
	char bytes[32], rate[32];
	char *argv[] = { "lfsvol", "agent",  "--copy", c->src, c->dst,
			 c->sdisk, c->ddisk, bytes,    rate,   NULL };
	posix_spawn_file_actions_t fa;
	int p[2], r;

	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)c->bytes);
	snprintf(rate, sizeof(rate), "%llu", (unsigned long long)c->max_rate);
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	r = -posix_spawn(&c->pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		return r;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->fd = p[0];
	return 0;
}

/* A refusal: *err and msg set, NULL returned. */
static json_t *__printf(5, 6) refuse(int *err, int e, char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	*err = e;
	return NULL;
}

/* An active shelf here: its disk and bytes. */
static int kernel_disk(struct lfs_client *drv, const char *name, char *disk, size_t len,
		       uint64_t *bytes, char *msg, size_t mlen)
{
	struct lfs_shelf_info *kv = NULL;
	size_t kn = 0;
	int r = lfsnl_shelf_list(drv, name, &kv, &kn);

	if (!r && !kn)
		r = -ENOENT;
	if (r) {
		snprintf(msg, mlen, "shelf `%s' is not active on this node (%s)", name,
			 strerror(-r));
		lfsnl_shelf_list_free(kv, kn);
		return r;
	}
	snprintf(disk, len, "%s", kv[0].disk);
	*bytes = kv[0].book_size * kv[0].nr_books;
	lfsnl_shelf_list_free(kv, kn);
	return 0;
}

/* A copy from or to a shelf that a running copy writes is refused. */
static bool copy_writes(struct agent_copies *cs, const char *name)
{
	struct agent_copy *c = copy_find(cs, name);

	return c && c->state == COPY_RUNNING;
}

/* Both shelves as the kernel has them here, the same size. */
static int copy_devices(struct lfs_client *drv, struct agent_copy *c, char *msg, size_t len)
{
	uint64_t dbytes = 0;
	int r = kernel_disk(drv, c->src, c->sdisk, sizeof(c->sdisk), &c->bytes, msg, len);

	if (!r)
		r = kernel_disk(drv, c->dst, c->ddisk, sizeof(c->ddisk), &dbytes, msg, len);
	if (!r && dbytes != c->bytes) {
		snprintf(msg, len, "/dev/%s (shelf `%s') has %llu bytes, /dev/%s (`%s') %llu",
			 c->sdisk, c->src, (unsigned long long)c->bytes, c->ddisk, c->dst,
			 (unsigned long long)dbytes);
		r = -EPROTO;
	}
	return r;
}

static json_t *copy_start(struct agent_copies *cs, struct lfs_client *drv, json_t *args, int *err,
			  char *msg, size_t len)
{
	struct agent_copy one = { .used = true, .fd = -1 }, *c;
	const char *src = json_string_value(json_object_get(args, "src"));
	const char *dst = json_string_value(json_object_get(args, "dst"));
	json_int_t rate = json_integer_value(json_object_get(args, "max_rate"));

	if (!src || !dst || strlen(src) > LFS_NAME_MAX || strlen(dst) > LFS_NAME_MAX || rate < 0)
		return refuse(err, -EINVAL, msg, len,
			      "copy: needs \"src\", \"dst\" (names), \"max_rate\" >= 0");
	if (copy_writes(cs, src) || copy_writes(cs, dst))
		return refuse(err, -EBUSY, msg, len, "a copy to `%s' runs on this node",
			      copy_writes(cs, src) ? src : dst);
	snprintf(one.src, sizeof(one.src), "%s", src);
	snprintf(one.dst, sizeof(one.dst), "%s", dst);
	one.src_ours = json_is_true(json_object_get(args, "src_ours"));
	one.max_rate = (uint64_t)rate;
	*err = copy_devices(drv, &one, msg, len);
	if (*err)
		return NULL;
	c = copy_find(cs, dst) ?: copy_slot(cs);
	if (!c)
		return refuse(err, -EBUSY, msg, len, "%d copies run on this node already",
			      AGENT_COPIES);
	*c = one;
	c->started_ms = c->updated_ms = lfsvol_now_ms();
	*err = copy_spawn(c);
	if (*err) {
		c->used = false;
		return refuse(err, *err, msg, len, "cannot start the copy process: %s",
			      strerror(-*err));
	}
	cs->changed = true;
	return copy_json(c);
}

json_t *lfsvol_copy_answer(struct agent_copies *cs, struct lfs_client *drv, const char *op,
			   json_t *args, int *err, char *msg, size_t len)
{
	struct agent_copy *c;

	if (!strcmp(op, LFSVOL_COPY_OP_START))
		return copy_start(cs, drv, args, err, msg, len);
	c = copy_find(cs, json_string_value(json_object_get(args, "dst")));
	if (!c)
		return refuse(err, -ENOENT, msg, len, "no copy to `%s' on this node's agent",
			      json_string_value(json_object_get(args, "dst")) ?: "?");
	if (!strcmp(op, LFSVOL_COPY_OP_CANCEL)) {
		if (c->state == COPY_RUNNING)
			c->state = COPY_CANCELLED;
		copy_kill(c);
		cs->changed = true;
	} else if (!strcmp(op, LFSVOL_COPY_OP_FORGET)) {
		if (c->state == COPY_RUNNING)
			return refuse(err, -EBUSY, msg, len, "the copy to `%s' runs", c->dst);
		c->used = false;
		cs->changed = true;
		return json_object();
	} else if (strcmp(op, LFSVOL_COPY_OP_GET)) {
		return refuse(err, -EOPNOTSUPP, msg, len, "unknown operation `%s'", op);
	}
	return copy_json(c);
}

static void child_record(const struct lfsvol_copy_io *io, void *arg)
{
	struct copy_record rec = { .done = io->done };

	(void)arg;
	/* at most PIPE_BUF: written whole; a closed pipe (the agent gone) ends us */
	if (write(STDOUT_FILENO, &rec, sizeof(rec)) != sizeof(rec))
		_exit(LFSVOL_EFAIL);
}

int lfsvol_copy_child(int argc, char **argv)
{
	static volatile sig_atomic_t never;
	struct lfsvol_copy_io io = { .stop = &never, .progress = child_record };
	struct copy_record end = { .end = 1 };
	int r;

	if (argc != 6)
		return LFSVOL_EUSAGE;
	/* the agent's child: it dies with the agent */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpriority(PRIO_PROCESS, 0, COPY_NICE);
	lfsvol_json_on(); /* keep the failure's line for the record */
	io.src = argv[0];
	io.dst = argv[1];
	io.src_disk = argv[2];
	io.dst_disk = argv[3];
	io.bytes = strtoull(argv[4], NULL, 10);
	io.max_rate = strtoull(argv[5], NULL, 10);
	r = lfsvol_copy_bytes(&io);
	end.done = io.done;
	end.status = r;
	if (r)
		snprintf(end.msg, sizeof(end.msg), "%s", lfsvol_fail_line() ?: strerror(-r));
	if (write(STDOUT_FILENO, &end, sizeof(end)) != sizeof(end))
		r = -EPIPE;
	return r ? LFSVOL_EFAIL : LFSVOL_OK;
}
