// SPDX-License-Identifier: GPL-2.0
/*
 * Listening sockets and who gets in. Connections are budgeted by kind, so
 * that nobody who can merely connect locks the nodes or the admin out:
 *
 *  - TCP connections still in their TLS handshake (max_unauthenticated, and
 *    max_unauthenticated_per_address per source address): when a budget is
 *    full the least recently active of them is closed for the newcomer, so
 *    idle or half-open connections cannot keep a node from logging in.
 *    Handshakes whose ClientHello names a node with a valid PSK binder go
 *    after the anonymous ones, and at most max_connections_per_node of them
 *    per identity are under way (the least recently active goes): a binder
 *    proves nothing (a ClientHello seen on the wire can be replayed byte for
 *    byte), only a finished handshake does, so replays of one node's
 *    ClientHello hold at most that many places;
 *  - authenticated TCP connections (max_connections, and
 *    max_connections_per_node per node identity): a node that finishes a
 *    handshake beyond its own cap closes its least recently used
 *    connection, one beyond max_connections that of the identity holding
 *    the most (its own if none holds more; refused if it has none to
 *    give). Connections that carried heartbeats, the nodes' renewal
 *    sessions, go last, and those the lease thread serves (beat.c) are never
 *    closed for another;
 *  - the admin's unix socket (max_admin_connections), its own budget: when
 *    full the least recently active admin connection makes room, so the
 *    admin always gets an answer.
 *
 * The descriptor table is sized for the three (lib_fd_budget); should the
 * process run out of descriptors anyway, a reserved one is closed to accept
 * and close the waiting connection, so the listener does not spin.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <openssl/err.h>

#include "server.h"
#include "tlspsk.h"

static struct srv *the_srv; /* for the PSK callback */

/* At most one line a second for what a client can make happen at will. */
static bool log_allowed(struct srv *s)
{
	int64_t now = lib_now_mono();

	if (now == s->last_reject_log)
		return false;
	s->last_reject_log = now;
	return true;
}

/*
 * A ClientHello with a valid binder for c's identity: at most
 * max_connections_per_node such handshakes of one identity are under way,
 * the least recently active goes (replays of one ClientHello hold no more).
 */
static void hello_cap(struct srv *s, struct conn *c)
{
	struct conn *lru = NULL;
	int n = 0;

	for (struct conn *o = s->unauth.head; o; o = o->lru_next)
		if (o != c && o->psk_ok && !strcmp(o->who.name, c->who.name)) {
			lru = lru ? lru : o;
			n++;
		}
	if (n < s->core.cfg->max_conn_per_node)
		return;
	if (log_allowed(s))
		lib_log("%s: closed: %d handshakes of the same identity under way (max_connections_per_node)",
			lru->peer, n + 1);
	lib_conn_close(s, lru, NULL);
}

