// SPDX-License-Identifier: GPL-2.0
/*
 * The upcall server's threads (upserver.h, docs/NAMESPACE.md "What the node
 * agent does").
 *
 * A receiver thread owns the registered generic netlink socket: it
 * registers it (LFS_CMD_UPCALL_REGISTER), copies each request into the
 * queue, and reads the kernel's refusals of replies (extended acks). Every
 * UP_CHECK_MS it asks the kernel (LFS_CMD_UPCALL_GET, on a session of its
 * own) whether the socket is still the node's server: after lfs.ko was
 * unloaded and loaded again it is not, and a new socket registers.
 *
 * LFSVOL_UP_WORKERS workers take requests off the queue, each with its own
 * librarian session (a session is not thread-safe; the renewal thread has
 * its own for the same reason), and answer on the registered socket; only
 * the sending is serialised. The agent never touches the filesystem
 * itself: it would wait for its own answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "client.h"
#include "lfs_librarian.h"
#include "msg.h"
#include "upserver.h"

#define UP_CHECK_MS 2000
#define UP_WATCH 256 /* OPEN replies remembered until the kernel may refuse them */
#define UP_STACK (512 << 10)

struct up_watch {
	uint32_t seq;
	bool live;
	uint8_t uuid[LFS_UUID_LEN];
	char name[LFSVOL_UP_NAME_MAX + 1];
};

struct up_server {
	const struct lfsvol_conf *conf;
	up_handler_fn handle; /* a worker's answer to one request (up_dispatch) */
	struct nl_sock *up; /* the registered socket, or NULL */
	int family;
	pthread_mutex_t send_mu; /* guards up, family and watch */
	struct up_watch watch[UP_WATCH];
	unsigned int watch_next;
	pthread_mutex_t q_mu;
	pthread_cond_t q_cond;
	struct up_req *q[LFS_UP_PENDING_MAX + UP_WATCH]; /* in arrival order */
	unsigned int q_len;
	const struct up_req *busy[LFSVOL_UP_WORKERS]; /* being answered */
	int stop;
	int wake[2];
	pthread_t receiver;
	pthread_t threads[LFSVOL_UP_WORKERS];
	struct up_worker workers[LFSVOL_UP_WORKERS];
	int nthreads;
	bool receiving;
};

static void req_free(struct up_req *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->new_name);
	free(r->policy);
	free(r->xname);
	free(r->xvalue);
	free(r);
}

/* Queue a request for the workers; dropped (the caller times out) if the queue is full. */
static void enqueue(struct up_server *srv, struct up_req *r)
{
	unsigned int cap = sizeof(srv->q) / sizeof(srv->q[0]);

	pthread_mutex_lock(&srv->q_mu);
	if (srv->q_len == cap) {
		pthread_mutex_unlock(&srv->q_mu);
		lfsvol_err("upcall: request %u dropped: %u requests queued", r->id, cap);
		req_free(r);
		return;
	}
	srv->q[srv->q_len++] = r;
	pthread_cond_signal(&srv->q_cond);
	pthread_mutex_unlock(&srv->q_mu);
}

/* Do two requests concern the same file (name or UUID)? */
static bool same_file(const struct up_req *a, const struct up_req *b)
{
	return (a->name && b->name && !strcmp(a->name, b->name)) ||
	       (a->has_uuid && b->has_uuid && !memcmp(a->uuid, b->uuid, LFS_UUID_LEN));
}

/*
 * The oldest request no other worker answers a request of the same file
 * for: a file's requests are answered in their order (a CLOSE sets the
 * size a LOOKUP sent right after it must see), other files' at once.
 */
static int next_free(struct up_server *srv)
{
	for (unsigned int i = 0; i < srv->q_len; i++) {
		bool held = false;

		for (int k = 0; k < LFSVOL_UP_WORKERS && !held; k++)
			held = srv->busy[k] && same_file(srv->busy[k], srv->q[i]);
		for (unsigned int k = 0; k < i && !held; k++)
			held = same_file(srv->q[k], srv->q[i]);
		if (!held)
			return (int)i;
	}
	return -1;
}

/*
 * The worker in slot is done with its request: no longer busy with that
 * file. Before the request is freed: next_free() compares other requests
 * with it under q_mu (a freed one made the agent crash in strcmp). Idle
 * workers are woken only if a request waits (one of that file may now be
 * free): with none, waking them all for nothing took the CPU the next
 * request needed.
 */
