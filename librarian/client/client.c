// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: talk to the librarian over TLS 1.3 (external PSK) or a unix
 * socket. Non-blocking sockets and poll() with deadlines, so no call blocks
 * past its timeout. A librarian that closes the connection is an error
 * (ECONNRESET, EPIPE) returned to the caller, never a SIGPIPE that kills
 * it. See lfs_librarian.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"
#include "tlspsk.h"

struct lfs_lib {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	char identity[LFS_PSK_IDENTITY_MAX + 1];
	uint8_t key[64];
	size_t keylen;
	int reply_timeout_ms;
	int64_t next_id;
	json_t *info;
	char addr[LFS_ADDR_MAX]; /* where it is connected */
	char errmsg[1024];
	char errcode[24];
};

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ EPERM, "EPERM" },
	{ ENOENT, "ENOENT" },
	{ EIO, "EIO" },
	{ E2BIG, "E2BIG" },
	{ ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },
	{ EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },
	{ EINVAL, "EINVAL" },
	{ ENOSPC, "ENOSPC" },
	{ ERANGE, "ERANGE" },
	{ ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENODATA, "ENODATA" },
	{ EPROTO, "EPROTO" },
	{ EBADMSG, "EBADMSG" },
	{ EMSGSIZE, "EMSGSIZE" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	{ EOPNOTSUPP, "EOPNOTSUPP" },
	{ ECONNREFUSED, "ECONNREFUSED" },
	{ ECONNRESET, "ECONNRESET" },
	{ ETIMEDOUT, "ETIMEDOUT" },
	{ EAGAIN, "EAGAIN" },
	{ ENOTCONN, "ENOTCONN" },
	{ EPIPE, "EPIPE" },
	{ ESHUTDOWN, "ESHUTDOWN" },
	{ EDQUOT, "EDQUOT" },
	{ ESTALE, "ESTALE" },
	{ EMFILE, "EMFILE" },
	{ EREMOTE, "EREMOTE" },
};

const char *lfs_errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return "EUNKNOWN";
}

static int lib_err(struct lfs_lib *l, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lib_err(struct lfs_lib *l, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->errmsg, sizeof(l->errmsg), fmt, ap);
	va_end(ap);
	snprintf(l->errcode, sizeof(l->errcode), "%s", lfs_errno_name(err));
	return -err;
}

const char *lfs_lib_errmsg(const struct lfs_lib *l)
{
	return l ? l->errmsg : "no connection";
}

const char *lfs_lib_errcode(const struct lfs_lib *l)
{
	return l ? l->errcode : "ENOTCONN";
}

int lfs_lib_connected(const struct lfs_lib *l)
{
	return l && l->fd >= 0;
}

json_t *lfs_lib_server_info(struct lfs_lib *l)
{
	return l ? l->info : NULL;
}

const char *lfs_lib_addr(const struct lfs_lib *l)
{
	return l ? l->addr : "";
}

int lfs_lib_read_key(const char *path, uint8_t *key, size_t max, char *msg, size_t msglen)
{
	char buf[300];
	struct stat sb;
	ssize_t n;
	size_t len, hex = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = errno;
		snprintf(msg, msglen, "key file '%s': %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(msg, msglen, "key file '%s' is not a regular file", path);
		return -EINVAL;
	}
	if (sb.st_mode & 0077) {
		close(fd);
		snprintf(
			msg, msglen,
			"key file '%s' is accessible by group or others (mode %04o); run chmod 600 on it",
			path, (unsigned int)(sb.st_mode & 07777));
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		err = errno;
		snprintf(msg, msglen, "key file '%s': %s", path, strerror(err));
		return -err;
	}
	buf[n] = 0;
	len = strcspn(buf, " \t\r\n");
	if (buf[len + strspn(buf + len, " \t\r\n")]) {
		snprintf(msg, msglen, "key file '%s' must hold one line of hex digits", path);
		return -EINVAL;
	}
	buf[len] = 0;
	if (len < 64 || len > 2 * max || len > 128 || len % 2) {
		snprintf(
			msg, msglen,
			"key file '%s' holds %zu hex digits; a key is 64 to 128 (32-64 bytes, e.g. `librarian genkey`)",
			path, len);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i += 2) {
		unsigned int b;
		char pair[3] = { buf[i], buf[i + 1], 0 };

		if (!isxdigit_c(pair[0]) || !isxdigit_c(pair[1]) || sscanf(pair, "%2x", &b) != 1) {
			snprintf(msg, msglen, "key file '%s': '%s' at position %zu is not hex",
				 path, pair, i + 1);
			return -EINVAL;
		}
		key[hex++] = b;
	}
	return hex;
}

