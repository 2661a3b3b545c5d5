// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's side of front.c: run an lfsvol command for a local root
 * client, in a fork of the agent, on the client's own terminal.
 *
 * The agent checks the request and forks the command: the command process
 * takes the client's descriptors as 0, 1 and 2, its working directory and
 * environment, and runs lfsvol_main() as a fresh lfsvol would (it reaches
 * the librarian through agent.sock, like any lfsvol). A thread in the
 * command process watches the client's connection: it raises the signals
 * the client passes on, and SIGTERM if the client goes away. The command
 * sends its own exit status when lfsvol_main() returns; the agent, which
 * reaps it, sends the status otherwise (killed by a signal, or exit()
 * called elsewhere). One fork per command: forking the agent is the largest
 * part of a command's start-up under emulation, so the agent forks the
 * command process ahead of time (a spare, waiting on a socketpair) and
 * hands it the next request with the client's descriptors; it forks on the
 * spot only when no spare is ready.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "liblfs.h"
#include "lfsvol.h"
#include "run.h"

extern char **environ;

bool lfsvol_in_agent_run;
const char *lfsvol_run_agent_dir;
json_t *lfsvol_run_agent_info;
struct lfsvol_conf *lfsvol_run_agent_conf;
static struct stat agent_conf_st;

/* The agent's config, and the file's identity when it was read. */
void lfsvol_run_set_conf(struct lfsvol_ctx *ctx)
{
	if (ctx->conf && ctx->conf_stat_ok && !ctx->conf_borrowed) {
		agent_conf_st = ctx->conf_stat;
		lfsvol_run_agent_conf = ctx->conf;
	}
}

/*
 * In a command the agent runs: is path the agent's config file (same inode),
 * unchanged (size, modification time) since the agent read it? Then the
 * command uses the agent's parsed copy, as lfsvol-core would have read it.
 */
bool lfsvol_run_conf_same(const char *path)
{
	struct stat st;

	return lfsvol_run_agent_conf && !stat(path, &st) && st.st_dev == agent_conf_st.st_dev &&
	       st.st_ino == agent_conf_st.st_ino && st.st_size == agent_conf_st.st_size &&
	       st.st_mtim.tv_sec == agent_conf_st.st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == agent_conf_st.st_mtim.tv_nsec &&
	       st.st_ctim.tv_sec == agent_conf_st.st_ctim.tv_sec &&
	       st.st_ctim.tv_nsec == agent_conf_st.st_ctim.tv_nsec;
}

int lfsvol_run_listen(const char *state_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run.sock", state_dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path);
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		int r = -errno;

		umask(old);
		close(fd);
		return r;
	}
	umask(old);
	return fd;
}

void lfsvol_run_unlink(const char *state_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/run.sock", state_dir);
	unlink(path);
}

struct run_req {
	int fd;		/* the client's connection */
	int fds[3];	/* its stdin, stdout, stderr */
	int done[2];	/* the agent has counted the command (a byte, or EOF) */
	char *buf;
	uint32_t len;	/* of buf */
	char **argv, **envp;
	int argc;
	const char *cwd;
};

static void req_free(struct run_req *q)
{
	if (q->fd >= 0)
		close(q->fd);
	for (int i = 0; i < 3; i++)
		if (q->fds[i] >= 0)
			close(q->fds[i]);
	for (int i = 0; i < 2; i++)
		if (q->done[i] >= 0)
			close(q->done[i]);
	free(q->buf);
	free(q->argv);
	free(q->envp);
}