static void finished(struct up_server *srv, int slot)
{
	pthread_mutex_lock(&srv->q_mu);
	srv->busy[slot] = NULL;
	if (srv->q_len)
		pthread_cond_broadcast(&srv->q_cond);
	pthread_mutex_unlock(&srv->q_mu);
}

static struct up_req *dequeue(struct up_server *srv, int slot)
{
	struct up_req *r = NULL;
	int i;

	pthread_mutex_lock(&srv->q_mu);
	while ((i = next_free(srv)) < 0 && !__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&srv->q_cond, &srv->q_mu);
	if (i >= 0 && !__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE)) {
		r = srv->q[i];
		memmove(srv->q + i, srv->q + i + 1, (srv->q_len - i - 1) * sizeof(srv->q[0]));
		srv->q_len--;
		srv->busy[slot] = r;
	}
	pthread_mutex_unlock(&srv->q_mu);
	return r;
}

int up_family(struct up_server *srv)
{
	int f;

	pthread_mutex_lock(&srv->send_mu);
	f = srv->family;
	pthread_mutex_unlock(&srv->send_mu);
	return f;
}

int up_send(struct up_server *srv, struct nl_msg *msg, uint32_t *seq)
{
	int ret = -NLE_BAD_SOCK;

	pthread_mutex_lock(&srv->send_mu);
	if (srv->up)
		ret = nl_send_auto(srv->up, msg);
	if (ret >= 0 && seq)
		*seq = nlmsg_hdr(msg)->nlmsg_seq;
	pthread_mutex_unlock(&srv->send_mu);
	nlmsg_free(msg);
	if (ret < 0) {
		lfsvol_err("upcall: sending a reply failed: %s", nl_geterror(ret));
		return -EIO;
	}
	return 0;
}

void up_watch_open(struct up_server *srv, uint32_t seq, const char *name, const uint8_t *uuid)
{
	struct up_watch *w;

	pthread_mutex_lock(&srv->send_mu);
	w = &srv->watch[srv->watch_next++ % UP_WATCH];
	*w = (struct up_watch){ .seq = seq, .live = true };
	memcpy(w->uuid, uuid, LFS_UUID_LEN);
	snprintf(w->name, sizeof(w->name), "%s", name);
	pthread_mutex_unlock(&srv->send_mu);
}

/* The kernel refused the reply sent as seq: an OPEN among them is undone by a worker. */
static void refused(struct up_server *srv, uint32_t seq)
{
	struct up_req *r = NULL;

	pthread_mutex_lock(&srv->send_mu);
	for (unsigned int i = 0; i < UP_WATCH && !r; i++) {
		struct up_watch *w = &srv->watch[i];

		if (!w->live || w->seq != seq)
			continue;
		w->live = false;
		r = calloc(1, sizeof(*r));
		if (r) {
			r->op = LFSVOL_UP_UNDO_OPEN;
			r->name = strdup(w->name);
			memcpy(r->uuid, w->uuid, LFS_UUID_LEN);
			r->has_uuid = true;
		}
	}
	pthread_mutex_unlock(&srv->send_mu);
	if (r)
		enqueue(srv, r);
}

/* The registration's answer. */
static int on_reg_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	(void)nla;
	*(int *)arg = err->error ? err->error : -EIO;
	lfsvol_err("upcall: kernel reports: %s", lfs_ext_ack_msg(err));
	return NL_STOP;
}

/* The kernel refused a reply: that request is over (an OPEN is undone). */
static int on_refused(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	(void)nla;
	lfsvol_err("upcall: the kernel refused a reply (%s): %s", strerror(-err->error),
		   lfs_ext_ack_msg(err));
	refused(arg, err->msg.nlmsg_seq);
	return NL_SKIP;
}

static char *attr_dup(struct nlattr *a)
{
	return a ? strndup(nla_data(a), nla_len(a)) : NULL;
}