static int64_t now_ms(void)
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
		left = deadline - now_ms();
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

static int tls_errmsg(struct lfs_lib *l, int err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "connection closed";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return lib_err(l, err, "%s: %s", what, buf);
}

static int tls_handshake(struct lfs_lib *l, int64_t deadline)
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
			return tls_errmsg(l, ECONNREFUSED,
					  "TLS handshake failed (wrong key or unknown node name?)");
		}
		if (r < 0)
			return lib_err(l, -r, "TLS handshake: %s", strerror(-r));
	}
}

static int io_write(struct lfs_lib *l, const void *buf, size_t len, int64_t deadline)
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
				continue;
			}
			r = SSL_get_error(l->ssl, r);
			if (r == SSL_ERROR_WANT_READ)
				r = wait_fd(l->fd, POLLIN, deadline);
			else if (r == SSL_ERROR_WANT_WRITE)
				r = wait_fd(l->fd, POLLOUT, deadline);
			else
				return tls_errmsg(l, EPIPE, "send");
		} else {
			n = send(l->fd, p, len, MSG_NOSIGNAL);
			if (n > 0) {
				p += n;
				len -= n;
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return lib_err(l, errno, "send: %s", strerror(errno));
			r = wait_fd(l->fd, POLLOUT, deadline);
		}
		if (r < 0)
			return lib_err(l, -r, "send: %s", strerror(-r));
	}
	return 0;
}

static int io_read(struct lfs_lib *l, void *buf, size_t len, int64_t deadline)
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
				continue;
			}
			r = SSL_get_error(l->ssl, r);
			if (r == SSL_ERROR_WANT_READ)
				r = wait_fd(l->fd, POLLIN, deadline);
			else if (r == SSL_ERROR_WANT_WRITE)
				r = wait_fd(l->fd, POLLOUT, deadline);
			else if (r == SSL_ERROR_ZERO_RETURN)
				return lib_err(l, ECONNRESET,
					       "the librarian closed the connection");
			else
				return tls_errmsg(l, ECONNRESET, "receive");
		} else {
			n = recv(l->fd, p, len, 0);
			if (n > 0) {
				p += n;
				len -= n;
				continue;
			}
			if (n == 0)
				return lib_err(l, ECONNRESET,
					       "the librarian closed the connection");
			if (errno != EAGAIN && errno != EINTR)
				return lib_err(l, errno, "receive: %s", strerror(errno));
			r = wait_fd(l->fd, POLLIN, deadline);
		}
		if (r < 0)
			return lib_err(l, -r, "waiting for the librarian: %s", strerror(-r));
	}
	return 0;
}

