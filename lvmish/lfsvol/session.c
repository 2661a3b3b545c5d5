// SPDX-License-Identifier: GPL-2.0
/*
 * The librarian session (session.h): the running agent's, or our own.
 *
 * Borrowing: the agent keeps one authenticated session for the node and
 * lends it over STATE_DIR/agent.sock (mode 0600, root only): a request
 * costs one local round trip, and no TLS handshake. Requests are
 * {"op": OP, "args": {...}}, replies {"ok": true, "result": ...} or
 * {"ok": false, "errno": E, "message": M}; "agent.info" answers the
 * librarian's auth reply, asked only when a command needs it (the book
 * size). An agent without a session of its own answers ENOTCONN without
 * forwarding anything: then we open our own and send the request there.
 *
 * Our own: liblibrarian's TLS 1.3 session with the node's pre-shared key.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "session.h"

struct lfsvol_lib {
	struct lfsvol_ctx *ctx;
	struct lfs_lib *own; /* our own session, or NULL */
	int agent; /* agent.sock, or -1 */
	bool lost; /* agent.sock broke (the agent stopped): no more requests */
	json_t *info; /* the agent's agent.info answer, once asked */
	char err[512];
};

static int agent_call(struct lfsvol_lib *l, const char *op, json_t *args, json_t **result)
{
	json_t *req = json_pack("{s:s,s:O?}", "op", op, "args", args), *rep = NULL;
	int r;

	if (!req)
		return -ENOMEM;
	if (l->lost) {
		json_decref(req);
		return -ENOTCONN;
	}
	r = lfsvol_frame_send(l->agent, req);
	json_decref(req);
	if (!r)
		r = lfsvol_frame_recv(l->agent, &rep, LFSVOL_SOCK_TIMEOUT_MS);
	if (r) {
		snprintf(l->err, sizeof(l->err), "lost the node agent's socket: %s", strerror(-r));
		l->lost = true;
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

/* Connect to the agent's socket: no request yet. */
static int agent_connect(const char *state_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (geteuid() != 0)
		return -EPERM; /* the socket is root's */
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock", state_dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* The TLS setup our own session needs, checked before any connection. */
static int own_opts(struct lfsvol_conf *conf, struct lfs_lib_opts *o)
{
	int r;

	*o = (struct lfs_lib_opts){ .addr = conf->librarian,
				    .node = conf->node,
				    .key_file = conf->key_file,
				    .connect_timeout_ms = conf->connect_timeout * 1000,
				    .reply_timeout_ms = conf->reply_timeout * 1000 };
	if (!strncmp(o->addr, "unix:", 5))
		return 0;
	if (!o->node || !o->key_file)
		return lfsvol_fail(
			LFSVOL_ECONFIG, -EINVAL,
			"%s: `node' and `key_file' are needed to reach the librarian at %s over TLS",
			conf->path, o->addr);
	if (access(o->key_file, R_OK)) {
		r = errno;
		return lfsvol_fail(r == EACCES ? LFSVOL_EPERM : LFSVOL_ECONFIG, -r,
				   "%s: key_file `%s': %s%s", conf->path, o->key_file, strerror(r),
				   r == EACCES ? " (it is readable by root only; run as root)" :
						 "");
	}
	return 0;
}

/*
 * OpenSSL as lfsvol needs it: its TLS parameters are fixed (TLS 1.3, two
 * ciphersuites, an external PSK), so the system's openssl.cnf has nothing to
 * add, and reading it costs a good part of a session's set-up under
 * emulation; an explicit OPENSSL_CONF is honoured. No clean-up at exit:
 * the process ends right after.
 */
void lfsvol_openssl_init(void)
{
	uint64_t opts = OPENSSL_INIT_NO_ATEXIT;

	if (!getenv("OPENSSL_CONF"))
		opts |= OPENSSL_INIT_NO_LOAD_CONFIG;
	OPENSSL_init_ssl(opts, NULL);
}

static int own_open(struct lfsvol_lib *l)
{
	struct lfsvol_conf *conf = l->ctx->conf;
	struct lfs_lib_opts o;
	char *msg = NULL;
	int r;

	r = own_opts(conf, &o);
	if (r)
		return r;
	lfsvol_openssl_init();
	r = lfs_lib_connect(&o, &l->own, &msg);
	lfsvol_trace("librarian session of our own: %d", r);
	if (!r)
		return 0;
	lfsvol_fail(r == -EACCES || r == -EPERM ? LFSVOL_EPERM : LFSVOL_ELIBRARIAN, r,
		    "cannot reach the librarian at %s: %s", o.addr, msg ? msg : strerror(-r));
	lfsvol_err(
		"check that it runs and that `librarian' in %s (or --librarian) is right; gave up after at most %d s",
		conf->path, conf->connect_timeout);
	free(msg);
	return r;
}

/* The agent has no session (ENOTCONN, nothing was forwarded): use our own from now on. */
static int own_instead(struct lfsvol_lib *l)
{
	lfsvol_trace("the agent has no librarian session: opening our own");
	close(l->agent);
	l->agent = -1;
	l->lost = false;
	json_decref(l->info);
	l->info = NULL;
	return own_open(l);
}

int lfsvol_lib_open(struct lfsvol_ctx *ctx, struct lfsvol_lib **out)
{
	struct lfsvol_lib *l;
	int r;

	*out = NULL;
	r = lfsvol_need_conf(ctx);
	if (r)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return lfsvol_fail(LFSVOL_EFAIL, -ENOMEM, "out of memory");
	l->ctx = ctx;
	l->agent = -1;
	if (!ctx->no_agent && !ctx->librarian && !getenv("LFSVOL_NO_AGENT"))
		l->agent = agent_connect(ctx->conf->state_dir);
	lfsvol_trace("agent session: %s", l->agent >= 0 ? "borrowed" : "none");
	if (l->agent < 0) {
		l->agent = -1;
		r = own_open(l);
		if (r) {
			free(l);
			return r;
		}
	}
	*out = l;
	return 0;
}

void lfsvol_lib_close(struct lfsvol_lib *l)
{
	if (!l)
		return;
	if (l->agent >= 0)
		close(l->agent);
	json_decref(l->info);
	lfs_lib_close(l->own);
	free(l);
}

int lfsvol_lib_call(struct lfsvol_lib *l, const char *op, json_t *args, json_t **result)
{
	int r;

	if (result)
		*result = NULL;
	if (l->agent >= 0) {
		r = agent_call(l, op, args, result);
		if (r != -ENOTCONN)
			goto out;
		r = own_instead(l);
		if (r)
			goto out;
	}
	r = lfs_lib_call(l->own, op, args, result);
	if (r == -EREMOTE && strchr(l->ctx->conf->librarian, ',')) {
		/*
		 * A standby now (a deposed leader): it did nothing (docs/HA.md).
		 * Once more, through the list, to the leader.
		 */
		lfsvol_trace("%s: %s; connecting to the leader", op, lfs_lib_errmsg(l->own));
		lfs_lib_close(l->own);
		l->own = NULL;
		r = own_open(l);
		if (!r)
			r = lfs_lib_call(l->own, op, args, result);
	}
out:
	json_decref(args);
	return r;
}

const char *lfsvol_lib_errmsg(const struct lfsvol_lib *l)
{
	return l->agent >= 0 ? l->err : lfs_lib_errmsg(l->own);
}

int lfsvol_lib_fail(struct lfsvol_lib *l, const char *what, int r)
{
	enum lfsvol_exit code = LFSVOL_ELIBRARIAN;

	switch (-r) {
	case ENOENT:
		code = LFSVOL_ENOENT;
		break;
	case EBUSY:
		code = LFSVOL_EREFUSED;
		break;
	case EINVAL:
	case EEXIST:
		code = LFSVOL_EUSAGE;
		break;
	case EACCES:
	case EPERM:
		code = LFSVOL_EPERM;
		break;
	}
	lfsvol_fail(code, r, "%s: librarian: %s", what, lfsvol_lib_errmsg(l));
	if (r == -ENOENT)
		lfsvol_err("`%s list' shows the shelves that exist", lfsvol_prog);
	else if (r == -ENOSPC)
		lfsvol_err("`%s fabric' shows the free books per node", lfsvol_prog);
	return r;
}

int lfsvol_lib_request(struct lfsvol_lib *l, const char *what, const char *op, json_t *args,
		       json_t **result)
{
	int r = lfsvol_lib_call(l, op, args, result);

	return r ? lfsvol_lib_fail(l, what, r) : 0;
}

json_t *lfsvol_lib_info(struct lfsvol_lib *l)
{
	int r;

	if (l->agent < 0)
		return lfs_lib_server_info(l->own);
	if (!l->info) {
		r = agent_call(l, "agent.info", NULL, &l->info);
		if (r == -ENOTCONN && !own_instead(l))
			return lfs_lib_server_info(l->own);
	}
	return l->info;
}

bool lfsvol_lib_alive(const struct lfsvol_lib *l)
{
	return l && !l->lost && (l->agent >= 0 || lfs_lib_connected(l->own));
}

bool lfsvol_lib_hung_up(const struct lfsvol_lib *l)
{
	struct pollfd p;

	if (!l || !l->own || !lfs_lib_connected(l->own))
		return false;
	/* between requests nothing may arrive: readable means closed (or broken) */
	p = (struct pollfd){ .fd = lfs_lib_fd(l->own), .events = POLLIN };
	return poll(&p, 1, 0) > 0;
}

bool lfsvol_lib_borrowed(const struct lfsvol_lib *l)
{
	return l && l->agent >= 0;
}

bool lfsvol_agent_answers(const char *state_dir)
{
	int fd = agent_connect(state_dir);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

long long lfsvol_lib_lease_time(struct lfsvol_lib *l)
{
	json_int_t t = json_integer_value(json_object_get(lfsvol_lib_info(l), "lease_time"));

	return t > 0 ? (long long)t : 0;
}

uint64_t lfsvol_lib_book_size(struct lfsvol_lib *l)
{
	json_int_t bs = json_integer_value(json_object_get(lfsvol_lib_info(l), "book_size"));

	return bs > 0 ? (uint64_t)bs : 0;
}

struct name_pages {
	struct lfsvol_lib *l;
	const char *name;
};

static int next_by_name(void *arg, size_t offset, json_t **page)
{
	struct name_pages *p = arg;

	return lfsvol_lib_call(
		p->l, "shelf.get",
		json_pack("{s:s,s:I}", "name", p->name, "offset", (json_int_t)offset), page);
}

int lfsvol_lib_shelf_map(struct lfsvol_lib *l, const char *name, json_t *first,
			 struct lfs_book **books, size_t *n)
{
	json_int_t total = json_integer_value(json_object_get(first, "books"));
	struct name_pages p = { .l = l, .name = name };
	int r;

	*n = 0;
	*books = NULL;
	if (total < 0 || total > LFS_SHELF_BOOKS_MAX)
		return -EPROTO;
	*books = calloc(total ? (size_t)total : 1, sizeof(**books));
	if (!*books)
		return -ENOMEM;
	r = lfsvol_book_map(first, (size_t)total, next_by_name, &p, *books);
	if (r) {
		free(*books);
		*books = NULL;
		return r;
	}
	*n = (size_t)total;
	return 0;
}
