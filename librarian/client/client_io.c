// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian's transport: the socket (TCP or unix, non-blocking), the
 * TLS 1.3 session over it (external PSK: the node's name and key), reads
 * and writes that end by a deadline, and the SIGPIPE guard of every call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "client_int.h"
#include "tlspsk.h"
int64_t lc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int r;

	for (;;) {
		left = deadline - lc_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int psk_use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
			   SSL_SESSION **sess)
{
	struct lfs_lib *l = SSL_get_app_data(ssl);
	SSL_SESSION *s = lfs_psk_session(ssl, l->key, l->keylen);

	if (!s || (md && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(s)))) {
		SSL_SESSION_free(s);
		*sess = NULL;
		return s ? 1 : 0;
	}
	*sess = s;
	*id = (const unsigned char *)l->identity;
	*idlen = strlen(l->identity);
	return 1;
}

int lc_tls_errmsg(struct lfs_lib *l, int err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "connection closed";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return lc_err(l, err, "%s: %s", what, buf);
}

int lc_tls_prepare(struct lfs_lib *l, const struct lfs_lib_opts *o)
{
	char msg[300];
	int r;

	if (!o->node || !o->key_file)
		return lc_err(l, EINVAL, "a TLS connection to %s needs a node name and a key file",
			      o->addr);
	if (strlen(o->node) > LFS_PSK_IDENTITY_MAX)
		return lc_err(l, EINVAL, "node name '%.40s...' is too long", o->node);
	strcpy(l->identity, o->node);
	r = lfs_lib_read_key(o->key_file, l->key, sizeof(l->key), msg, sizeof(msg));
	if (r < 0)
		return lc_err(l, -r, "%s", msg);
	l->keylen = r;
	l->ctx = lfs_tls_ctx(0);
	l->ssl = l->ctx ? SSL_new(l->ctx) : NULL;
	if (!l->ssl)
		return lc_tls_errmsg(l, ENOMEM, "TLS setup");
	SSL_set_app_data(l->ssl, l);
	SSL_set_psk_use_session_callback(l->ssl, psk_use_session);
	return 0;
}

int lc_tls_handshake(struct lfs_lib *l, int64_t deadline)
{
	int r;

	for (;;) {
		r = SSL_connect(l->ssl);
		if (r == 1)
			return 0;
		switch (SSL_get_error(l->ssl, r)) {
		case SSL_ERROR_WANT_READ:
			r = wait_fd(l->fd, POLLIN, deadline);
			break;
		case SSL_ERROR_WANT_WRITE:
			r = wait_fd(l->fd, POLLOUT, deadline);
			break;
		default:
			return lc_tls_errmsg(
				l, ECONNREFUSED,
				"TLS handshake failed (wrong key or unknown node name?)");
		}
		if (r < 0)
			return lc_err(l, -r, "TLS handshake: %s", strerror(-r));
	}
}

/*
 * An SSL_read_ex or SSL_write_ex that returned *r moved nothing: if TLS
 * wants the socket readable or writable, wait for it (*r: 0, or the wait's
 * -errno) and return true; otherwise *r is SSL_get_error's code, false.
 */
static bool tls_wait(struct lfs_lib *l, int *r, int64_t deadline)
{
	*r = SSL_get_error(l->ssl, *r);
	if (*r == SSL_ERROR_WANT_READ)
		*r = wait_fd(l->fd, POLLIN, deadline);
	else if (*r == SSL_ERROR_WANT_WRITE)
		*r = wait_fd(l->fd, POLLOUT, deadline);
	else
		return false;
	return true;
}