static int open_socket(struct lfs_lib *l, const char *addr, int64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	char host[256], *port;
	int r, fd = -1, err = 0;

	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		if (strlen(addr + 5) >= sizeof(sun.sun_path) || !addr[5])
			return lib_err(l, EINVAL, "bad unix socket path '%s'", addr + 5);
		strcpy(sun.sun_path, addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return lib_err(l, errno, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			err = errno;
			close(fd);
			return lib_err(l, err, "cannot connect to %s: %s", addr, strerror(err));
		}
		l->fd = fd;
		return 0;
	}
	if (strlen(addr) >= sizeof(host))
		return lib_err(l, EINVAL, "address too long");
	strcpy(host, addr);
	port = strrchr(host, ':');
	if (!port || !port[1])
		return lib_err(l, EINVAL, "address '%s' must be HOST:PORT or unix:PATH", addr);
	*port++ = 0;
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = 0;
		memmove(host, host + 1, strlen(host));
	}
	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		return lib_err(l, EINVAL, "address '%s': %s", addr, gai_strerror(r));
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
		return lib_err(l, err ? err : ECONNREFUSED, "cannot connect to %s: %s", addr,
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
struct sigpipe_guard {
	sigset_t old;
	bool pending;
};

static void sigpipe_block(struct sigpipe_guard *g)
{
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigemptyset(&pend);
	sigpending(&pend);
	g->pending = sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void sigpipe_restore(struct sigpipe_guard *g)
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

static int lib_connect(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg);
static int lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result);

int lfs_lib_connect_one(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg)
{
	struct sigpipe_guard g;
	int r;

	sigpipe_block(&g);
	r = lib_connect(o, out, errmsg);
	sigpipe_restore(&g);
	return r;
}

/* The identity, its key and the TLS objects, ready before the socket is. */
static int tls_prepare(struct lfs_lib *l, const struct lfs_lib_opts *o)
{
	char msg[300];
	int r;

	if (!o->node || !o->key_file)
		return lib_err(l, EINVAL, "a TLS connection to %s needs a node name and a key file",
			       o->addr);
	if (strlen(o->node) > LFS_PSK_IDENTITY_MAX)
		return lib_err(l, EINVAL, "node name '%.40s...' is too long", o->node);
	strcpy(l->identity, o->node);
	r = lfs_lib_read_key(o->key_file, l->key, sizeof(l->key), msg, sizeof(msg));
	if (r < 0)
		return lib_err(l, -r, "%s", msg);
	l->keylen = r;
	l->ctx = lfs_tls_ctx(0);
	l->ssl = l->ctx ? SSL_new(l->ctx) : NULL;
	if (!l->ssl)
		return tls_errmsg(l, ENOMEM, "TLS setup");
	SSL_set_app_data(l->ssl, l);
	SSL_set_psk_use_session_callback(l->ssl, psk_use_session);
	return 0;
}

/*
 * The protocol the librarian speaks, from its auth reply: one version for
 * every component (LFS_PROTOCOL_VERSION, lfs_librarian.h). Any other is
 * refused here, naming both, rather than found out later from a request
 * the librarian does not know.
 */
static int protocol_check(struct lfs_lib *l, const char *addr)
{
	json_t *p = json_object_get(l->info, "protocol");

	if (json_is_integer(p) && json_integer_value(p) == LFS_PROTOCOL_VERSION)
		return 0;
	if (!json_is_integer(p))
		return lib_err(
			l, EPROTONOSUPPORT,
			"the librarian at %s names no protocol version; this client speaks version %d",
			addr, LFS_PROTOCOL_VERSION);
	return lib_err(l, EPROTONOSUPPORT,
		       "the librarian at %s speaks protocol version %" JSON_INTEGER_FORMAT
		       "; this client speaks version %d",
		       addr, json_integer_value(p), LFS_PROTOCOL_VERSION);
}

/*
 * Everything that takes time is done before connecting, so the ClientHello
 * follows the connection at once: the librarian protects a handshake that
 * has proved its key, not one that has not said anything yet.
 */
static int lib_connect(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg)
{
	struct lfs_lib *l;
	int64_t deadline;
	json_t *args;
	int r;

	*out = NULL;
	if (errmsg)
		*errmsg = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = -1;
	l->reply_timeout_ms = o->reply_timeout_ms > 0 ? o->reply_timeout_ms : 30000;
	deadline = now_ms() + (o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000);
	if (!o->addr)
		r = lib_err(l, EINVAL, "no librarian address given");
	else if (strncmp(o->addr, "unix:", 5))
		r = tls_prepare(l, o);
	else
		r = 0;
	if (r < 0 || (r = open_socket(l, o->addr, deadline)) < 0)
		goto fail;
	if (l->ssl) {
		SSL_set_fd(l->ssl, l->fd);
		if ((r = tls_handshake(l, deadline)) < 0)
			goto fail;
	}
	args = o->node ? json_pack("{s:s}", "node", o->node) : NULL;
	r = lib_call(l, "auth", args, &l->info);
	json_decref(args);
	if (r < 0 || (r = protocol_check(l, o->addr)) < 0)
		goto fail;
	OPENSSL_cleanse(l->key, sizeof(l->key));
	snprintf(l->addr, sizeof(l->addr), "%s", o->addr);
	*out = l;
	return 0;
fail:
	if (errmsg)
		*errmsg = strdup(l->errmsg);
	lfs_lib_close(l);
	return r;
}

/*
 * The request as one frame: 4-byte big-endian length and the JSON text.
 * Header and body go out in one write: one TLS record, one TCP segment, no
 * second small segment for Nagle to hold back on any hop between.
 */
static int make_frame(struct lfs_lib *l, const char *op, json_t *args, int64_t id, uint8_t **frame,
		      size_t *flen)
{
	json_t *req = json_pack("{s:i,s:I,s:s}", "v", LFS_PROTOCOL_VERSION, "id", (json_int_t)id,
				"op", op);
	uint32_t len;
	char *txt;

	if (!req)
		return lib_err(l, ENOMEM, "out of memory");
	if (args && (!json_is_object(args) || json_object_update(req, args) < 0)) {
		json_decref(req);
		return lib_err(l, EINVAL, "request arguments must be a JSON object");
	}
	json_object_set_new(req, "id", json_integer(id));
	json_object_set_new(req, "op", json_string(op));
	txt = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!txt)
		return lib_err(l, ENOMEM, "out of memory");
	len = strlen(txt);
	*frame = malloc(4 + len);
	if (!*frame) {
		free(txt);
		return lib_err(l, ENOMEM, "out of memory");
	}
	(*frame)[0] = len >> 24;
	(*frame)[1] = len >> 16;
	(*frame)[2] = len >> 8;
	(*frame)[3] = len;
	memcpy(*frame + 4, txt, len);
	free(txt);
	*flen = 4 + len;
	return 0;
}

