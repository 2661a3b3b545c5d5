// SPDX-License-Identifier: GPL-2.0
/*
 * Fencing outside the node (docs/FENCING.md "Fencing outside the node"):
 * with fence_command set, the librarian lets no other node take over what a
 * node held once its lease lapsed (takeover, forced destroy, deactivation
 * for it) until the command, run for that node, has succeeded. A node whose
 * clocks stopped (a paused VM) still believes in its lease; only a fence
 * from outside (power, reset, the hypervisor) makes the takeover safe.
 *
 * The command runs as a child process in its own process group, started by
 * the first request that needs it; the event loop never waits for it. That
 * request and every one after it are refused with EBUSY ("ask again") while
 * it runs; the loop reaps it (lib_fence_poll, each round, at least once a
 * second) and kills its group at fence_timeout. Exit status 0: the node is
 * fenced and takeovers of its activations go on at once. Anything else: the
 * next request is refused with EIO naming the node and the status (safety
 * over speed), and the one after that runs the command again. A fence holds
 * until the node is heard again (a new request of it after it restarted):
 * then it is live again, and a later lapse needs a new fence. The same
 * holds for node.set_state offline of a node that is no longer live, and
 * for the release of a fencing node's activations (lib_fence_settled).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ops.h"
#include "server.h"

extern char **environ;

enum fence_state { F_IDLE, F_RUNNING, F_DONE, F_FAILED };

struct lib_fence_run {
	enum fence_state st;
	pid_t pid;
	int64_t started; /* monotonic ms */
	int64_t took; /* ms it ran */
	int64_t heard; /* the node's last heard when it started: the fence holds while unchanged */
	char why[160]; /* F_FAILED: how it ended */
};

int lib_fence_init(struct lib_server *srv)
{
	srv->fence = calloc(srv->cfg->nnodes + 1, sizeof(*srv->fence));
	return srv->fence ? 0 : -ENOMEM;
}

/* One argument with %n replaced by the node's name and %% by %. */
static char *subst(const char *a, const char *node)
{
	size_t n = strlen(a) + 1, len = 0;
	char *out;

	for (const char *q = a; *q; q++)
		n += q[0] == '%' && q[1] == 'n' ? strlen(node) : 0;
	if (!(out = malloc(n)))
		return NULL;
	for (const char *q = a; *q; q++) {
		if (q[0] == '%' && (q[1] == 'n' || q[1] == '%')) {
			len += q[1] == 'n' ? (size_t)sprintf(out + len, "%s", node) :
					     (size_t)sprintf(out + len, "%%");
			q++;
			continue;
		}
		out[len++] = *q;
	}
	out[len] = 0;
	return out;
}

static void argv_free(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static char **argv_for(const struct lib_config *c, const char *node)
{
	int n = 0;
	char **argv;

	while (c->fence_argv[n])
		n++;
	if (!(argv = calloc(n + 1, sizeof(*argv))))
		return NULL;
	for (int i = 0; i < n; i++)
		if (!(argv[i] = subst(c->fence_argv[i], node))) {
			argv_free(argv);
			return NULL;
		}
	return argv;
}

/*
 * The child: stdin from /dev/null, stdout to the librarian's stderr (its
 * log), its own process group (killed as one at the timeout), no signal
 * blocked or ignored that the librarian blocks or ignores.
 */
static int spawn(char **argv, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	int r;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGXFSZ);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	r = posix_spawn(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return -r;
}

static int start(struct lib_server *srv, int k, struct lib_err *e)
{
	const struct lib_config *c = srv->cfg;
	struct lib_fence_run *f = &srv->fence[k];
	char **argv = argv_for(c, c->nodes[k].name);
	int r;

	if (!argv)
		return lib_fail(e, ENOMEM, "out of memory");
	r = spawn(argv, &f->pid);
	if (r < 0) {
		lib_fail(
			e, EIO,
			"cannot fence node '%s': fence_command '%s' could not be started: %s; no takeover of its activations",
			c->nodes[k].name, argv[0], strerror(-r));
		lib_log("%s", e->msg);
		argv_free(argv);
		return -EIO;
	}
	lib_log("fencing node '%s' (its lease lapsed): running fence_command '%s' (pid %d, timeout %d s)",
		c->nodes[k].name, argv[0], (int)f->pid, c->fence_timeout);
	argv_free(argv);
	f->st = F_RUNNING;
	f->started = lib_mono_ms();
	f->heard = lib_node_heard_at(srv, k);
	return 0;
}

/* A child that ended: done or failed, and why. */
static void ended(struct lib_server *srv, int k, int status, bool timed_out)
{
	struct lib_fence_run *f = &srv->fence[k];
	const char *node = srv->cfg->nodes[k].name, *prog = srv->cfg->fence_argv[0];

	f->took = lib_mono_ms() - f->started;
	f->pid = 0;
	if (timed_out)
		snprintf(f->why, sizeof(f->why),
			 "timed out after %d s (fence_timeout) and was killed",
			 srv->cfg->fence_timeout);
	else if (WIFEXITED(status) && !WEXITSTATUS(status))
		f->st = F_DONE;
	else if (WIFEXITED(status))
		snprintf(f->why, sizeof(f->why), "exited with status %d after %lld ms",
			 WEXITSTATUS(status), (long long)f->took);
	else
		snprintf(f->why, sizeof(f->why), "was killed by signal %d after %lld ms",
			 WTERMSIG(status), (long long)f->took);
	if (f->st == F_DONE) {
		lib_log("node '%s' is fenced: fence_command '%s' succeeded after %lld ms", node,
			prog, (long long)f->took);
		return;
	}
	f->st = F_FAILED;
	lib_log("fencing node '%s' failed: fence_command '%s' %s: no takeover of its activations",
		node, prog, f->why);
}

/* Reap what ended and kill what ran past fence_timeout (each round of the loop). */
void lib_fence_poll(struct lib_server *srv)
{
	const struct lib_config *c = srv->cfg;
	int status;

	for (int k = 0; c->fence_argv && k < c->nnodes; k++) {
		struct lib_fence_run *f = &srv->fence[k];
		pid_t pid = f->pid;

		if (f->st != F_RUNNING)
			continue;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			ended(srv, k, status, false);
		} else if (lib_mono_ms() - f->started >= (int64_t)c->fence_timeout * 1000) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0); /* killed: it ends now */
			ended(srv, k, status, true);
		}
	}
}

