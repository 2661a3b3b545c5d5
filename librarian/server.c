// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop: one thread, epoll, non-blocking sockets and TLS. A
 * connection only costs the server when it has a complete request; a slow or
 * stalled client holds nothing but its own buffers (bounded), so no request
 * waits behind it. Requests on one connection are answered in order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "librarian.h"
#include "server.h"
#include "tlspsk.h"

#define OUT_HIGH (4U << 20) /* stop reading requests while this much is unsent */
#define PUMP_ROUNDS 64

enum conn_state { C_HANDSHAKE, C_OPEN, C_CLOSING };

struct conn {
	int fd;
	SSL *ssl;
	enum conn_state state;
	struct lib_identity who;
	bool authed;
	bool psk_ok;
	char peer[80];
	uint8_t *in;
	size_t inlen;
	uint8_t *out;
	size_t outlen, outoff, outcap;
	int64_t last_active;
	uint32_t events;
	bool ready; /* has buffered work that epoll will not report */
	bool dirty; /* on the list of connections to flush this round */
	int batch_replies; /* replies queued in the open group-commit round */
};

struct listener {
	int fd;
	bool is_unix;
	char *path;
	char *addr;
};

struct srv {
	struct lib_server core;
	int ep, sigfd;
	SSL_CTX *tls;
	struct listener ls[LIB_MAX_LISTEN];
	int nls;
	struct conn **conns; /* by fd */
	int maxfd;
	int verbose;
	int64_t last_reject_log;
	int *dirty; /* fds to flush after this round's commit */
	int ndirty;
};

static struct srv *the_srv; /* for the PSK callback */

void lib_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("librarian: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void set_events(struct srv *s, struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = c->fd };

	if (ev == c->events)
		return;
	c->events = ev;
	epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &e);
}

static void conn_close(struct srv *s, struct conn *c, const char *why)
{
	if (s->verbose && why)
		lib_log("%s (%s): closed: %s", c->peer, c->who.name[0] ? c->who.name : "-", why);
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->ssl)
		SSL_free(c->ssl);
	close(c->fd);
	s->conns[c->fd] = NULL;
	free(c->in);
	free(c->out);
	free(c);
	s->core.nconns--;
}