/* One reply frame, parsed. A stream error leaves the connection out of step. */
static int read_reply(struct lfs_lib *l, int64_t deadline, json_t **rep)
{
	json_error_t jerr;
	uint8_t hdr[4];
	uint32_t len;
	char *buf;
	int r = io_read(l, hdr, 4, deadline);

	if (r < 0)
		return r;
	len = (uint32_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
	if (len > LFS_MAX_REPLY)
		return lib_err(l, EMSGSIZE, "reply of %u bytes is larger than %u", len,
			       LFS_MAX_REPLY);
	buf = malloc(len + 1);
	if (!buf)
		return lib_err(l, ENOMEM, "out of memory");
	r = io_read(l, buf, len, deadline);
	if (r == 0) {
		*rep = json_loadb(buf, len, 0, &jerr);
		if (!*rep)
			r = lib_err(l, EBADMSG, "malformed reply: %s", jerr.text);
	}
	free(buf);
	return r;
}

/* The reply's result, or -errno with the server's message and code. */
static int take_reply(struct lfs_lib *l, json_t *rep, json_t **result)
{
	json_t *err;
	int r;

	if (json_is_true(json_object_get(rep, "ok"))) {
		if (result)
			*result = json_incref(json_object_get(rep, "result"));
		json_decref(rep);
		l->errmsg[0] = 0;
		l->errcode[0] = 0;
		return 0;
	}
	err = json_object_get(rep, "error");
	r = json_integer_value(json_object_get(err, "errno"));
	if (r <= 0)
		r = EPROTO;
	snprintf(l->errmsg, sizeof(l->errmsg), "%s",
		 json_string_value(json_object_get(err, "message")) ?: "unknown error");
	snprintf(l->errcode, sizeof(l->errcode), "%s",
		 json_string_value(json_object_get(err, "code")) ?: lfs_errno_name(r));
	json_decref(rep);
	return -r;
}

/* The connection is out of step: nothing more can be read from it. */
static void drop(struct lfs_lib *l)
{
	if (l->ssl) {
		SSL_free(l->ssl);
		l->ssl = NULL;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/*
 * The request could not be sent whole: the librarian may have refused it
 * before reading it all (EMSGSIZE) and closed. Its reply, if it came, says
 * why better than the failed write does.
 */
static int refused_reply(struct lfs_lib *l, int64_t id, int r, json_t **result)
{
	char msg[sizeof(l->errmsg)], code[sizeof(l->errcode)];
	json_t *rep = NULL;

	memcpy(msg, l->errmsg, sizeof(msg));
	memcpy(code, l->errcode, sizeof(code));
	if (read_reply(l, now_ms() + 1000, &rep) == 0) {
		if (json_integer_value(json_object_get(rep, "id")) == id ||
		    json_is_null(json_object_get(rep, "id"))) {
			r = take_reply(l, rep, result);
			drop(l);
			return r;
		}
		json_decref(rep);
	}
	memcpy(l->errmsg, msg, sizeof(msg));
	memcpy(l->errcode, code, sizeof(code));
	drop(l);
	return r;
}

static int lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result)
{
	int64_t deadline = now_ms() + l->reply_timeout_ms, id = ++l->next_id;
	json_t *rep = NULL;
	uint8_t *frame = NULL;
	size_t flen = 0;
	int r;

	if (result)
		*result = NULL;
	if (l->fd < 0)
		return lib_err(l, ENOTCONN, "not connected");
	r = make_frame(l, op, args, id, &frame, &flen);
	if (r < 0)
		return r;
	r = io_write(l, frame, flen, deadline);
	free(frame);
	if (r < 0)
		return refused_reply(l, id, r, result);
	for (;;) {
		r = read_reply(l, deadline, &rep);
		if (r < 0)
			break;
		if (json_integer_value(json_object_get(rep, "id")) == id ||
		    json_is_null(json_object_get(rep, "id")))
			return take_reply(l, rep, result);
		json_decref(rep); /* a reply to a request we gave up on */
	}
	drop(l);
	return r;
}

int lfs_lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result)
{
	struct sigpipe_guard g;
	int r;

	sigpipe_block(&g);
	r = lib_call(l, op, args, result);
	sigpipe_restore(&g);
	return r;
}

void lfs_lib_close(struct lfs_lib *l)
{
	struct sigpipe_guard g;

	if (!l)
		return;
	sigpipe_block(&g);
	if (l->ssl) {
		SSL_shutdown(l->ssl);
		SSL_free(l->ssl);
	}
	SSL_CTX_free(l->ctx);
	if (l->fd >= 0)
		close(l->fd);
	sigpipe_restore(&g);
	json_decref(l->info);
	OPENSSL_cleanse(l->key, sizeof(l->key));
	free(l);
}

/*
 * Asynchronous use of a connection (lfs_lib_send, lfs_lib_receive): the
 * node agent's renewal thread sends a heartbeat without waiting, watches
 * the socket's unacknowledged bytes, and takes the reply when it comes.
 */
int lfs_lib_fd(const struct lfs_lib *l)
{
	return l ? l->fd : -1;
}

int lfs_lib_send(struct lfs_lib *l, const char *op, json_t *args, int timeout_ms, int64_t *id)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : l->reply_timeout_ms);
	struct sigpipe_guard g;
	uint8_t *frame = NULL;
	size_t flen = 0;
	int r;

	if (l->fd < 0)
		return lib_err(l, ENOTCONN, "not connected");
	*id = ++l->next_id;
	r = make_frame(l, op, args, *id, &frame, &flen);
	if (r < 0)
		return r;
	sigpipe_block(&g);
	r = io_write(l, frame, flen, deadline);
	sigpipe_restore(&g);
	free(frame);
	if (r < 0)
		drop(l);
	return r;
}