static int refuse_running(struct req *rq, int k, const char *what)
{
	const struct lib_fence_run *f = &rq->srv->fence[k];
	char ran[24];

	return FAIL(
		rq, EBUSY,
		"cannot %s yet: node '%s' is no longer live and is being fenced: fence_command '%s' (pid %d) running for %s s of fence_timeout %d s; ask again",
		what, rq->c->nodes[k].name, rq->c->fence_argv[0], (int)f->pid,
		lib_secs(lib_mono_ms() - f->started, ran, sizeof(ran)), rq->c->fence_timeout);
}

/* Its children reaped, and a fence of node k that it heard since spent. */
static struct lib_fence_run *fence_of(struct lib_server *srv, int k)
{
	struct lib_fence_run *f = &srv->fence[k];

	lib_fence_poll(srv);
	if (f->st == F_DONE && f->heard != lib_node_heard_at(srv, k))
		f->st = F_IDLE; /* heard since its fence: that fence is spent */
	return f;
}

/*
 * Node k is no longer live: 0 if it is fenced (or no fence_command is set),
 * else EBUSY while its fence runs (started here if it does not) or EIO once
 * the fence failed. what: "take over shelf 's1'", "set node 'n1' offline".
 */
int lib_fence_require(struct req *rq, int k, const char *what)
{
	struct lib_fence_run *f;
	int r;

	if (!rq->c->fence_argv || k < 0)
		return 0;
	f = fence_of(rq->srv, k);
	switch (f->st) {
	case F_DONE:
		return 0;
	case F_RUNNING:
		return refuse_running(rq, k, what);
	case F_FAILED:
		f->st = F_IDLE; /* reported once; the next request runs it again */
		return FAIL(
			rq, EIO,
			"cannot %s: fencing node '%s' failed: fence_command '%s' %s; refused until a fence succeeds (ask again to run it again)",
			what, rq->c->nodes[k].name, rq->c->fence_argv[0], f->why);
	case F_IDLE:
		break;
	}
	if ((r = start(rq->srv, k, &rq->err)) < 0)
		return r;
	return refuse_running(rq, k, what);
}

/*
 * For lib_fence_settle (a node set offline while live, now no longer
 * live): true once it is fenced or no fence_command is set. Else its fence
 * is started, and after a failure started again fence_timeout later.
 */
bool lib_fence_settled(struct lib_server *srv, int k)
{
	struct lib_fence_run *f;
	struct lib_err e;

	if (!srv->cfg->fence_argv)
		return true;
	f = fence_of(srv, k);
	if (f->st == F_FAILED &&
	    lib_mono_ms() - f->started - f->took >= (int64_t)srv->cfg->fence_timeout * 1000)
		f->st = F_IDLE;
	if (f->st == F_IDLE)
		start(srv, k, &e);
	return f->st == F_DONE;
}

/* At the end: a fence still running is killed (it would be refused anyway). */
void lib_fence_free(struct lib_server *srv)
{
	int status;

	for (int k = 0; srv->fence && k < srv->cfg->nnodes; k++)
		if (srv->fence[k].st == F_RUNNING) {
			kill(-srv->fence[k].pid, SIGKILL);
			waitpid(srv->fence[k].pid, &status, 0);
		}
	free(srv->fence);
	srv->fence = NULL;
}
