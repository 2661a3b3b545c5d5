// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: a session with the librarian over TLS 1.3 (external PSK)
 * or a unix socket: connect (the auth request and the protocol check),
 * calls, close, and the session's last error. Non-blocking sockets and
 * poll() with deadlines (client_io.c), so no call blocks past its timeout.
 * A librarian that closes the connection is an error (ECONNRESET, EPIPE)
 * returned to the caller, never a SIGPIPE that kills it. See
 * lfs_librarian.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/ssl.h>

#include "client_int.h"

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
		return lc_err(
			l, EPROTONOSUPPORT,
			"the librarian at %s names no protocol version; this client speaks version %d",
			addr, LFS_PROTOCOL_VERSION);
	return lc_err(l, EPROTONOSUPPORT,
		      "the librarian at %s speaks protocol version %" JSON_INTEGER_FORMAT
		      "; this client speaks version %d",
		      addr, json_integer_value(p), LFS_PROTOCOL_VERSION);
}

static int lib_connect(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg);
static int lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result);

int lfs_lib_connect_one(const struct lfs_lib_opts *o, struct lfs_lib **out, char **errmsg)
{
	struct lc_sigpipe_guard g;
	int r;

	lc_sigpipe_block(&g);
	r = lib_connect(o, out, errmsg);
	lc_sigpipe_restore(&g);
	return r;
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
	deadline = lc_now_ms() + (o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000);
	if (!o->addr)
		r = lc_err(l, EINVAL, "no librarian address given");
	else if (strncmp(o->addr, "unix:", 5))
		r = lc_tls_prepare(l, o);
	else
		r = 0;
	if (r < 0 || (r = lc_open_socket(l, o->addr, deadline)) < 0)
		goto fail;
	if (l->ssl) {
		SSL_set_fd(l->ssl, l->fd);
		if ((r = lc_tls_handshake(l, deadline)) < 0)
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
	if (lc_read_reply(l, lc_now_ms() + 1000, &rep) == 0) {
		if (json_integer_value(json_object_get(rep, "id")) == id ||
		    json_is_null(json_object_get(rep, "id"))) {
			r = lc_take_reply(l, rep, result);
			lc_drop(l);
			return r;
		}
		json_decref(rep);
	}
	memcpy(l->errmsg, msg, sizeof(msg));
	memcpy(l->errcode, code, sizeof(code));
	lc_drop(l);
	return r;
}

static int lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result)
{
	int64_t deadline = lc_now_ms() + l->reply_timeout_ms, id = ++l->next_id;
	json_t *rep = NULL;
	uint8_t *frame = NULL;
	size_t flen = 0;
	int r;

	if (result)
		*result = NULL;
	if (l->fd < 0)
		return lc_err(l, ENOTCONN, "not connected");
	r = lc_make_frame(l, op, args, id, &frame, &flen);
	if (r < 0)
		return r;
	r = lc_write(l, frame, flen, deadline);
	free(frame);
	if (r < 0)
		return refused_reply(l, id, r, result);
	for (;;) {
		r = lc_read_reply(l, deadline, &rep);
		if (r < 0)
			break;
		if (json_integer_value(json_object_get(rep, "id")) == id ||
		    json_is_null(json_object_get(rep, "id")))
			return lc_take_reply(l, rep, result);
		json_decref(rep); /* a reply to a request we gave up on */
	}
	lc_drop(l);
	return r;
}

int lfs_lib_call(struct lfs_lib *l, const char *op, json_t *args, json_t **result)
{
	struct lc_sigpipe_guard g;
	int r;

	lc_sigpipe_block(&g);
	r = lib_call(l, op, args, result);
	lc_sigpipe_restore(&g);
	return r;
}

void lfs_lib_close(struct lfs_lib *l)
{
	struct lc_sigpipe_guard g;

	if (!l)
		return;
	lc_sigpipe_block(&g);
	if (l->ssl) {
		SSL_shutdown(l->ssl);
		SSL_free(l->ssl);
	}
	SSL_CTX_free(l->ctx);
	if (l->fd >= 0)
		close(l->fd);
	lc_sigpipe_restore(&g);
	json_decref(l->info);
	OPENSSL_cleanse(l->key, sizeof(l->key));
	free(l);
}