/* Append what the socket has now: 1 if anything came, 0 if nothing (yet), or -errno. */
static int inbox_fill(struct lfs_lib *l, struct lfs_lib_inbox *in)
{
	size_t got = 0;
	ssize_t n;
	int r;

	if (in->cap - in->len < 4096) {
		size_t cap = in->cap ? 2 * in->cap : 16384;
		uint8_t *b = cap > 2 * (LFS_MAX_REPLY + 4) ? NULL : realloc(in->buf, cap);

		if (!b)
			return lib_err(l, ENOMEM, "out of memory for a reply");
		in->buf = b;
		in->cap = cap;
	}
	if (!l->ssl) {
		n = recv(l->fd, in->buf + in->len, in->cap - in->len, MSG_DONTWAIT);
		if (n > 0)
			in->len += (size_t)n;
		if (n == 0)
			return lib_err(l, ECONNRESET, "the librarian closed the connection");
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return lib_err(l, errno, "receive: %s", strerror(errno));
		return n > 0;
	}
	if (SSL_read_ex(l->ssl, in->buf + in->len, in->cap - in->len, &got) == 1) {
		in->len += got;
		return 1;
	}
	r = SSL_get_error(l->ssl, 0);
	if (r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE)
		return 0;
	if (r == SSL_ERROR_ZERO_RETURN)
		return lib_err(l, ECONNRESET, "the librarian closed the connection");
	return tls_errmsg(l, ECONNRESET, "receive");
}