static int psk_find_session(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	struct srv *s = the_srv;
	struct conn *c = SSL_get_app_data(ssl);
	const struct lib_config *cfg = s->core.cfg;
	const uint8_t *key = NULL;
	size_t keylen = 0;
	int node = -1;

	*sess = NULL;
	if (idlen == 0 || idlen > LFS_PSK_IDENTITY_MAX || memchr(id, 0, idlen))
		return 1; /* unknown: the handshake fails for want of a certificate */
	memcpy(c->who.name, id, idlen); /* not trusted: escaped wherever it is logged */
	c->who.name[idlen] = 0;
	if (cfg->admin_keylen && !strcmp(c->who.name, cfg->admin_name)) {
		key = cfg->admin_key;
		keylen = cfg->admin_keylen;
	} else {
		node = lib_config_find_node(cfg, c->who.name);
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
	hello_cap(s, c);
	return 1;
}

/*
 * The least recently used authenticated connection of identity slot that
 * may be closed for another (not except, not the lease thread's), one
 * without heartbeats first.
 */
static struct conn *session_lru(struct srv *s, int slot, const struct conn *except)
{
	struct conn *best = NULL;

	for (int fd = 0; fd <= s->maxfd; fd++) {
		struct conn *o = s->conns[fd];

		if (!o || o == except || o->beat || !o->counted || lib_id_slot(s, o) != slot)
			continue;
		if (!best || (best->renews && !o->renews) ||
		    (best->renews == o->renews &&
		     (o->last_active < best->last_active ||
		      (o->last_active == best->last_active && o->seq < best->seq))))
			best = o;
	}
	return best;
}

static void close_session(struct srv *s, struct conn *v, const char *why, int n, int max)
{
	char b[100];

	if (log_allowed(s))
		lib_log("%s (%s): closed, its least recently used connection: %d open (%s %d)",
			v->peer, lib_shown(v->who.name, b, sizeof(b)), n, why, max);
	lib_conn_close(s, v, NULL);
}

/* The caps on authenticated connections, c now counted; -1: c was closed. */
static int session_caps(struct srv *s, struct conn *c)
{
	const struct lib_config *cfg = s->core.cfg;
	int slot = lib_id_slot(s, c), big = slot;
	struct conn *v;

	c->counted = true;
	c->seq = ++s->nseq;
	s->id_conns[slot]++;
	if (!c->who.admin && s->id_conns[slot] > cfg->max_conn_per_node) {
		v = session_lru(s, slot, c);
		if (!v) {
			lib_conn_close(s, c, "max_connections_per_node");
			return -1;
		}
		close_session(s, v, "max_connections_per_node", s->id_conns[slot],
			      cfg->max_conn_per_node);
	}
	if (s->nauthed <= cfg->max_connections)
		return 0;
	for (int i = 0; i <= cfg->nnodes; i++)
		if (s->id_conns[i] > s->id_conns[big])
			big = i;
	v = session_lru(s, big, c);
	if (!v) {
		if (log_allowed(s))
			lib_log("refusing an authenticated connection: %d open (max_connections)",
				s->nauthed - 1);
		lib_conn_close(s, c, NULL);
		return -1;
	}
	close_session(s, v, "max_connections", s->nauthed, cfg->max_connections);
	return 0;
}

/* Out of the unauthenticated budget into the authenticated one. */
static int handshake_done(struct srv *s, struct conn *c)
{
	if (!c->psk_ok) {
		lib_conn_close(s, c, "handshake without a known pre-shared key");
		return -1;
	}
	lib_list_remove(&s->unauth, c);
	s->core.nunauth--;
	s->nauthed++;
	c->state = C_OPEN;
	c->last_active = lib_svc_now(&s->core);
	return session_caps(s, c);
}

int lib_handshake(struct srv *s, struct conn *c)
{
	int r = SSL_accept(c->ssl);
	char b[100], buf[200] = "connection closed";
	unsigned long e;

	if (r == 1)
		return handshake_done(s, c);
	r = SSL_get_error(c->ssl, r);
	if (r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE) {
		/* progress: it is not the least recently active any more */
		lib_list_remove(&s->unauth, c);
		lib_list_append(&s->unauth, c);
		lib_conn_set_events(s, c, r == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT);
		return 0;
	}
	e = ERR_get_error();
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	if (log_allowed(s))
		lib_log("%s: TLS handshake refused%s%s: %s", c->peer,
			c->who.name[0] ? " for identity " : "",
			c->who.name[0] ? lib_shown(c->who.name, b, sizeof(b)) : "", buf);
	lib_conn_close(s, c, NULL);
	return -1;
}

static void peer_name(struct conn *c, bool is_unix)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64], port[16];

	if (is_unix) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);

		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
			snprintf(c->peer, sizeof(c->peer), "unix pid %d uid %d", cr.pid, cr.uid);
		else
			snprintf(c->peer, sizeof(c->peer), "unix");
		return;
	}
	snprintf(c->peer, sizeof(c->peer), "?");
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		c->addr[10] = c->addr[11] = 0xff;
		memcpy(c->addr + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(c->addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
	if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
}

/*
 * Make room in a full budget: the least recently active (from addr, if
 * given) goes; one whose ClientHello had a valid binder only if no
 * anonymous one is left.
 */
static bool evict(struct srv *s, struct conn_list *l, const unsigned char *addr, const char *why)
{
	struct conn *c = NULL;

	for (int pass = 0; pass < 2 && !c; pass++)
		for (c = l->head; c; c = c->lru_next)
			if ((!addr || !memcmp(c->addr, addr, sizeof(c->addr))) &&
			    (pass || !c->psk_ok))
				break;
	if (!c)
		return false;
	if (log_allowed(s))
		lib_log("%s: closed to make room for a new connection (%s)", c->peer, why);
	lib_conn_close(s, c, NULL);
	return true;
}

/* Room in the budgets of handshakes, made if need be; -1: none (the newcomer goes). */
static int admit_unauth(struct srv *s, struct conn *c)
{
	const struct lib_config *cfg = s->core.cfg;
	int same = 0;

	for (struct conn *o = s->unauth.head; o; o = o->lru_next)
		same += !memcmp(o->addr, c->addr, sizeof(c->addr));
	if ((same >= cfg->max_unauth_per_addr &&
	     !evict(s, &s->unauth, c->addr, "max_unauthenticated_per_address")) ||
	    (s->unauth.n >= cfg->max_unauth && !evict(s, &s->unauth, NULL, "max_unauthenticated")))
		return -1;
	lib_list_append(&s->unauth, c);
	s->core.nunauth++;
	return 0;
}

/* A new connection into its budget; -1 if it could not be set up. */
static int admit(struct srv *s, struct conn *c, bool is_unix)
{
	int one = 1;

	peer_name(c, is_unix);
	if (is_unix) {
		if (s->admin.n >= s->core.cfg->max_admin)
			evict(s, &s->admin, NULL, "max_admin_connections");
		c->state = C_OPEN;
		c->who.admin = true;
		snprintf(c->who.name, sizeof(c->who.name), "%s",
			 s->core.cfg->admin_name ? s->core.cfg->admin_name : "admin");
		lib_list_append(&s->admin, c);
		s->core.nadmin++;
		return 0;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->ssl = SSL_new(s->tls);
	if (!c->ssl)
		return -1;
	SSL_set_app_data(c->ssl, c);
	SSL_set_fd(c->ssl, c->fd);
	SSL_set_accept_state(c->ssl);
	c->state = C_HANDSHAKE;
	return admit_unauth(s, c);
}

/* No descriptor left: accept the waiting connection with the reserved one and close it. */
static void shed(struct srv *s, struct listener *l)
{
	int fd;

	if (log_allowed(s))
		lib_log("accept: %s: out of file descriptors; refusing connections (raise the open file limit, or lower the connection budgets)",
			strerror(errno));
	if (s->reserve_fd < 0)
		return;
	close(s->reserve_fd);
	fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void lib_accept(struct srv *s, struct listener *l)
{
	for (int i = 0; i < 64; i++) {
		struct epoll_event e = { .events = EPOLLIN };
		struct conn *c;
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				shed(s, l);
			return;
		}
		c = fd <= s->maxfd ? lib_conn_new(s, fd, l->is_unix) : NULL;
		if (!c) {
			close(fd);
			continue;
		}
		s->conns[fd] = c;
		s->core.nconns++;
		c->events = e.events;
		e.data.fd = fd;
		if (admit(s, c, l->is_unix) < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &e) < 0)
			lib_conn_close(s, c, NULL);
		else if (!l->is_unix)
			lib_handshake(s, c); /* a ClientHello already there proves its key now */
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

/* HOST:PORT or [V6]:PORT, numeric. */
static int split_addr(const char *addr, char *host, size_t len, char **port, struct lib_err *e)
{
	char *end;

	if (strlen(addr) >= len)
		return lib_fail(e, EINVAL, "listen address '%.40s...' is too long", addr);
	strcpy(host, addr);
	*port = strrchr(host, ':');
	if (!*port)
		return lib_fail(e, EINVAL, "listen address '%s' must be HOST:PORT or unix:PATH",
				addr);
	*(*port)++ = 0;
	if (strtol(*port, &end, 10) <= 0 || *end || strtol(*port, NULL, 10) > 65535)
		return lib_fail(e, EINVAL, "listen address '%s': bad port '%s'", addr, *port);
	if (host[0] == '[' && (*port)[-2] == ']') {
		(*port)[-2] = 0;
		memmove(host, host + 1, strlen(host));
	}
	return 0;
}

int lib_listen_tcp(struct listener *l, const char *addr, struct lib_err *e)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res = NULL;
	char host[128], *port = NULL;
	int fd, r, one = 1;

	if ((r = split_addr(addr, host, sizeof(host), &port, e)) < 0)
		return r;
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
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 1024) < 0) {
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

/* TLS and the listening sockets; returns how many listen for TLS, or -1. */
int lib_listen_all(struct srv *s)
{
	const struct lib_config *cfg = s->core.cfg;
	struct lib_err e = { 0 };
	int ntls = 0;

	the_srv = s;
	s->id_conns = calloc(cfg->nnodes + 1, sizeof(*s->id_conns));
	s->tls = s->id_conns ? lfs_tls_ctx(1) : NULL;
	if (!s->tls) {
		lib_log("cannot set up TLS 1.3");
		return -1;
	}
	/*
	 * An idle connection keeps no TLS buffers; a write retried after
	 * WANT_WRITE may come from a reallocated output buffer (conn.c).
	 */
	SSL_CTX_set_mode(s->tls, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_psk_find_session_callback(s->tls, psk_find_session);
	for (int i = 0; i < cfg->nlisten; i++) {
		struct listener *l = &s->ls[s->nls];
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = -2 - s->nls };
		int r = !strncmp(cfg->listen[i], "unix:", 5) ?
				listen_unix(s, l, cfg->listen[i] + 5, &e) :
				lib_listen_tcp(l, cfg->listen[i], &e);

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

void lib_listen_close(struct srv *s)
{
	for (int i = 0; i < s->nls; i++) {
		close(s->ls[i].fd);
		if (s->ls[i].path)
			unlink(s->ls[i].path);
		free(s->ls[i].path);
		free(s->ls[i].addr);
	}
	SSL_CTX_free(s->tls);
	free(s->id_conns);
	s->id_conns = NULL;
	the_srv = NULL;
}

/*
 * Descriptors for the budgets: the soft limit is raised towards the hard one
 * as far as they need. Below that, the TCP budgets shrink (the admin's is
 * kept) and the librarian says so. Returns the table size: descriptors
 * beyond it are closed at once.
 */
int lib_fd_budget(struct srv *s)
{
	struct lib_config *cfg = s->core.cfg;
	rlim_t need = (rlim_t)cfg->max_connections + cfg->max_unauth + cfg->max_admin + 64;
	struct rlimit rl;
	rlim_t have;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	have = rl.rlim_cur;
	if (have < need) {
		long room = (long)have - 64 - cfg->max_admin;

		if (room < 2)
			return -EMFILE;
		if (cfg->max_unauth > room / 4)
			cfg->max_unauth = room / 4 ? room / 4 : 1;
		if (cfg->max_connections > room - cfg->max_unauth)
			cfg->max_connections = room - cfg->max_unauth;
		lib_log("warning: the open file limit (%llu) is below what the connection budgets need (%llu): serving with max_connections %d, max_unauthenticated %d",
			(unsigned long long)have, (unsigned long long)need, cfg->max_connections,
			cfg->max_unauth);
	}
	/* accept() gives the lowest free descriptor: the budgets never need more */
	return have < need ? (int)have : (int)need;
}