int lc_write(struct lfs_lib *l, const void *buf, size_t len, int64_t deadline)
{
	const char *p = buf;

	while (len) {
		ssize_t n;
		int r;

		if (l->ssl) {
			size_t w = 0;

			r = SSL_write_ex(l->ssl, p, len, &w);
			if (r == 1) {
				p += w;
				len -= w;
			} else if (!tls_wait(l, &r, deadline)) {
				return lc_tls_errmsg(l, EPIPE, "send");
			}
		} else {
			n = send(l->fd, p, len, MSG_NOSIGNAL);
			if (n > 0) {
				p += n;
				len -= n;
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return lc_err(l, errno, "send: %s", strerror(errno));
			r = wait_fd(l->fd, POLLOUT, deadline);
		}
		if (r < 0)
			return lc_err(l, -r, "send: %s", strerror(-r));
	}
	return 0;
}

int lc_read(struct lfs_lib *l, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;

	while (len) {
		ssize_t n;
		int r;

		if (l->ssl) {
			size_t got = 0;

			r = SSL_read_ex(l->ssl, p, len, &got);
			if (r == 1) {
				p += got;
				len -= got;
			} else if (!tls_wait(l, &r, deadline)) {
				return r == SSL_ERROR_ZERO_RETURN ?
					       lc_err(l, ECONNRESET,
						      "the librarian closed the connection") :
					       lc_tls_errmsg(l, ECONNRESET, "receive");
			}
		} else {
			n = recv(l->fd, p, len, 0);
			if (n > 0) {
				p += n;
				len -= n;
				continue;
			}
			if (n == 0)
				return lc_err(l, ECONNRESET, "the librarian closed the connection");
			if (errno != EAGAIN && errno != EINTR)
				return lc_err(l, errno, "receive: %s", strerror(errno));
			r = wait_fd(l->fd, POLLIN, deadline);
		}
		if (r < 0)
			return lc_err(l, -r, "waiting for the librarian: %s", strerror(-r));
	}
	return 0;
}

int lc_open_socket(struct lfs_lib *l, const char *addr, int64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	char host[256], *port;
	int r, fd = -1, err = 0;

	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		if (strlen(addr + 5) >= sizeof(sun.sun_path) || !addr[5])
			return lc_err(l, EINVAL, "bad unix socket path '%s'", addr + 5);
		strcpy(sun.sun_path, addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return lc_err(l, errno, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			err = errno;
			close(fd);
			return lc_err(l, err, "cannot connect to %s: %s", addr, strerror(err));
		}
		l->fd = fd;
		return 0;
	}
	if (strlen(addr) >= sizeof(host))
		return lc_err(l, EINVAL, "address too long");
	strcpy(host, addr);
	port = strrchr(host, ':');
	if (!port || !port[1])
		return lc_err(l, EINVAL, "address '%s' must be HOST:PORT or unix:PATH", addr);
	*port++ = 0;
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = 0;
		memmove(host, host + 1, strlen(host));
	}
	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		return lc_err(l, EINVAL, "address '%s': %s", addr, gai_strerror(r));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			socklen_t sl = sizeof(err);

			r = wait_fd(fd, POLLOUT, deadline);
			if (r == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) == 0 && !err)
				break;
			if (r < 0)
				err = -r;
		} else {
			err = errno;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return lc_err(l, err ? err : ECONNREFUSED, "cannot connect to %s: %s", addr,
			      strerror(err ? err : ECONNREFUSED));
	{
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	}
	l->fd = fd;
	return 0;
}

/*
 * Writing to a socket whose peer has gone raises SIGPIPE, which ends a
 * process that did not ask for it; TLS writes through OpenSSL's socket BIO,
 * which cannot pass MSG_NOSIGNAL. So every call blocks SIGPIPE in the
 * calling thread and, if one was raised meanwhile (and none was pending
 * before), takes it: the failed write is returned as EPIPE. The process's
 * disposition of SIGPIPE is left alone.
 */
void lc_sigpipe_block(struct lc_sigpipe_guard *g)
{
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigemptyset(&pend);
	sigpending(&pend);
	g->pending = sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

void lc_sigpipe_restore(struct lc_sigpipe_guard *g)
{
	struct timespec zero = { 0 };
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigemptyset(&pend);
	if (!g->pending && !sigismember(&g->old, SIGPIPE) && sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE))
		sigtimedwait(&set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

void lc_drop(struct lfs_lib *l)
{
	if (l->ssl) {
		SSL_free(l->ssl);
		l->ssl = NULL;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