static int queue_reply(struct srv *s, struct conn *c, json_t *reply)
{
	char *txt = json_dumps(reply, JSON_COMPACT);
	size_t len, need;

	json_decref(reply);
	if (!txt)
		return -ENOMEM;
	len = strlen(txt);
	if (len > LFS_MAX_REPLY) {
		free(txt);
		reply = json_pack(
			"{s:i,s:n,s:b,s:{s:i,s:s,s:s}}", "v", 1, "id", "ok", 0, "error", "errno",
			EMSGSIZE, "code", "EMSGSIZE", "message",
			"the reply is larger than the protocol allows; ask for less (offset/limit)");
		txt = json_dumps(reply, JSON_COMPACT);
		json_decref(reply);
		if (!txt)
			return -ENOMEM;
		len = strlen(txt);
	}
	if (c->outoff && c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	need = c->outlen + 4 + len;
	if (need > c->outcap) {
		size_t cap = c->outcap ? c->outcap : 4096;
		uint8_t *n;

		if (c->outoff) {
			memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
			c->outlen -= c->outoff;
			c->outoff = 0;
			need = c->outlen + 4 + len;
		}
		while (cap < need)
			cap *= 2;
		n = realloc(c->out, cap);
		if (!n) {
			free(txt);
			return -ENOMEM;
		}
		c->out = n;
		c->outcap = cap;
	}
	c->out[c->outlen++] = len >> 24;
	c->out[c->outlen++] = len >> 16;
	c->out[c->outlen++] = len >> 8;
	c->out[c->outlen++] = len;
	memcpy(c->out + c->outlen, txt, len);
	c->outlen += len;
	free(txt);
	if (s->core.batch_open)
		c->batch_replies++;
	return 0;
}

static void queue_error(struct srv *s, struct conn *c, int err, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	queue_reply(s, c,
		    json_pack("{s:i,s:n,s:b,s:{s:i,s:s,s:s}}", "v", 1, "id", "ok", 0, "error",
			      "errno", err, "code", lfs_errno_name(err), "message", msg));
}

/* 1 = progress, 0 = would block, -1 = connection is dead */
static int conn_flush(struct conn *c)
{
	while (c->outoff < c->outlen) {
		size_t len = c->outlen - c->outoff;

		if (c->ssl) {
			size_t w = 0;
			int r = SSL_write_ex(c->ssl, c->out + c->outoff, len, &w);

			if (r == 1) {
				c->outoff += w;
				continue;
			}
			r = SSL_get_error(c->ssl, r);
			ERR_clear_error();
			if (r == SSL_ERROR_WANT_WRITE || r == SSL_ERROR_WANT_READ)
				return 0;
			return -1;
		} else {
			ssize_t n = send(c->fd, c->out + c->outoff, len, MSG_NOSIGNAL);

			if (n > 0) {
				c->outoff += n;
				continue;
			}
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			return -1;
		}
	}
	c->outoff = c->outlen = 0;
	return 1;
}

/* Answer every complete request in the input buffer (while output has room). */
static void conn_process(struct srv *s, struct conn *c)
{
	size_t off = 0;
	size_t max = s->core.cfg->max_message;
	int n = 0;

	while (c->state == C_OPEN && c->inlen - off >= 4 && c->outlen - c->outoff < OUT_HIGH) {
		if (n++ == 64) {
			c->ready = true; /* the rest waits for the next round */
			break;
		}
		uint8_t *p = c->in + off;
		uint32_t len = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
		json_t *reply;

		if (len > max) {
			queue_error(
				s, c, EMSGSIZE,
				"message of %u bytes is larger than max_message (%zu); closing the connection",
				len, max);
			c->state = C_CLOSING;
			break;
		}
		if (len == 0) {
			queue_error(s, c, EBADMSG, "empty message (length 0)");
			off += 4;
			continue;
		}
		if (c->inlen - off - 4 < len)
			break;
		reply = lib_handle_request(&s->core, &c->who, &c->authed, (const char *)p + 4, len);
		if (s->verbose)
			lib_log("%s (%s): %.*s -> %s", c->peer, c->who.name,
				(int)(len > 200 ? 200 : len), p + 4,
				json_is_true(json_object_get(reply, "ok")) ?
					"ok" :
					json_string_value(json_object_get(
						json_object_get(reply, "error"), "code")));
		if (!reply || queue_reply(s, c, reply) < 0) {
			c->state = C_CLOSING;
			break;
		}
		off += 4 + len;
	}
	if (off) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
}

/* Read what is available; 1 = got data, 0 = would block, -1 = EOF/error */
static int conn_read(struct srv *s, struct conn *c)
{
	size_t cap = s->core.cfg->max_message + 4;
	size_t room = cap - c->inlen;

	if (!room)
		return 0;
	if (c->ssl) {
		size_t got = 0;
		int r = SSL_read_ex(c->ssl, c->in + c->inlen, room, &got);

		if (r == 1) {
			c->inlen += got;
			return 1;
		}
		r = SSL_get_error(c->ssl, r);
		ERR_clear_error();
		if (r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE)
			return 0;
		return -1;
	} else {
		ssize_t n = recv(c->fd, c->in + c->inlen, room, 0);

		if (n > 0) {
			c->inlen += n;
			return 1;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1;
	}
}

/* 0 = still going or done, -1 = the connection was closed (c is gone) */
static int conn_handshake(struct srv *s, struct conn *c)
{
	int r = SSL_accept(c->ssl);

	if (r == 1) {
		if (!c->psk_ok) {
			conn_close(s, c, "handshake without a known pre-shared key");
			return -1;
		}
		c->state = C_OPEN;
		c->last_active = lib_now_mono();
		return 0;
	}
	r = SSL_get_error(c->ssl, r);
	if (r == SSL_ERROR_WANT_READ) {
		set_events(s, c, EPOLLIN);
	} else if (r == SSL_ERROR_WANT_WRITE) {
		set_events(s, c, EPOLLOUT);
	} else {
		unsigned long e = ERR_get_error();
		char buf[200] = "connection closed";
		int64_t now = lib_now_mono();

		if (e)
			ERR_error_string_n(e, buf, sizeof(buf));
		ERR_clear_error();
		if (now != s->last_reject_log) {
			/* at most one line a second: failed handshakes are cheap to send */
			lib_log("%s: TLS handshake refused%s%s: %s", c->peer,
				c->who.name[0] ? " for identity " : "", c->who.name, buf);
			s->last_reject_log = now;
		}
		conn_close(s, c, NULL);
		return -1;
	}
	return 0;
}

/* A whole request (or an oversize header to refuse) is buffered. */
static bool has_frame(struct srv *s, struct conn *c)
{
	uint32_t len;

	if (c->inlen < 4)
		return false;
	len = (uint32_t)c->in[0] << 24 | c->in[1] << 16 | c->in[2] << 8 | c->in[3];
	return len > s->core.cfg->max_message || c->inlen - 4 >= len;
}

static void mark_dirty(struct srv *s, struct conn *c)
{
	if (!c->dirty) {
		c->dirty = true;
		s->dirty[s->ndirty++] = c->fd;
	}
}

/*
 * Input half of a round: finish the handshake, read, answer requests. Replies
 * are only queued; they go out in conn_output() after the round's commit.
 */
static void conn_input(struct srv *s, struct conn *c)
{
	int rounds = 0;

	c->ready = false;
	if (c->state == C_HANDSHAKE) {
		if (conn_handshake(s, c) < 0 || c->state == C_HANDSHAKE)
			return;
	}
	mark_dirty(s, c);
	while (c->state == C_OPEN) {
		int r;

		if (c->outlen - c->outoff >= OUT_HIGH)
			return; /* slow reader: take no more requests from it */
		conn_process(s, c);
		if (c->ready || c->state != C_OPEN || c->outlen - c->outoff >= OUT_HIGH)
			return;
		if (++rounds > PUMP_ROUNDS) {
			c->ready = true; /* be fair to other connections */
			return;
		}
		r = conn_read(s, c);
		if (r > 0) {
			c->last_active = lib_now_mono();
			continue;
		}
		if (r < 0) {
			/* the peer may only have shut down its sending side: answer first */
			if (c->inlen)
				queue_error(
					s, c, EBADMSG,
					"truncated message: the connection ended %zu bytes into a message",
					c->inlen);
			c->state = C_CLOSING;
			return;
		}
		if (c->inlen < s->core.cfg->max_message + 4)
			return; /* would block */
	}
}

/* Output half, after the commit: send, close, or wait for the socket. */
static void conn_output(struct srv *s, struct conn *c)
{
	int r;

	c->dirty = false;
	if (c->state == C_HANDSHAKE)
		return;
	r = conn_flush(c);
	if (r < 0) {
		conn_close(s, c, "send failed");
		return;
	}
	if (c->state == C_CLOSING) {
		if (c->outlen == c->outoff) {
			conn_close(s, c, "closed");
			return;
		}
		set_events(s, c, EPOLLOUT);
		return;
	}
	if (c->outlen - c->outoff < OUT_HIGH && has_frame(s, c))
		c->ready = true; /* requests were left waiting for output room */
	if (c->ssl && SSL_pending(c->ssl))
		c->ready = true;
	set_events(s, c,
		   (c->outlen - c->outoff < OUT_HIGH ? EPOLLIN : 0) |
			   (c->outlen > c->outoff ? EPOLLOUT : 0));
}

/* End of a round: commit, then release the replies (or drop them if the commit failed). */
static void round_end(struct srv *s)
{
	bool failed = lib_batch_commit(&s->core) < 0;

	if (failed)
		lib_log("a transaction failed to commit; closing the connections that were in it");
	for (int i = 0; i < s->ndirty; i++) {
		struct conn *c = s->conns[s->dirty[i]];

		if (!c)
			continue;
		if (failed && c->batch_replies) {
			conn_close(s, c, "transaction lost");
			continue;
		}
		c->batch_replies = 0;
		conn_output(s, c);
	}
	s->ndirty = 0;
}

static int psk_find_session(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	struct srv *s = the_srv;
	struct conn *c = SSL_get_app_data(ssl);
	const struct lib_config *cfg = s->core.cfg;
	char name[LFS_PSK_IDENTITY_MAX + 1];
	const uint8_t *key = NULL;
	size_t keylen = 0;
	int node = -1;

	*sess = NULL;
	if (idlen == 0 || idlen > LFS_PSK_IDENTITY_MAX || memchr(id, 0, idlen))
		return 1; /* unknown: the handshake fails for want of a certificate */
	memcpy(name, id, idlen);
	name[idlen] = 0;
	snprintf(c->who.name, sizeof(c->who.name), "%s", name);
	if (cfg->admin_keylen && !strcmp(name, cfg->admin_name)) {
		key = cfg->admin_key;
		keylen = cfg->admin_keylen;
	} else {
		node = lib_config_find_node(cfg, name);
		if (node >= 0 && cfg->nodes[node].keylen) {
			key = cfg->nodes[node].key;
			keylen = cfg->nodes[node].keylen;
		}
	}
	if (!key)
		return 1;
	*sess = lfs_psk_session(ssl, key, keylen);
	if (!*sess)
		return 0;
	c->who.node = node;
	c->who.admin = node < 0;
	c->who.tls = true;
	c->psk_ok = true;
	return 1;
}

static void peer_name(int fd, bool is_unix, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64], port[16];

	if (is_unix) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
			snprintf(buf, len, "unix pid %d uid %d", cr.pid, cr.uid);
		else
			snprintf(buf, len, "unix");
		return;
	}
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(buf, len, "%s:%s", host, port);
	else
		snprintf(buf, len, "?");
}

