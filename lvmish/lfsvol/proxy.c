// SPDX-License-Identifier: GPL-2.0
/*
 * The librarian session as lfsvol sees it (struct lv_lib): either a direct
 * TLS session (liblfsclient), or the running agent's session, reached over
 * STATE_DIR/agent.sock (mode 0600, root only).
 *
 * Why: the agent keeps one librarian session for the node. Under emulation a
 * fresh OpenSSL context and TLS handshake cost several hundred milliseconds
 * per command; through the agent a command costs one local round trip per
 * librarian request. Without an agent everything works the same, directly.
 *
 * The agent socket speaks the librarian's framing (4-byte big-endian length,
 * one JSON object): requests {"op": OP, "args": {...}}, replies
 * {"ok": true, "result": ...} or {"ok": false, "errno": E, "message": M}.
 * The special op "agent.info" returns the librarian's auth reply.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lfs_librarian.h"
#include "lfsvol.h"

#define PROXY_MAX_MSG (64U << 20)
#define PROXY_TIMEOUT_MS 30000

struct lv_lib {
	struct lfs_lib *direct;
	int fd;
	json_t *info;
	char err[512];
};

/* Wait for fd to be ready, bounded. */
static int wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r = poll(&p, 1, ms);

	if (r == 0)
		return -ETIMEDOUT;
	return r < 0 ? -errno : 0;
}

static int io_all(int fd, void *buf, size_t len, bool wr, int ms)
{
	char *p = buf;

	while (len) {
		ssize_t n;
		int r = wait_fd(fd, wr ? POLLOUT : POLLIN, ms);

		if (r)
			return r;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int lfsvol_msg_send(int fd, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	uint32_t len;
	int r;

	if (!s)
		return -ENOMEM;
	len = htonl((uint32_t)strlen(s));
	r = io_all(fd, &len, sizeof(len), true, PROXY_TIMEOUT_MS);
	if (!r)
		r = io_all(fd, s, strlen(s), true, PROXY_TIMEOUT_MS);
	free(s);
	return r;
}

int lfsvol_msg_recv(int fd, json_t **msg, int ms)
{
	uint32_t len;
	char *buf;
	int r;

	*msg = NULL;
	r = io_all(fd, &len, sizeof(len), false, ms);
	if (r)
		return r;
	len = ntohl(len);
	if (len > PROXY_MAX_MSG)
		return -EMSGSIZE;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	r = io_all(fd, buf, len, false, PROXY_TIMEOUT_MS);
	if (!r) {
		*msg = json_loadb(buf, len, 0, NULL);
		if (!json_is_object(*msg)) {
			json_decref(*msg);
			*msg = NULL;
			r = -EBADMSG;
		}
	}
	free(buf);
	return r;
}

static int agent_call(struct lv_lib *l, const char *op, json_t *args, json_t **result)
{
	json_t *req = json_pack("{s:s,s:O?}", "op", op, "args", args), *rep = NULL;
	int r;

	if (!req)
		return -ENOMEM;
	r = lfsvol_msg_send(l->fd, req);
	json_decref(req);
	if (!r)
		r = lfsvol_msg_recv(l->fd, &rep, PROXY_TIMEOUT_MS);
	if (r) {
		snprintf(l->err, sizeof(l->err), "lost the node agent's socket: %s", strerror(-r));
		return r;
	}
	if (json_is_true(json_object_get(rep, "ok"))) {
		if (result)
			*result = json_incref(json_object_get(rep, "result"));
		json_decref(rep);
		return 0;
	}
	r = -(int)json_integer_value(json_object_get(rep, "errno"));
	snprintf(l->err, sizeof(l->err), "%s",
		 json_string_value(json_object_get(rep, "message")) ?: "error");
	json_decref(rep);
	return r < 0 ? r : -EPROTO;
}

/* Connect to the agent's socket; 0 if it answered agent.info. */
static int agent_connect(const char *state_dir, struct lv_lib *l)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int r;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock", state_dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return -errno;
	if (connect(l->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		r = -errno;
		goto fail;
	}
	r = agent_call(l, "agent.info", NULL, &l->info);
	if (!r)
		return 0;
fail:
	close(l->fd);
	l->fd = -1;
	return r;
}

int lv_open_agent(const char *state_dir, struct lv_lib **out)
{
	struct lv_lib *l = calloc(1, sizeof(*l));
	int r;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	r = geteuid() == 0 ? agent_connect(state_dir, l) : -EPERM;
	if (r) {
		free(l);
		return r;
	}
	*out = l;
	return 0;
}

int lv_open(const struct lfs_lib_opts *o, struct lv_lib **out, char **errmsg)
{
	struct lv_lib *l = calloc(1, sizeof(*l));
	int r;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->fd = -1;
	r = lfs_lib_connect(o, &l->direct, errmsg);
	if (r) {
		free(l);
		return r;
	}
	*out = l;
	return 0;
}

int lv_call(struct lv_lib *l, const char *op, json_t *args, json_t **result)
{
	int r;

	if (result)
		*result = NULL;
	if (l->fd >= 0)
		r = agent_call(l, op, args, result);
	else
		r = lfs_lib_call(l->direct, op, args, result);
	json_decref(args);
	return r;
}

json_t *lv_info(struct lv_lib *l)
{
	return l->fd >= 0 ? l->info : lfs_lib_server_info(l->direct);
}

const char *lv_errmsg(const struct lv_lib *l)
{
	return l->fd >= 0 ? l->err : lfs_lib_errmsg(l->direct);
}

void lv_close(struct lv_lib *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	json_decref(l->info);
	lfs_lib_close(l->direct);
	free(l);
}

bool lv_via_agent(const struct lv_lib *l)
{
	return l && l->fd >= 0;
}

/* ---- agent side ---- */

int lfsvol_agent_listen(const char *state_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock", state_dir) >=
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

/* A new client of agent.sock, or -1. */
int lfsvol_agent_accept(int lfd)
{
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/*
 * One request of a client whose socket is readable, forwarded on the
 * agent's own session: 0, or negative when the client is gone or broke
 * the framing (the caller closes it). A request while the agent has no
 * session gets ENOTCONN, and lfsvol reports it like an unreachable
 * librarian.
 */
int lfsvol_agent_serve_one(int fd, struct lv_lib *lib)
{
	json_t *req = NULL, *rep, *res = NULL;
	const char *op;
	int r = lfsvol_msg_recv(fd, &req, PROXY_TIMEOUT_MS);

	if (r)
		return r;
	op = json_string_value(json_object_get(req, "op"));
	if (!lib) {
		rep = json_pack("{s:b,s:i,s:s}", "ok", 0, "errno", ENOTCONN, "message",
				"the node agent has no librarian session right now");
	} else if (op && !strcmp(op, "agent.info")) {
		rep = json_pack("{s:b,s:O}", "ok", 1, "result", lv_info(lib));
	} else if (op) {
		json_t *args = json_object_get(req, "args");

		if (!json_is_object(args))
			args = NULL;	/* "args": null means none */

		r = lv_call(lib, op, json_incref(args), &res);
		if (!r)
			rep = json_pack("{s:b,s:o?}", "ok", 1, "result", res);
		else
			rep = json_pack("{s:b,s:i,s:s}", "ok", 0, "errno", -r, "message",
					lv_errmsg(lib));
	} else {
		rep = json_pack("{s:b,s:i,s:s}", "ok", 0, "errno", EINVAL, "message",
				"request without \"op\"");
	}
	json_decref(req);
	r = rep ? lfsvol_msg_send(fd, rep) : -ENOMEM;
	json_decref(rep);
	return r;
}