static int recv_full(int fd, void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t n = recv(fd, c, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* q->buf holds len bytes: cwd, then argc arguments, then envc variables. */
static int req_split(struct run_req *q, uint32_t argc, uint32_t envc, uint32_t len)
{
	uint32_t n = 0;

	q->argv = calloc(argc + 1, sizeof(char *));
	q->envp = calloc(envc + 1, sizeof(char *));
	if (!q->argv || !q->envp)
		return -ENOMEM;
	if (!len || q->buf[len - 1])
		return -EPROTO;
	/* exactly that many strings */
	for (char *p = q->buf; p < q->buf + len; p += strlen(p) + 1, n++) {
		if (n == 0)
			q->cwd = p;
		else if (n <= argc)
			q->argv[n - 1] = p;
		else if (n <= argc + envc)
			q->envp[n - 1 - argc] = p;
	}
	if (n != 1 + argc + envc)
		return -EPROTO;
	q->argc = (int)argc;
	q->len = len;
	return 0;
}

/* Read and check a request; 0 if it can run. Bounded by SO_RCVTIMEO. */
static int req_read(struct run_req *q)
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct lfsvol_run_hdr h;
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct timeval tv = { 2, 0 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct cmsghdr *c;
	uint32_t argc, envc, len;
	ssize_t got;

	if (getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.uid != 0)
		return -EPERM;
	setsockopt(q->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	got = recvmsg(q->fd, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(3 * sizeof(int)) && q->fds[0] < 0)
			memcpy(q->fds, CMSG_DATA(c), sizeof(q->fds));
	}
	if (got != (ssize_t)sizeof(h) || (m.msg_flags & MSG_CTRUNC) || q->fds[0] < 0 ||
	    memcmp(h.magic, LFSVOL_RUN_MAGIC, sizeof(h.magic)))
		return -EPROTO;
	argc = ntohl(h.argc);
	envc = ntohl(h.envc);
	len = ntohl(h.len);
	if (argc < 1 || argc > LFSVOL_RUN_MAX_ARGS || envc > LFSVOL_RUN_MAX_ARGS ||
	    len < 1 || len > LFSVOL_RUN_MAX)
		return -E2BIG;
	q->buf = malloc(len);
	if (!q->buf)
		return -ENOMEM;
	if (recv_full(q->fd, q->buf, len))
		return -EPROTO;
	return req_split(q, argc, envc, len);
}

/* Move fd to a number >= 10 (so that 0-3 can be laid out freely). */
static int high(int fd)
{
	int h = fcntl(fd, F_DUPFD, 10);

	return h < 0 ? fd : h;
}

static void send_status(int conn, int code)
{
	unsigned char st[4] = { (unsigned char)(code >> 24), (unsigned char)(code >> 16),
				(unsigned char)(code >> 8), (unsigned char)code };

	send(conn, st, sizeof(st), MSG_NOSIGNAL);
}

/* Set once the command sends its status: the client leaving is no news then. */
static atomic_bool command_done;

/*
 * In the command: the client's signals, and its going away. A spare starts
 * this thread while it waits for its request (thread creation costs over a
 * millisecond under emulation), and run_command() hands it the connection.
 */
static sem_t watch_go;
static int watch_conn = -1;
static bool watcher_started;

static void *watch_client(void *arg)
{
	sigset_t all;
	unsigned char b;
	int conn;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);	/* signals are the main thread's */
	while (sem_wait(&watch_go) && errno == EINTR)
		;
	conn = watch_conn;
	for (;;) {
		ssize_t n = recv(conn, &b, 1, 0);

		if (n == 1) {
			if (b == SIGINT || b == SIGTERM || b == SIGHUP || b == SIGQUIT)
				kill(getpid(), b);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* the client is gone: so is whoever wanted this command */
		if (!atomic_load(&command_done))
			kill(getpid(), SIGTERM);
		return NULL;
	}
}

static int watcher_start(void)
{
	pthread_t t;
	int r;

	if (watcher_started)
		return 0;
	if (sem_init(&watch_go, 0, 0))
		return errno;
	r = pthread_create(&t, NULL, watch_client, NULL);
	if (r)
		return r;
	pthread_detach(t);
	watcher_started = true;
	return 0;
}

/*
 * A spare's netlink session to lfs.ko, opened while it waits, and the range
 * of descriptors it holds (kept when the command lays out its own).
 */
static struct lfs_client *prepared_drv;
static int keep_lo = -1, keep_hi = -1;

struct lfs_client *lfsvol_run_take_drv(void)
{
	struct lfs_client *c = prepared_drv;

	prepared_drv = NULL;
	if (c && lfs_client_stale(c)) {
		lfsvol_trace("prepared netlink session is stale (a family changed)");
		lfs_client_close(c);
		c = NULL;
	}
	return c;
}

static void run_command(struct run_req *q)
{
	static const sigset_t none;
	struct rusage ru0;
	int conn, done, fds[3], r;
	char c;

	/* descriptors: the client's as 0-2, the connection as 3, nothing else */
	conn = high(q->fd);
	done = q->done[0] >= 0 ? high(q->done[0]) : -1;
	for (int i = 0; i < 3; i++)
		fds[i] = high(q->fds[i]);
	for (int i = 0; i < 3; i++)
		dup2(fds[i], i);
	dup2(conn, 3);
	if (done >= 0)
		dup2(done, 4);
	if (keep_lo > 4) {
		/* the prepared session's descriptors (the spare put them above 4) */
		close_range(done >= 0 ? 5 : 4, (unsigned int)keep_lo - 1, 0);
		close_range((unsigned int)keep_hi + 1, ~0U, 0);
	} else {
		close_range(done >= 0 ? 5 : 4, ~0U, 0);
	}
	conn = 3;
	done = done >= 0 ? 4 : -1;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);	/* the agent's handler writes to a pipe closed here */
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (send(conn, "A", 1, MSG_NOSIGNAL) != 1)
		_exit(LFSVOL_EFAIL);
	watch_conn = conn;
	r = watcher_start();
	if (!r)
		sem_post(&watch_go);
	if (r) {
		fprintf(stderr, "lfsvol: the node agent cannot watch this command: %s\n",
			strerror(r));
		send_status(conn, LFSVOL_EFAIL);
		_exit(LFSVOL_EFAIL);
	}
	if (chdir(q->cwd)) {
		fprintf(stderr, "lfsvol: cannot enter the working directory %s: %s\n", q->cwd,
			strerror(errno));
		send_status(conn, LFSVOL_EFAIL);
		_exit(LFSVOL_EFAIL);
	}
	environ = q->envp;
	/* the agent flushed before forking: decide buffering for the new stdout */
	setvbuf(stdout, NULL, isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
	optind = 0;
	lfsvol_in_agent_run = true;
	getrusage(RUSAGE_SELF, &ru0);
	r = lfsvol_main(q->argc, q->argv);
	if (lfsvol_tracing) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		lfsvol_trace("command: %ld page faults", ru.ru_minflt - ru0.ru_minflt);
	}
	/*
	 * Not exit(): the agent's atexit handlers (OpenSSL's clean-up) would
	 * walk and free the agent's memory, copying every page they touch.
	 */
	fflush(NULL);
	/* the agent has written agent.json (or is gone) */
	while (done >= 0 && read(done, &c, 1) < 0 && errno == EINTR)
		;
	atomic_store(&command_done, true);
	send_status(conn, r);
	_exit(r);
}

/* SIGCHLD in the agent: wake its loop to reap (lfsvol_run_child_fd()). */
static int child_pipe[2] = { -1, -1 };

static void on_child(int sig)
{
	int e = errno;

	(void)sig;
	if (write(child_pipe[1], "c", 1) < 0) {
		/* full: a wake-up is pending already */
	}
	errno = e;
}

/* A descriptor that becomes readable when a command ends; -1 if none. */
int lfsvol_run_child_fd(void)
{
	struct sigaction sa = { .sa_handler = on_child, .sa_flags = SA_RESTART | SA_NOCLDSTOP };

	if (child_pipe[0] >= 0)
		return child_pipe[0];
	if (pipe2(child_pipe, O_CLOEXEC | O_NONBLOCK))
		return -1;
	sigaction(SIGCHLD, &sa, NULL);
	return child_pipe[0];
}

/* Commands running, with their clients' connections (for the status). */
#define RUN_MAX 64
static struct {
	pid_t pid;
	int conn;
} running[RUN_MAX];
static int nrunning;

/*
 * The spare: a command process forked before its request. It waits on the
 * agent's run.sock itself (the agent does not poll the socket while a
 * spare waits), so a request reaches the process that runs it in one hop:
 * the spare accepts, checks and reads it, sends the agent the client's
 * connection and the write end of the done pipe over their socketpair
 * ("taken"), and runs the command exactly as a fresh fork would. It was
 * forked with the agent's librarian info; the agent retires it (closes the
 * socketpair) when that changes.
 */
static pid_t spare_pid = -1;
static int spare_fd = -1;	/* the agent's end */
static long long spare_runs;	/* commands run by a spare */

static void spare_forget(bool kill_it);

/* The agent's info when the spare was forked (a reference: never reused meanwhile). */
static json_t *spare_info;

/* Send a byte with descriptors (SCM_RIGHTS). */
static int send_fds(int fd, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { "T", 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	ssize_t r;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	do
		r = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

static __attribute__((noreturn)) void spare_wait(int sfd, int rfd, pid_t agent)
{
	struct run_req q = { .fd = -1, .fds = { -1, -1, -1 }, .done = { -1, -1 } };
	int done[2], give[2];

	/* die with the agent, and hold none of its descriptors (its lock) meanwhile */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != agent)
		_exit(0);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	/* 3: the socketpair, 4: run.sock; the prepared session goes above */
	sfd = high(sfd);
	rfd = high(rfd);
	dup2(sfd, 3);
	dup2(rfd, 4);
	close_range(5, ~0U, 0);
	if (!lfs_client_open_watched(&prepared_drv))
		lfs_client_fds(prepared_drv, &keep_lo, &keep_hi);
	if (prepared_drv && keep_lo <= 4) {
		lfs_client_close(prepared_drv);
		prepared_drv = NULL;
		keep_lo = keep_hi = -1;
	}
	watcher_start();
	lfsvol_trace("run: spare prepared");
	for (;;) {
		struct pollfd p[2] = { { .fd = 3, .events = POLLIN }, { .fd = 4, .events = POLLIN } };
		int r;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		if (p[0].revents)
			_exit(0);	/* the agent retired this spare, or is gone */
		if (!(p[1].revents & POLLIN))
			continue;
		q.fd = accept4(4, NULL, NULL, SOCK_CLOEXEC);
		if (q.fd < 0)
			continue;
		lfsvol_trace("run: spare accepted");
		r = req_read(&q);
		if (!r)
			break;
		/* the front end runs the command itself */
		send(q.fd, "R", 1, MSG_NOSIGNAL);
		req_free(&q);
		q = (struct run_req){ .fd = -1, .fds = { -1, -1, -1 }, .done = { -1, -1 } };
	}
	/*
	 * Taken: the agent counts the command and answers on the done pipe;
	 * should it not get the message, the pipe reads EOF and nothing waits.
	 */
	if (pipe2(done, O_CLOEXEC) == 0) {
		give[0] = q.fd;
		give[1] = done[1];
		send_fds(3, give, 2);
		close(done[1]);
		q.done[0] = done[0];
	}
	lfsvol_trace("run: spare took the request");
	run_command(&q);
	_exit(LFSVOL_EFAIL);
}

/*
 * In the agent's loop: fork a spare if there is none, and no command runs:
 * the fork would take CPU time from the command (two vCPUs here, with the
 * command's own udev work). A spare forked with other librarian info than
 * the agent's current one is retired first.
 */
void lfsvol_run_prepare(int rfd)
{
	pid_t agent = getpid(), pid;
	int sv[2];

	if (spare_pid > 0 && lfsvol_run_agent_info != spare_info)
		spare_forget(false);
	if (spare_pid > 0 || nrunning > 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		spare_wait(sv[1], rfd, agent);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return;
	}
	spare_pid = pid;
	spare_fd = sv[0];
	spare_info = json_incref(lfsvol_run_agent_info);
	lfsvol_trace("run: spare %d forked", (int)pid);
}

/* Closing its socketpair retires the spare: it exits unless it took a request. */
static void spare_forget(bool kill_it)
{
	if (kill_it && spare_pid > 0)
		kill(spare_pid, SIGKILL);	/* reaped as an unknown child */
	if (spare_fd >= 0)
		close(spare_fd);
	spare_fd = -1;
	spare_pid = -1;
	json_decref(spare_info);
	spare_info = NULL;
}

/* The agent is stopping: the spare sees its socket close and exits. */
void lfsvol_run_stop(void)
{
	pid_t pid = spare_pid;

	spare_forget(false);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

long long lfsvol_run_spare_runs(void)
{
	return spare_runs;
}

/* For the agent's poll: the spare's socketpair (-1: none; then poll run.sock). */
int lfsvol_run_spare_fd(void)
{
	return spare_fd;
}

/*
 * The spare's socketpair is readable: it took a request (its connection
 * and the done pipe come along), or it is gone. started and counted as
 * for lfsvol_run_accept().
 */
void lfsvol_run_taken(void (*started)(void *), void (*counted)(void *), void *arg)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fds[2] = { -1, -1 };
	ssize_t n;

	do
		n = recvmsg(spare_fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	c = CMSG_FIRSTHDR(&m);
	if (n == 1 && c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(fds)))
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
	if (fds[0] < 0 || nrunning == RUN_MAX) {
		/* gone before any request (reaped as unknown), or nowhere to keep it */
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		spare_forget(false);
		return;
	}
	started(arg);
	running[nrunning].pid = spare_pid;
	running[nrunning].conn = fds[0];
	nrunning++;
	spare_runs++;
	counted(arg);
	if (write(fds[1], "c", 1) < 0) {
		/* the command is gone already */
	}
	close(fds[1]);
	spare_forget(false);
	lfsvol_trace("run: spare's command counted");
}

/*
 * Without a spare (a command runs, or the fork failed): accept here and
 * fork the command on the spot. started: before the fork (what it
 * inherits); counted: after, while the command runs (agent.json), and the
 * command waits for it before it ends, so that a client sees the count
 * once the command is done.
 */
int lfsvol_run_accept(int rfd, void (*started)(void *), void (*counted)(void *), void *arg)
{
	struct run_req q = { .fds = { -1, -1, -1 }, .done = { -1, -1 } };
	pid_t pid;
	int r;

	q.fd = accept4(rfd, NULL, NULL, SOCK_CLOEXEC);
	if (q.fd < 0)
		return -errno;
	lfsvol_trace("run: accepted");
	r = req_read(&q);
	if (!r && nrunning == RUN_MAX)
		r = -EAGAIN;
	if (r) {
		/* the front end runs the command itself */
		send(q.fd, "R", 1, MSG_NOSIGNAL);
		req_free(&q);
		return r;
	}
	lfsvol_trace("run: request read");
	started(arg);
	if (pipe2(q.done, O_CLOEXEC)) {
		q.done[0] = q.done[1] = -1;
		counted(arg);	/* no pipe: count before the command runs */
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		run_command(&q);
	if (q.done[1] >= 0) {
		counted(arg);
		if (write(q.done[1], "c", 1) < 0) {
			/* the command is gone already */
		}
	}
	if (pid < 0) {
		r = -errno;
		send(q.fd, "R", 1, MSG_NOSIGNAL);
	} else {
		running[nrunning].pid = pid;
		running[nrunning].conn = q.fd;
		nrunning++;
		q.fd = -1;
	}
	lfsvol_trace("run: command forked");
	req_free(&q);
	return r ? r : 1;
}

/*
 * Reap finished commands, and send each one's status to its client: a
 * command that returned from lfsvol_main() sent it already (the client has
 * read it and gone, or reads the same 4 bytes first), one killed by a
 * signal could not. Returns how many were reaped.
 */
int lfsvol_run_reap(void)
{
	int n = 0, status, code;
	char drain[64];
	pid_t pid;

	if (child_pipe[0] >= 0)
		while (read(child_pipe[0], drain, sizeof(drain)) > 0)
			;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		n++;
		if (pid == spare_pid)
			spare_forget(false);	/* it died before any request */
		for (int i = 0; i < nrunning; i++) {
			if (running[i].pid != pid)
				continue;
			if (WIFEXITED(status)) {
				code = WEXITSTATUS(status);
			} else {
				code = (int)(LFSVOL_RUN_SIGNALED | (unsigned int)WTERMSIG(status));
				lfsvol_err("command process %d ended by signal %d (%s)", (int)pid,
					   WTERMSIG(status), strsignal(WTERMSIG(status)));
			}
			send_status(running[i].conn, code);
			close(running[i].conn);
			running[i] = running[--nrunning];
			break;
		}
	}
	return n;
}