static void do_accept(struct srv *s, struct listener *l)
{
	for (;;) {
		struct epoll_event e = { .events = EPOLLIN };
		struct conn *c;
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				lib_log("accept: %s (raise the open file limit)", strerror(errno));
			return;
		}
		if (fd > s->maxfd || s->core.nconns >= s->core.cfg->max_connections) {
			int64_t now = lib_now_mono();

			if (now != s->last_reject_log) {
				lib_log("refusing a connection: %d connections open (max_connections %d)",
					s->core.nconns, s->core.cfg->max_connections);
				s->last_reject_log = now;
			}
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c)
			c->in = malloc(s->core.cfg->max_message + 4);
		if (!c || !c->in) {
			if (c)
				free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->who.node = -1;
		c->last_active = lib_now_mono();
		peer_name(fd, l->is_unix, c->peer, sizeof(c->peer));
		if (l->is_unix) {
			c->state = C_OPEN;
			c->who.admin = true;
			snprintf(c->who.name, sizeof(c->who.name), "%s",
				 s->core.cfg->admin_name ? s->core.cfg->admin_name : "admin");
		} else {
			int one = 1;

			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			c->state = C_HANDSHAKE;
			c->ssl = SSL_new(s->tls);
			if (!c->ssl) {
				free(c->in);
				free(c);
				close(fd);
				continue;
			}
			SSL_set_app_data(c->ssl, c);
			SSL_set_fd(c->ssl, fd);
			SSL_set_accept_state(c->ssl);
		}
		c->events = EPOLLIN;
		e.data.fd = fd;
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &e) < 0) {
			if (c->ssl)
				SSL_free(c->ssl);
			free(c->in);
			free(c);
			close(fd);
			continue;
		}
		s->conns[fd] = c;
		s->core.nconns++;
	}
}