/* A whole frame at the head of the inbox: 1 and *reply, 0 if not yet, or -errno. */
static int inbox_take(struct lfs_lib *l, struct lfs_lib_inbox *in, json_t **reply)
{
	json_error_t jerr;
	uint32_t len;

	if (in->len < 4)
		return 0;
	len = (uint32_t)in->buf[0] << 24 | in->buf[1] << 16 | in->buf[2] << 8 | in->buf[3];
	if (len > LFS_MAX_REPLY)
		return lib_err(l, EMSGSIZE, "reply of %u bytes is larger than %u", len,
			       LFS_MAX_REPLY);
	if (in->len < 4 + (size_t)len)
		return 0;
	*reply = json_loadb((const char *)in->buf + 4, len, 0, &jerr);
	in->len -= 4 + (size_t)len;
	memmove(in->buf, in->buf + 4 + len, in->len);
	if (!*reply)
		return lib_err(l, EBADMSG, "malformed reply: %s", jerr.text);
	return 1;
}

int lfs_lib_receive(struct lfs_lib *l, struct lfs_lib_inbox *in, json_t **reply)
{
	struct sigpipe_guard g;
	int r;

	*reply = NULL;
	if (l->fd < 0)
		return lib_err(l, ENOTCONN, "not connected");
	sigpipe_block(&g); /* a TLS read may write (a key update) */
	for (;;) {
		r = inbox_take(l, in, reply);
		if (r)
			break;
		r = inbox_fill(l, in);
		if (r <= 0)
			break;
	}
	sigpipe_restore(&g);
	if (r < 0)
		drop(l);
	return r;
}

int lfs_lib_reply_result(struct lfs_lib *l, json_t *reply, json_t **result)
{
	if (result)
		*result = NULL;
	return take_reply(l, reply, result);
}

void lfs_lib_inbox_free(struct lfs_lib_inbox *in)
{
	free(in->buf);
	in->buf = NULL;
	in->len = in->cap = 0;
}
