// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian, asynchronous use of a connection (lfs_lib_send,
 * lfs_lib_receive): the node agent's renewal thread sends a heartbeat
 * without waiting, watches the socket's unacknowledged bytes, and takes
 * the reply when it comes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <openssl/ssl.h>

#include "client_int.h"
int lfs_lib_fd(const struct lfs_lib *l)
{
	return l ? l->fd : -1;
}

int lfs_lib_send(struct lfs_lib *l, const char *op, json_t *args, int timeout_ms, int64_t *id)
{
	int64_t deadline = lc_now_ms() + (timeout_ms > 0 ? timeout_ms : l->reply_timeout_ms);
	struct lc_sigpipe_guard g;
	uint8_t *frame = NULL;
	size_t flen = 0;
	int r;

	if (l->fd < 0)
		return lc_err(l, ENOTCONN, "not connected");
	*id = ++l->next_id;
	r = lc_make_frame(l, op, args, *id, &frame, &flen);
	if (r < 0)
		return r;
	lc_sigpipe_block(&g);
	r = lc_write(l, frame, flen, deadline);
	lc_sigpipe_restore(&g);
	free(frame);
	if (r < 0)
		lc_drop(l);
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
			return lc_err(l, ENOMEM, "out of memory for a reply");
		in->buf = b;
		in->cap = cap;
	}
	if (!l->ssl) {
		n = recv(l->fd, in->buf + in->len, in->cap - in->len, MSG_DONTWAIT);
		if (n > 0)
			in->len += (size_t)n;
		if (n == 0)
			return lc_err(l, ECONNRESET, "the librarian closed the connection");
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return lc_err(l, errno, "receive: %s", strerror(errno));
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
		return lc_err(l, ECONNRESET, "the librarian closed the connection");
	return lc_tls_errmsg(l, ECONNRESET, "receive");
}

/* A whole frame at the head of the inbox: 1 and *reply, 0 if not yet, or -errno. */
static int inbox_take(struct lfs_lib *l, struct lfs_lib_inbox *in, json_t **reply)
{
	char why[JSON_ERROR_TEXT_LENGTH];
	uint32_t len;

	if (in->len < 4)
		return 0;
	len = (uint32_t)in->buf[0] << 24 | in->buf[1] << 16 | in->buf[2] << 8 | in->buf[3];
	if (len > LFS_MAX_REPLY)
		return lc_err(l, EMSGSIZE, "reply of %u bytes is larger than %u", len,
			      LFS_MAX_REPLY);
	if (in->len < 4 + (size_t)len)
		return 0;
	*reply = lc_json_parse((const char *)in->buf + 4, len, why, sizeof(why));
	in->len -= 4 + (size_t)len;
	memmove(in->buf, in->buf + 4 + len, in->len);
	if (!*reply)
		return lc_err(l, EBADMSG, "malformed reply: %s", why);
	return 1;
}

int lfs_lib_receive(struct lfs_lib *l, struct lfs_lib_inbox *in, json_t **reply)
{
	struct lc_sigpipe_guard g;
	int r;

	*reply = NULL;
	if (l->fd < 0)
		return lc_err(l, ENOTCONN, "not connected");
	lc_sigpipe_block(&g); /* a TLS read may write (a key update) */
	for (;;) {
		r = inbox_take(l, in, reply);
		if (r)
			break;
		r = inbox_fill(l, in);
		if (r <= 0)
			break;
	}
	lc_sigpipe_restore(&g);
	if (r < 0)
		lc_drop(l);
	return r;
}

int lfs_lib_reply_result(struct lfs_lib *l, json_t *reply, json_t **result)
{
	if (result)
		*result = NULL;
	return lc_take_reply(l, reply, result);
}

void lfs_lib_inbox_free(struct lfs_lib_inbox *in)
{
	free(in->buf);
	in->buf = NULL;
	in->len = in->cap = 0;
}