static struct up_req *req_parse(struct nlattr **tb)
{
	struct up_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->id = nla_get_u32(tb[LFS_A_UP_ID]);
	r->op = tb[LFS_A_UP_OP] ? nla_get_u32(tb[LFS_A_UP_OP]) : 0;
	r->flags = tb[LFS_A_UP_FLAGS] ? nla_get_u32(tb[LFS_A_UP_FLAGS]) : 0;
	r->name = attr_dup(tb[LFS_A_NAME]);
	r->new_name = attr_dup(tb[LFS_A_NEW_NAME]);
	r->policy = attr_dup(tb[LFS_A_POLICY]);
	r->xname = attr_dup(tb[LFS_A_XATTR_NAME]);
	if (tb[LFS_A_UUID] && nla_len(tb[LFS_A_UUID]) == LFS_UUID_LEN) {
		memcpy(r->uuid, nla_data(tb[LFS_A_UUID]), LFS_UUID_LEN);
		r->has_uuid = true;
	}
	if (tb[LFS_A_XATTR_VALUE]) {
		r->xlen = nla_len(tb[LFS_A_XATTR_VALUE]);
		r->xvalue = malloc(r->xlen + 1);
		if (r->xvalue)
			memcpy(r->xvalue, nla_data(tb[LFS_A_XATTR_VALUE]), r->xlen);
	}
	r->has_size = tb[LFS_A_SIZE];
	r->size = r->has_size ? nla_get_u64(tb[LFS_A_SIZE]) : 0;
	return r;
}

static int on_request(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[LFS_A_MAX + 1];
	struct up_req *r;

	if (g->cmd != LFS_CMD_UPCALL_REQUEST ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, LFS_A_MAX, NULL) || !tb[LFS_A_UP_ID])
		return NL_OK;
	r = req_parse(tb);
	if (r)
		enqueue(arg, r);
	else
		lfsvol_err("upcall: out of memory for a request");
	return NL_OK;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 1;
	return NL_STOP;
}

/* A new socket, registered as the node's upcall server; NULL (and why in the log) if not. */
static struct nl_sock *sock_register(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct nl_msg *msg = nlmsg_alloc();
	int one = 1, done = 0, status = 0, ret = -NLE_NOMEM;
	int rcvbuf = LFS_UP_PENDING_MAX * LFS_UP_REQUEST_MAX;
	static bool warned; /* the receiver thread's: one message while a mismatch lasts */
	char why[256];

	if (!sk || !cb || !msg || genl_connect(sk))
		goto out;
	ret = *family = lfs_genl_family(sk, LFS_GENL_NAME, LFS_GENL_VERSION, why, sizeof(why));
	if (ret == -EPROTONOSUPPORT && !warned)
		lfsvol_err("upcall: %s: not serving the filesystem", why);
	warned = ret == -EPROTONOSUPPORT;
	if (ret < 0)
		goto out; /* no module, or not ours: tried again */
	nl_socket_disable_seq_check(sk);
	nl_socket_disable_auto_ack(sk);
	nl_socket_set_buffer_size(sk, rcvbuf, 1 << 20);
	/* as root the buffer may exceed rmem_max */
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, *family, 0, NLM_F_ACK, LFS_CMD_UPCALL_REGISTER,
		    LFS_GENL_VERSION);
	nl_cb_err(cb, NL_CB_CUSTOM, on_reg_error, &status);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &done);
	ret = nl_send_auto(sk, msg);
	while (ret >= 0 && !done && !status)
		ret = nl_recvmsgs(sk, cb);
	if (status)
		lfsvol_err("upcall: cannot register as the filesystem's upcall server: %s",
			   strerror(-status));
	else if (ret >= 0)
		lfsvol_info("upcall: serving the lfs filesystem (portid %u)",
			    nl_socket_get_local_port(sk));
	ret = status ? status : ret;
out:
	nlmsg_free(msg);
	nl_cb_put(cb);
	if (ret < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_set_nonblocking(sk);
	return sk;
}

static int upcall_portid(struct nlattr **tb, void *arg)
{
	*(uint32_t *)arg = tb[LFS_A_UP_PORTID] ? nla_get_u32(tb[LFS_A_UP_PORTID]) : 0;
	return 0;
}

/* Is sk (still) the node's upcall server? A reloaded module forgot it. */
static bool still_registered(struct nl_sock *sk)
{
	struct lfs_client *c;
	struct nl_msg *msg;
	uint32_t portid = 0;
	int r;

	if (lfs_client_open(&c))
		return false;
	msg = lfs_msg_new(c, LFS_CMD_UPCALL_GET, 0, 1024);
	r = msg ? lfs_request(c, msg, upcall_portid, &portid) : -ENOMEM;
	lfs_client_close(c);
	return !r && portid == nl_socket_get_local_port(sk);
}