static int listen_unix(struct srv *s, struct listener *l, const char *path, struct lib_err *e)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t old;
	int fd;

	if (!*path || strlen(path) >= sizeof(sun.sun_path))
		return lib_fail(e, EINVAL, "listen address 'unix:%s': bad socket path", path);
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		int probe;

		if (!S_ISSOCK(sb.st_mode))
			return lib_fail(
				e, EEXIST,
				"listen address 'unix:%s': a file that is not a socket is in the way",
				path);
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			close(probe);
			return lib_fail(
				e, EADDRINUSE,
				"listen address 'unix:%s': another librarian is serving there",
				path);
		}
		if (probe >= 0)
			close(probe);
		unlink(path); /* stale socket of a dead librarian */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return lib_fail(e, errno, "socket: %s", strerror(errno));
	old = umask(0777 & ~s->core.cfg->unix_mode);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int err = errno;

		umask(old);
		close(fd);
		return lib_fail(e, err, "listen address 'unix:%s': %s", path, strerror(err));
	}
	umask(old);
	chmod(path, s->core.cfg->unix_mode);
	if (listen(fd, 512) < 0) {
		int err = errno;

		close(fd);
		return lib_fail(e, err, "listen on 'unix:%s': %s", path, strerror(err));
	}
	l->fd = fd;
	l->is_unix = true;
	l->path = strdup(path);
	return 0;
}

