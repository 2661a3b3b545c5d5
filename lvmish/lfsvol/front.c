// SPDX-License-Identifier: GPL-2.0
/*
 * lfsvol, the command users run: a small front end that hands the command
 * to the running node agent, or else runs lfsvol-core itself.
 *
 * Why: every lfsvol command costs a process start, and lfsvol-core loads
 * OpenSSL, libnl, libblkid, libconfig and jansson and opens a librarian
 * session. Under emulation that start-up cost more than the work. The agent
 * has all of it loaded and a session open: it forks, and the fork runs the
 * command with this process's standard input, output and error (passed over
 * the socket), arguments, environment and working directory; its exit status
 * comes back as ours. The result is the same as running lfsvol-core here.
 *
 * This program links only the C library. Protocol (STATE_DIR/run.sock, see
 * run.c): the request is struct lfsvol_run_hdr followed by the working
 * directory, the arguments and the environment, each NUL-terminated, with
 * fds 0, 1 and 2 attached (SCM_RIGHTS). The agent answers 'A' (running) or
 * 'R' (refused: we run lfsvol-core instead), and when the command ends its
 * exit status, 4 bytes big-endian. A signal that would end us (INT, TERM,
 * HUP, QUIT) is sent on as one byte, the signal number, to the command;
 * if we die anyway, the agent sees the socket close and ends the command.
 *
 * `lfsvol agent' always runs lfsvol-core here, as does everything when
 * LFSVOL_NO_AGENT is set or no agent listens on /run/lfs/run.sock (an agent
 * with another state_dir is not found by this front end: the command then
 * runs directly and still uses that agent's librarian session).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

extern char **environ;

static int sigpipe_fds[2] = { -1, -1 };
static bool tracing;

/* LFSVOL_TRACE=1: the same timestamps as lfsvol_trace() in the command. */
static void trace(const char *what)
{
	struct timespec ts;

	if (!tracing)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "lfsvol: trace %lld.%03ld ms [%d] front end: %s\n",
		(long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, (ts.tv_nsec / 1000) % 1000,
		(int)getpid(), what);
}

/* lfsvol-core: next to us in a build tree, ../libexec/lfs/ when installed */
static void exec_core(char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/lfsvol-core", self);
			if (access(path, X_OK) == 0)
				execv(path, argv);
			snprintf(path, sizeof(path), "%s/../libexec/lfs/lfsvol-core", self);
			if (access(path, X_OK) == 0)
				execv(path, argv);
		}
	}
	execv(LFSVOL_CORE_PATH, argv);
	fprintf(stderr, "lfsvol: cannot run %s: %s\n", LFSVOL_CORE_PATH, strerror(errno));
	exit(1);
}

/* The command word, skipping the global options (as main.c's getopt_long sees them). */
static const char *command_word(int argc, char **argv)
{
	static const char *const takes_arg[] = { "config", "librarian" };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-c")) {
			i++;
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && a[2] && !strchr(a, '=')) {
			for (size_t k = 0; k < sizeof(takes_arg) / sizeof(takes_arg[0]); k++)
				if (!strncmp(takes_arg[k], a + 2, strlen(a + 2))) {
					i++;
					break;
				}
			continue;
		}
		if (a[0] == '-')
			continue;
		return a;
	}
	return NULL;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;

	if (*len + n > LFSVOL_RUN_MAX)
		return -1;
	if (*len + n > *cap) {
		size_t c = (*cap ? *cap * 2 : 4096);
		char *p;

		while (c < *len + n)
			c *= 2;
		p = realloc(*buf, c);
		if (!p)
			return -1;
		*buf = p;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	return 0;
}

static int send_request(int fd, int argc, char **argv)
{
	struct lfsvol_run_hdr h = { .magic = LFSVOL_RUN_MAGIC };
	char cwd[PATH_MAX], *buf = NULL, cbuf[CMSG_SPACE(3 * sizeof(int))];
	size_t len = 0, cap = 0, envc = 0;
	int fds[3] = { 0, 1, 2 }, r = -1;
	struct iovec iov[2];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	if (!getcwd(cwd, sizeof(cwd)) || append(&buf, &len, &cap, cwd))
		goto out;
	for (int i = 0; i < argc; i++)
		if (append(&buf, &len, &cap, argv[i]))
			goto out;
	for (char **e = environ; e && *e; e++, envc++)
		if (append(&buf, &len, &cap, *e))
			goto out;
	h.argc = htonl((uint32_t)argc);
	h.envc = htonl((uint32_t)envc);
	h.len = htonl((uint32_t)len);
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ buf, len };
	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	n = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (n < 0)
		goto out;
	/* the rest, if the socket took only part (no descriptors again) */
	for (size_t done = (size_t)n; done < sizeof(h) + len;) {
		size_t off = done < sizeof(h) ? 0 : done - sizeof(h);

		if (done < sizeof(h))
			n = send(fd, (char *)&h + done, sizeof(h) - done, MSG_NOSIGNAL);
		else
			n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			goto out;
		done += (size_t)n;
	}
	r = 0;
out:
	free(buf);
	return r;
}

static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(sigpipe_fds[1], &b, 1) < 0) {
		/* nothing to do: the pipe is full of signals already */
	}
	errno = saved;
}

static int read_full(int fd, void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t n = read(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *cmd = command_word(argc, argv), *sock = getenv("LFSVOL_AGENT_SOCKET");
	unsigned char st[4], answer;
	bool forwarded[64] = { false };
	struct sigaction act = { .sa_handler = on_signal };
	const char *tr = getenv("LFSVOL_TRACE");
	int fd;

	tracing = tr && *tr && strcmp(tr, "0");
	trace("starts");
	if ((cmd && !strcmp(cmd, "agent")) || getenv("LFSVOL_NO_AGENT"))
		exec_core(argv);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock && *sock ? sock : LFSVOL_RUN_SOCKET);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send_request(fd, argc, argv) || read_full(fd, &answer, 1) || answer != 'A') {
		/* no agent, or it declined before running anything: run it here */
		if (fd >= 0)
			close(fd);
		exec_core(argv);
	}
	trace("the agent took the command");
	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) == 0)
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &act, NULL);
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sigpipe_fds[0], .events = POLLIN } };
		unsigned char b;

		if (poll(p, sigpipe_fds[0] >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents & POLLIN) {
			while (read(sigpipe_fds[0], &b, 1) == 1) {
				forwarded[b & 63] = true;
				send(fd, &b, 1, MSG_NOSIGNAL);
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			uint32_t code;

			if (read_full(fd, st, sizeof(st)))
				break;
			trace("exit status received");
			code = (uint32_t)st[0] << 24 | (uint32_t)st[1] << 16 | (uint32_t)st[2] << 8 | st[3];
			if (!(code & LFSVOL_RUN_SIGNALED))
				return (int)code;
			/* ended by a signal: say so unless it was ours, passed on */
			code &= 0xff;
			if (!forwarded[code & 63])
				fprintf(stderr, "lfsvol: the command was ended by signal %u (%s) in the node agent; its log may say why\n",
					code, strsignal((int)code));
			return 128 + (int)code;
		}
	}
	fprintf(stderr, "lfsvol: the node agent ended the command without an exit status (see its log)\n");
	return 1;
}