/* (Re-)register: replace the socket (under send_mu: the workers send on it). */
static void receiver_register(struct up_server *srv)
{
	int family = 0;
	struct nl_sock *sk = sock_register(&family), *old;

	pthread_mutex_lock(&srv->send_mu);
	old = srv->up;
	srv->up = sk;
	srv->family = family;
	pthread_mutex_unlock(&srv->send_mu);
	if (old)
		nl_socket_free(old);
}

static void receiver_read(struct up_server *srv, struct nl_cb *cb)
{
	int ret;

	do
		ret = nl_recvmsgs(srv->up, cb);
	while (ret >= 0 && !__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE));
	if (ret < 0 && ret != -NLE_AGAIN)
		lfsvol_err("upcall: receiving failed: %s", nl_geterror(ret));
}

static void *receiver_main(void *arg)
{
	struct up_server *srv = arg;
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int64_t next_check = 0;

	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_request, srv);
	nl_cb_err(cb, NL_CB_CUSTOM, on_refused, srv);
	while (!__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p[2] = { { .fd = srv->up ? nl_socket_get_fd(srv->up) : -1,
					 .events = POLLIN },
				       { .fd = srv->wake[0], .events = POLLIN } };

		if (lfsvol_now_ms() >= next_check) {
			if (!srv->up || !still_registered(srv->up))
				receiver_register(srv);
			next_check = lfsvol_now_ms() + UP_CHECK_MS;
			continue;
		}
		if (poll(p, 2, UP_CHECK_MS) > 0 && (p[0].revents & POLLIN))
			receiver_read(srv, cb);
	}
	nl_cb_put(cb);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct up_worker *w = arg;
	struct up_req *r;

	while ((r = dequeue(w->srv, (int)(w - w->srv->workers)))) {
		w->srv->handle(w, r);
		finished(w->srv, (int)(w - w->srv->workers));
		req_free(r);
	}
	lfs_lib_close(w->lib);
	w->lib = NULL;
	lfs_client_close(w->drv);
	w->drv = NULL;
	return NULL;
}

static int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	/* SIGTERM and SIGINT are the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, UP_STACK);
	r = -pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int lfsvol_upcall_start(const struct lfsvol_conf *conf, up_handler_fn handle,
			struct up_server **out)
{
	struct up_server *srv = calloc(1, sizeof(*srv));
	int r;

	if (!srv)
		return -ENOMEM;
	srv->conf = conf;
	srv->handle = handle;
	pthread_mutex_init(&srv->send_mu, NULL);
	pthread_mutex_init(&srv->q_mu, NULL);
	pthread_cond_init(&srv->q_cond, NULL);
	srv->wake[0] = srv->wake[1] = -1;
	*out = srv;
	if (pipe2(srv->wake, O_CLOEXEC))
		return -errno;
	for (int i = 0; i < LFSVOL_UP_WORKERS; i++) {
		srv->workers[i] = (struct up_worker){ .srv = srv, .conf = conf };
		r = thread_start(&srv->threads[i], worker_main, &srv->workers[i]);
		if (r)
			return r;
		srv->nthreads++;
	}
	r = thread_start(&srv->receiver, receiver_main, srv);
	srv->receiving = !r;
	return r;
}

void lfsvol_upcall_stop(struct up_server *srv)
{
	if (!srv)
		return;
	__atomic_store_n(&srv->stop, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&srv->q_mu);
	pthread_cond_broadcast(&srv->q_cond);
	pthread_mutex_unlock(&srv->q_mu);
	if (srv->wake[1] >= 0 && write(srv->wake[1], "x", 1) < 0)
		lfsvol_trace("waking the upcall receiver: %s", strerror(errno));
	if (srv->receiving)
		pthread_join(srv->receiver, NULL);
	for (int i = 0; i < srv->nthreads; i++)
		pthread_join(srv->threads[i], NULL);
	while (srv->q_len)
		req_free(srv->q[--srv->q_len]);
	/* closing the socket unregisters: pending callers get ENOTCONN */
	if (srv->up)
		nl_socket_free(srv->up);
	if (srv->wake[0] >= 0)
		close(srv->wake[0]);
	if (srv->wake[1] >= 0)
		close(srv->wake[1]);
	free(srv);
}