static int listen_tcp(struct listener *l, const char *addr, struct lib_err *e)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res = NULL;
	char host[128], *port, *end;
	int fd, r, one = 1;

	if (strlen(addr) >= sizeof(host))
		return lib_fail(e, EINVAL, "listen address '%.40s...' is too long", addr);
	strcpy(host, addr);
	port = strrchr(host, ':');
	if (!port)
		return lib_fail(e, EINVAL, "listen address '%s' must be HOST:PORT or unix:PATH",
				addr);
	*port++ = 0;
	if (strtol(port, &end, 10) <= 0 || *end || strtol(port, NULL, 10) > 65535)
		return lib_fail(e, EINVAL, "listen address '%s': bad port '%s'", addr, port);
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = 0;
		memmove(host, host + 1, strlen(host));
	}
	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		return lib_fail(e, EINVAL, "listen address '%s': %s (use a numeric address)", addr,
				gai_strerror(r));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		freeaddrinfo(res);
		return lib_fail(e, errno, "socket: %s", strerror(errno));
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 512) < 0) {
		int err = errno;

		freeaddrinfo(res);
		close(fd);
		return lib_fail(e, err, "listen on '%s': %s", addr, strerror(err));
	}
	freeaddrinfo(res);
	l->fd = fd;
	l->addr = strdup(addr);
	return 0;
}

static void sweep_timeouts(struct srv *s)
{
	int64_t now = lib_now_mono();

	for (int fd = 0; fd <= s->maxfd; fd++) {
		struct conn *c = s->conns[fd];

		if (!c)
			continue;
		if (c->state == C_HANDSHAKE &&
		    now - c->last_active > s->core.cfg->handshake_timeout)
			conn_close(s, c, "handshake timeout");
		else if (now - c->last_active > s->core.cfg->idle_timeout)
			conn_close(s, c, "idle timeout");
	}
}

/* A file descriptor limit that fits max_connections, and the tables sized by it. */
static int serve_alloc(struct srv *s)
{
	const struct lib_config *cfg = s->core.cfg;
	struct rlimit rl;

	s->core.last_seen = calloc(cfg->nnodes + 1, sizeof(int64_t));
	if (!s->core.last_seen)
		return -ENOMEM;
	/* a restarted librarian gives every node a full lease to come back */
	for (int i = 0; i < cfg->nnodes; i++)
		s->core.last_seen[i] = s->core.started;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)cfg->max_connections + 64) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)cfg->max_connections + 64 ?
				      rl.rlim_max :
				      (rlim_t)cfg->max_connections + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	s->maxfd = cfg->max_connections + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)s->maxfd > rl.rlim_cur)
		s->maxfd = rl.rlim_cur;
	s->conns = calloc(s->maxfd + 1, sizeof(*s->conns));
	s->dirty = calloc(s->maxfd + 1, sizeof(*s->dirty));
	return s->conns && s->dirty ? 0 : -ENOMEM;
}

/* epoll and a signalfd for SIGTERM and SIGINT (blocked before any thread starts). */
static int serve_events(struct srv *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };
	sigset_t mask;

	s->ep = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->ep < 0 || s->sigfd < 0)
		return -errno;
	epoll_ctl(s->ep, EPOLL_CTL_ADD, s->sigfd, &ev);
	return 0;
}

/* TLS and the listening sockets; returns how many listen for TLS, or -1. */
static int serve_listen(struct srv *s)
{
	const struct lib_config *cfg = s->core.cfg;
	struct lib_err e = { 0 };
	int ntls = 0;

	s->tls = lfs_tls_ctx(1);
	if (!s->tls) {
		lib_log("cannot set up TLS 1.3");
		return -1;
	}
	SSL_CTX_set_psk_find_session_callback(s->tls, psk_find_session);
	for (int i = 0; i < cfg->nlisten; i++) {
		struct listener *l = &s->ls[s->nls];
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = -2 - s->nls };
		int r = !strncmp(cfg->listen[i], "unix:", 5) ?
				listen_unix(s, l, cfg->listen[i] + 5, &e) :
				listen_tcp(l, cfg->listen[i], &e);

		if (r < 0) {
			lib_log("%s", e.msg);
			return -1;
		}
		if (!l->is_unix)
			ntls++;
		epoll_ctl(s->ep, EPOLL_CTL_ADD, l->fd, &ev);
		s->nls++;
	}
	return ntls;
}

static void serve_announce(struct srv *s, int ntls)
{
	const struct lib_config *cfg = s->core.cfg;
	int keyed = 0;

	for (int i = 0; i < cfg->nnodes; i++)
		keyed += cfg->nodes[i].keylen > 0;
	lib_log("serving %llu books in %d IGs of %d nodes (%d with keys%s) on %d address%s, book size %llu",
		(unsigned long long)cfg->total_books, cfg->nigs, cfg->nnodes, keyed,
		cfg->admin_keylen ? ", admin key" : "", s->nls, s->nls == 1 ? "" : "es",
		(unsigned long long)cfg->book_size);
	if (ntls && !keyed && !cfg->admin_keylen)
		lib_log("warning: no node has a key: TLS clients cannot connect (keys_dir, key_file)");
}

/* One event of epoll_wait(); returns true for a shutdown signal. */
static bool serve_event(struct srv *s, const struct epoll_event *ev)
{
	int fd = ev->data.fd;

	if (fd == -1) {
		struct signalfd_siginfo si;

		if (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
			lib_log("signal %d: shutting down", si.ssi_signo);
			return true;
		}
		return false;
	}
	if (fd <= -2) {
		do_accept(s, &s->ls[-2 - fd]);
		return false;
	}
	if (!s->conns[fd])
		return false;
	if (ev->events & (EPOLLERR | EPOLLHUP) && !(ev->events & EPOLLIN)) {
		conn_close(s, s->conns[fd], "hangup");
		return false;
	}
	if (ev->events & EPOLLOUT)
		mark_dirty(s, s->conns[fd]);
	if ((ev->events & EPOLLIN) || s->conns[fd]->state == C_HANDSHAKE)
		conn_input(s, s->conns[fd]);
	return false;
}

/*
 * One round: wait for events (not at all if a connection has buffered work),
 * take the requests they bring, then commit and send the replies. Returns 1
 * to stop, -1 on an epoll failure, 0 to go on.
 */
static int serve_round(struct srv *s)
{
	struct epoll_event evs[64];
	bool any_ready = false, stop = false;
	int n;

	for (int fd = 0; fd <= s->maxfd && !any_ready; fd++)
		any_ready = s->conns[fd] && s->conns[fd]->ready;
	n = epoll_wait(s->ep, evs, 64, any_ready ? 0 : 1000);
	if (n < 0 && errno != EINTR) {
		lib_log("epoll_wait: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++)
		stop = serve_event(s, &evs[i]) || stop;
	if (any_ready)
		for (int fd = 0; fd <= s->maxfd; fd++)
			if (s->conns[fd] && s->conns[fd]->ready && !s->conns[fd]->dirty)
				conn_input(s, s->conns[fd]);
	round_end(s);
	return stop;
}

static void serve_cleanup(struct srv *s)
{
	for (int fd = 0; s->conns && fd <= s->maxfd; fd++)
		if (s->conns[fd])
			conn_close(s, s->conns[fd], NULL);
	for (int i = 0; i < s->nls; i++) {
		close(s->ls[i].fd);
		if (s->ls[i].path)
			unlink(s->ls[i].path);
		free(s->ls[i].path);
		free(s->ls[i].addr);
	}
	SSL_CTX_free(s->tls);
	if (s->ep >= 0)
		close(s->ep);
	if (s->sigfd >= 0)
		close(s->sigfd);
	free(s->conns);
	free(s->dirty);
	free(s->core.last_seen);
}

int lib_serve(struct lib_config *cfg, struct lib_store *store, int verbose)
{
	struct srv s = { .core = { .cfg = cfg, .store = store }, .ep = -1, .sigfd = -1 };
	int64_t last_sweep = 0;
	int ntls, r;

	the_srv = &s;
	s.core.started = lib_now_mono();
	s.verbose = verbose;
	if (serve_alloc(&s) < 0 || serve_events(&s) < 0) {
		lib_log("cannot set up the event loop: %s", strerror(errno));
		r = 1;
		goto out;
	}
	ntls = serve_listen(&s);
	r = ntls < 0;
	if (r)
		goto out;
	serve_announce(&s, ntls);
	while ((r = serve_round(&s)) == 0) {
		if (lib_now_mono() != last_sweep) {
			last_sweep = lib_now_mono();
			sweep_timeouts(&s);
		}
	}
	r = r < 0; /* 1: epoll failed, 0: stopped by a signal */
out:
	serve_cleanup(&s);
	the_srv = NULL;
	return r;
}
