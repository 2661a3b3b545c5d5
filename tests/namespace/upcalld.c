// SPDX-License-Identifier: MIT
/*
 * upcalld: a test upcall server of the lfs filesystem (driver/uapi/lfs.h,
 * docs/NAMESPACE.md), standing in for the node agent so that the
 * filesystem is tested without it and the librarian. It registers as the
 * node's upcall server, answers every request from its catalogue
 * (catalog.c, attrs.c, state.c), and misbehaves when a fault file says so.
 *
 * usage: upcalld [--state FILE] [--fault FILE] [--log FILE] [--lease MS]
 *                [--fence-action reset|eio] [--leased] [--local-ig IG]
 *                [--map-batch N] [--list-batch N] [--readonly NAME]
 *   --state FILE    keep the catalogue in FILE (read at the start)
 *   --fault FILE    read before every request, one "ACTION OP [ARG]" a line:
 *                     drop OP            never answer
 *                     die OP             exit at once, without an answer
 *                     delay OP SECONDS   answer late
 *                     errno OP N         answer with errno N
 *                     badmap OP IG:BOOK  the map's first book is IG:BOOK
 *                     badsize OP         a size that does not fit the books
 *                     norenew            stop renewing the lease
 *                   OP is an operation's name (LOOKUP, OPEN...) or '*'
 *   --log FILE      a line per request and per reply the kernel refused
 *   --lease MS      renew the node's lease every MS/4
 *   --fence-action reset|eio  the lease's fence action (default eio)
 *   --leased        answer OPEN with LFS_A_LEASED (covered by the lease)
 *   --local-ig IG   the IG of policy LocalNode (default 0)
 *   --map-batch N   books per reply message (default 8191): LFS_A_MORE
 *   --list-batch N  entries per LIST message (default 100)
 *   --readonly NAME shelves created with this name are read-only here
 * Prints "ready" once registered; SIGTERM saves the catalogue and exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "liblfsnl.h"
#include "client.h"
#include "upcalld.h"

static const char *const op_names[LFS_UP_MAX + 1] = {
	[LFS_UP_LOOKUP] = "LOOKUP",	  [LFS_UP_LIST] = "LIST",
	[LFS_UP_CREATE] = "CREATE",	  [LFS_UP_OPEN] = "OPEN",
	[LFS_UP_CLOSE] = "CLOSE",	  [LFS_UP_RESIZE] = "RESIZE",
	[LFS_UP_SETSIZE] = "SETSIZE",	  [LFS_UP_DESTROY] = "DESTROY",
	[LFS_UP_RENAME] = "RENAME",	  [LFS_UP_GETXATTR] = "GETXATTR",
	[LFS_UP_SETXATTR] = "SETXATTR",	  [LFS_UP_LISTXATTR] = "LISTXATTR",
	[LFS_UP_REMOVEXATTR] = "REMOVEXATTR", [LFS_UP_STATFS] = "STATFS",
	[LFS_UP_CREATE_OPEN] = "CREATE_OPEN",
};

struct request {
	uint32_t id, op, flags;
	const char *name, *new_name, *policy, *xname;
	const uint8_t *uuid;
	const char *xvalue;
	size_t xlen;
	bool has_size;
	uint64_t size;
};

struct fault {
	bool badsize;
	bool badmap;
	struct lfs_book book;
};

/*
 * An OPEN whose reply the kernel refused (or no longer waited for) left no
 * activation there: it is undone here too. The replies sent lately, by
 * sequence number.
 */
struct sent {
	uint32_t seq;
	uint8_t uuid[LFS_UUID_LEN];
	int prev_active; /* -1: nothing to undo */
};

#define SENT_RING 256
static struct sent sent_ring[SENT_RING];
static unsigned int sent_next;
static struct sent undo = { .prev_active = -1 };

static struct catalog cat = { .policy_default = "RandomBooks" };
static struct lfs_client *ctl;
static struct nl_sock *up;
static int family;
static FILE *logf;
static const char *fault_path, *readonly_name;
static bool opt_leased, renew = true;
static uint32_t lease_ms, map_batch = LFS_BOOKS_PER_ATTR, list_batch = 100;
static uint32_t fence_action = LFS_FENCE_EIO;
static volatile sig_atomic_t stop;

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	if (!logf)
		return;
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
	fflush(logf);
}

static int zero_books(const struct lfs_book *books, size_t n, bool *zeroed)
{
	return lfsnl_books_zero(ctl, books, n, zeroed);
}

/* Replies */

static struct nl_msg *reply_new(uint32_t id, size_t size)
{
	struct nl_msg *msg = nlmsg_alloc_size(size);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, LFS_CMD_UPCALL_REPLY,
			 LFS_GENL_VERSION) ||
	    nla_put_u32(msg, LFS_A_UP_ID, id)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int reply_send(struct nl_msg *msg)
{
	int ret = msg ? nl_send_auto(up, msg) : -NLE_NOMEM;

	if (ret >= 0 && undo.prev_active >= 0) {
		undo.seq = nlmsg_hdr(msg)->nlmsg_seq;
		sent_ring[sent_next++ % SENT_RING] = undo;
	}
	nlmsg_free(msg);
	if (ret < 0)
		logmsg("sending a reply failed: %s", nl_geterror(ret));
	return ret < 0 ? -EIO : 0;
}

static int reply_errno(uint32_t id, int err)
{
	struct nl_msg *msg = reply_new(id, 4096);

	if (msg && nla_put_u32(msg, LFS_A_UP_ERRNO, err)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return reply_send(msg);
}

static int put_attrs(struct nl_msg *msg, struct shelf *s, uint32_t op, const struct fault *f)
{
	uint64_t bs = s->nr_books ? cat_book_size(&cat) : 0;
	uint64_t size = f->badsize ? (uint64_t)s->nr_books * bs + 4096 : s->size;

	return nla_put(msg, LFS_A_UUID, LFS_UUID_LEN, s->uuid) ||
	       nla_put_u64(msg, LFS_A_INO, s->ino) || nla_put_u64(msg, LFS_A_SIZE, size) ||
	       nla_put_u32(msg, LFS_A_NR_BOOKS, s->nr_books) ||
	       nla_put_u64(msg, LFS_A_BOOK_SIZE, bs) || nla_put_u64(msg, LFS_A_MTIME, s->mtime) ||
	       nla_put_u64(msg, LFS_A_CTIME, s->ctime) ||
	       nla_put_u8(msg, LFS_A_WRITABLE, s->writable) ||
	       (op == LFS_UP_OPEN && opt_leased && nla_put_flag(msg, LFS_A_LEASED));
}

/* Attributes in the first message, the book map in parts of map_batch. */
static int reply_map(const struct request *r, struct shelf *s, const struct fault *f)
{
	struct lfs_book *books = s->books, first = { 0 };
	uint32_t start = 0, n;
	struct nl_msg *msg;
	int ret;

	if (f->badmap && s->nr_books) {
		/* the catalogue keeps its book; the reply says another */
		first = books[0];
		books[0] = f->book;
	}
	do {
		n = s->nr_books - start < map_batch ? s->nr_books - start : map_batch;
		msg = reply_new(r->id, 8192 + n * sizeof(struct lfs_book));
		if (!msg || (!start && put_attrs(msg, s, r->op, f)) ||
		    (n && (nla_put_u32(msg, LFS_A_BOOKS_START, start) ||
			   nla_put(msg, LFS_A_BOOKS, n * sizeof(struct lfs_book),
				   s->books + start))) ||
		    (start + n < s->nr_books && nla_put_flag(msg, LFS_A_MORE))) {
			nlmsg_free(msg);
			ret = -ENOMEM;
			break;
		}
		ret = reply_send(msg);
		start += n;
	} while (!ret && start < s->nr_books);
	if (f->badmap && s->nr_books)
		books[0] = first;
	return ret;
}

static int reply_attrs(const struct request *r, struct shelf *s, const struct fault *f)
{
	struct nl_msg *msg = reply_new(r->id, 4096);

	if (msg && put_attrs(msg, s, r->op, f)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return reply_send(msg);
}

static int reply_list(const struct request *r)
{
	size_t i = 0, k;
	struct nl_msg *msg;
	struct nlattr *list, *e;
	int ret = 0;

	do {
		msg = reply_new(r->id, 8192 + list_batch * 96);
		list = msg ? nla_nest_start(msg, LFS_A_ENTRIES | NLA_F_NESTED) : NULL;
		if (!list)
			goto fail;
		for (k = 0; k < list_batch && i < cat.n; k++, i++) {
			e = nla_nest_start(msg, (k + 1) | NLA_F_NESTED);
			if (!e || nla_put_string(msg, LFS_A_NAME, cat.v[i]->name) ||
			    nla_put_u64(msg, LFS_A_INO, cat.v[i]->ino))
				goto fail;
			nla_nest_end(msg, e);
		}
		nla_nest_end(msg, list);
		if (i < cat.n && nla_put_flag(msg, LFS_A_MORE))
			goto fail;
		ret = reply_send(msg);
	} while (!ret && i < cat.n);
	return ret;
fail:
	nlmsg_free(msg);
	return -ENOMEM;
}

static int reply_blob(const struct request *r, int type, const char *p, size_t len)
{
	struct nl_msg *msg = reply_new(r->id, 8192 + len);

	if (msg && nla_put(msg, type, len, p)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return reply_send(msg);
}

static int reply_statfs(const struct request *r)
{
	struct nl_msg *msg = reply_new(r->id, 4096);
	uint64_t total, free;

	cat_space(&cat, &total, &free);
	if (msg && (nla_put_u64(msg, LFS_A_TOTAL_BYTES, total) ||
		    nla_put_u64(msg, LFS_A_FREE_BYTES, free) ||
		    nla_put_u64(msg, LFS_A_NR_FILES, cat.n))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return reply_send(msg);
}

/* Operations: 0 once answered, or a positive errno to answer with. */

static struct shelf *by_uuid(const struct request *r)
{
	return r->uuid ? cat_find_uuid(&cat, r->uuid) : NULL;
}

static int do_create(const struct request *r, const struct fault *f)
{
	struct shelf *s = cat_find(&cat, r->name);
	int ret;

	if (s && (r->flags & LFS_UP_F_EXCL))
		return EEXIST;
	if (!s) {
		ret = cat_create(&cat, r->name, r->policy, &s);
		if (ret)
			return -ret;
		s->writable = !readonly_name || strcmp(r->name, readonly_name);
		cat_save(&cat);
	}
	return reply_attrs(r, s, f) ? EIO : 0;
}

static int do_open(const struct request *r, const struct fault *f)
{
	struct shelf *s = by_uuid(r);
	bool write = r->flags & LFS_UP_F_WRITE;

	if (!s)
		return ENOENT;
	if (write && !s->writable)
		return EACCES;
	memcpy(undo.uuid, s->uuid, LFS_UUID_LEN);
	undo.prev_active = s->active;
	if (s->active < (write ? 2 : 1))
		s->active = write ? 2 : 1;
	cat_save(&cat);
	return reply_map(r, s, f) ? EIO : 0;
}

/*
 * CREATE_OPEN: a new name created and opened in one request (EEXIST for a
 * name that exists: the kernel looks it up and opens it). A shelf this node
 * may not write is created, and the write open refused (EACCES).
 */
static int do_create_open(const struct request *r, const struct fault *f)
{
	bool write = r->flags & LFS_UP_F_WRITE;
	struct shelf *s = cat_find(&cat, r->name);
	int ret;

	if (s)
		return EEXIST;
	ret = cat_create(&cat, r->name, r->policy, &s);
	if (ret)
		return -ret;
	s->writable = !readonly_name || strcmp(r->name, readonly_name);
	if (write && !s->writable) {
		cat_save(&cat);
		return EACCES;
	}
	memcpy(undo.uuid, s->uuid, LFS_UUID_LEN);
	undo.prev_active = 0;
	s->active = write ? 2 : 1;
	cat_save(&cat);
	return reply_map(r, s, f) ? EIO : 0;
}

static int do_sizes(const struct request *r, const struct fault *f)
{
	struct shelf *s = by_uuid(r);
	uint64_t cap;
	int ret = 0;

	if (!s)
		return ENOENT;
	cap = (uint64_t)s->nr_books * cat_book_size(&cat);
	if (r->op == LFS_UP_RESIZE) {
		ret = -cat_resize(&cat, s, r->size);
	} else if (r->has_size) {
		if (r->size > cap)
			ret = EINVAL;
		else
			s->size = r->size;
	}
	if (r->op == LFS_UP_CLOSE)
		s->active = 0;
	cat_save(&cat);
	if (ret)
		return ret;
	return r->op == LFS_UP_RESIZE ? (reply_map(r, s, f) ? EIO : 0) : reply_errno(r->id, 0);
}

static int do_names(const struct request *r)
{
	struct shelf *s = by_uuid(r);
	int ret;

	if (!s)
		return ENOENT;
	if (!r->name || strcmp(s->name, r->name))
		return ESTALE;
	if (r->op == LFS_UP_DESTROY)
		ret = cat_destroy(&cat, s);
	else
		ret = cat_rename(&cat, s, r->new_name, r->flags & LFS_UP_F_NOREPLACE);
	if (ret)
		return -ret;
	cat_save(&cat);
	return reply_errno(r->id, 0);
}

static int do_xattr(const struct request *r)
{
	struct shelf *s = by_uuid(r);
	char *val = NULL;
	size_t len = 0;
	int ret;

	if (r->uuid && !s)
		return ENOENT;
	if (r->op != LFS_UP_LISTXATTR && !r->xname)
		return EINVAL;
	if (r->op == LFS_UP_GETXATTR)
		ret = cat_getxattr(&cat, s, r->xname, &val, &len);
	else if (r->op == LFS_UP_LISTXATTR)
		ret = cat_listxattr(&cat, s, &val, &len);
	else if (r->op == LFS_UP_SETXATTR)
		ret = cat_setxattr(&cat, s, r->xname, r->xvalue ? r->xvalue : "", r->xlen, r->flags);
	else
		ret = cat_removexattr(&cat, s, r->xname);
	if (!ret && (r->op == LFS_UP_SETXATTR || r->op == LFS_UP_REMOVEXATTR))
		cat_save(&cat);
	if (!ret && r->op == LFS_UP_GETXATTR)
		ret = reply_blob(r, LFS_A_XATTR_VALUE, val, len);
	else if (!ret && r->op == LFS_UP_LISTXATTR)
		ret = reply_blob(r, LFS_A_XATTR_NAMES, val, len);
	else if (!ret)
		ret = reply_errno(r->id, 0);
	free(val);
	return ret < 0 ? -ret : ret;
}

static int dispatch(const struct request *r, const struct fault *f)
{
	struct shelf *s;

	switch (r->op) {
	case LFS_UP_LOOKUP:
		s = r->name ? cat_find(&cat, r->name) : NULL;
		return s ? (reply_attrs(r, s, f) ? EIO : 0) : ENOENT;
	case LFS_UP_LIST:
		return reply_list(r) ? EIO : 0;
	case LFS_UP_CREATE:
		return r->name ? do_create(r, f) : EINVAL;
	case LFS_UP_OPEN:
		return do_open(r, f);
	case LFS_UP_CLOSE:
	case LFS_UP_RESIZE:
	case LFS_UP_SETSIZE:
		return do_sizes(r, f);
	case LFS_UP_DESTROY:
	case LFS_UP_RENAME:
		return do_names(r);
	case LFS_UP_STATFS:
		return reply_statfs(r) ? EIO : 0;
	case LFS_UP_CREATE_OPEN:
		return r->name ? do_create_open(r, f) : EINVAL;
	default:
		return r->op <= LFS_UP_MAX ? do_xattr(r) : EOPNOTSUPP;
	}
}

/*
 * Faults: a line applies to this request if its OP is the request's or
 * '*'. Returns 1 if the request is dropped or answered already.
 */
static int apply_faults(const struct request *r, struct fault *f)
{
	char line[256], action[32], op[32], arg[64];
	FILE *file = fault_path ? fopen(fault_path, "r") : NULL;
	int done = 0, n;

	renew = true;
	while (file && !done && fgets(line, sizeof(line), file)) {
		n = sscanf(line, "%31s %31s %63s", action, op, arg);
		if (n >= 1 && !strcmp(action, "norenew"))
			renew = false;
		if (n < 2 || (strcmp(op, "*") && strcmp(op, op_names[r->op] ? op_names[r->op] : "?")))
			continue;
		logmsg("fault %s %s on request %u", action, op, r->id);
		if (!strcmp(action, "drop")) {
			done = 1;
		} else if (!strcmp(action, "die")) {
			fflush(NULL);
			_exit(3);
		} else if (!strcmp(action, "delay") && n == 3) {
			sleep(atoi(arg));
		} else if (!strcmp(action, "errno") && n == 3) {
			reply_errno(r->id, atoi(arg));
			done = 1;
		} else if (!strcmp(action, "badsize")) {
			f->badsize = true;
		} else if (!strcmp(action, "badmap") && n == 3) {
			f->badmap = sscanf(arg, "%u:%u", &f->book.ig, &f->book.book) == 2;
		}
	}
	if (file)
		fclose(file);
	return done;
}

static void request_parse(struct nlattr **tb, struct request *r)
{
	memset(r, 0, sizeof(*r));
	r->id = nla_get_u32(tb[LFS_A_UP_ID]);
	r->op = tb[LFS_A_UP_OP] ? nla_get_u32(tb[LFS_A_UP_OP]) : 0;
	r->flags = tb[LFS_A_UP_FLAGS] ? nla_get_u32(tb[LFS_A_UP_FLAGS]) : 0;
	r->name = tb[LFS_A_NAME] ? nla_get_string(tb[LFS_A_NAME]) : NULL;
	r->new_name = tb[LFS_A_NEW_NAME] ? nla_get_string(tb[LFS_A_NEW_NAME]) : NULL;
	r->policy = tb[LFS_A_POLICY] ? nla_get_string(tb[LFS_A_POLICY]) : NULL;
	r->xname = tb[LFS_A_XATTR_NAME] ? nla_get_string(tb[LFS_A_XATTR_NAME]) : NULL;
	r->uuid = tb[LFS_A_UUID] ? nla_data(tb[LFS_A_UUID]) : NULL;
	if (tb[LFS_A_XATTR_VALUE]) {
		r->xvalue = nla_data(tb[LFS_A_XATTR_VALUE]);
		r->xlen = nla_len(tb[LFS_A_XATTR_VALUE]);
	}
	r->has_size = tb[LFS_A_SIZE];
	r->size = r->has_size ? nla_get_u64(tb[LFS_A_SIZE]) : 0;
}

static int on_request(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[LFS_A_MAX + 1];
	struct fault f = { 0 };
	struct request r;
	int err;

	(void)arg;
	if (g->cmd != LFS_CMD_UPCALL_REQUEST ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, LFS_A_MAX, NULL) || !tb[LFS_A_UP_ID])
		return NL_OK;
	request_parse(tb, &r);
	logmsg("request %u %s %s%s%s", r.id, r.op <= LFS_UP_MAX && op_names[r.op] ?
		op_names[r.op] : "?", r.name ? r.name : "-", r.new_name ? " " : "",
	       r.new_name ? r.new_name : "");
	if (apply_faults(&r, &f))
		return NL_OK;
	undo.prev_active = -1;
	err = dispatch(&r, &f);
	undo.prev_active = -1;
	if (err) {
		logmsg("answer %u: errno %d", r.id, err);
		reply_errno(r.id, err);
	}
	return NL_OK;
}

static void undo_open(uint32_t seq)
{
	struct shelf *s;

	for (unsigned int i = 0; i < SENT_RING; i++) {
		if (sent_ring[i].seq != seq || sent_ring[i].prev_active < 0)
			continue;
		s = cat_find_uuid(&cat, sent_ring[i].uuid);
		if (s) {
			logmsg("OPEN of %s undone", s->name);
			s->active = sent_ring[i].prev_active;
			cat_save(&cat);
		}
		sent_ring[i].prev_active = -1;
	}
}

/* The kernel refused a reply (or the registration): say why. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	int *status = arg;

	(void)nla;
	logmsg("refused (error %d): %s", err->error, lfs_ext_ack_msg(err));
	if (status)
		*status = err->error ? err->error : -EIO;
	else
		undo_open(err->msg.nlmsg_seq);
	return NL_SKIP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 1;
	return NL_STOP;
}

/* Setup */

static int fabrics_load(void)
{
	struct lfs_fabric_info *fi;
	size_t n;
	int ret = lfsnl_fabric_list(ctl, &fi, &n);

	if (ret)
		return ret;
	cat.f = calloc(n ? n : 1, sizeof(*cat.f));
	if (!cat.f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cat.f[i].ig = fi[i].ig;
		cat.f[i].nr_books = fi[i].nr_books;
		cat.f[i].book_size = fi[i].book_size;
		cat.f[i].state = calloc(fi[i].nr_books + 1, 1);
		if (!cat.f[i].state)
			return -ENOMEM;
	}
	cat.nf = n;
	free(fi);
	return 0;
}

/* The upcall socket, registered as the node's server. */
static int register_server(void)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct nl_msg *msg = nlmsg_alloc();
	int one = 1, done = 0, status = 0, ret;

	up = nl_socket_alloc();
	if (!cb || !msg || !up || genl_connect(up))
		return -ENOMEM;
	family = genl_ctrl_resolve(up, LFS_GENL_NAME);
	if (family < 0)
		return -ENOENT;
	nl_socket_disable_seq_check(up);
	nl_socket_disable_auto_ack(up);
	nl_socket_set_buffer_size(up, 4 << 20, 4 << 20);
	setsockopt(nl_socket_get_fd(up), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK,
		    LFS_CMD_UPCALL_REGISTER, LFS_GENL_VERSION);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &status);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &done);
	ret = nl_send_auto(up, msg);
	while (ret >= 0 && !done && !status)
		ret = nl_recvmsgs(up, cb);
	nlmsg_free(msg);
	nl_cb_put(cb);
	return status ? status : ret < 0 ? -EIO : 0;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void lease_renew(void)
{
	struct nl_msg *msg = lfs_msg_new(ctl, LFS_CMD_LEASE_RENEW, NLM_F_ACK, 4096);

	if (!msg || nla_put_u64(msg, LFS_A_LEASE_START, boottime_ns()) ||
	    nla_put_u32(msg, LFS_A_LEASE_MS, lease_ms) ||
	    nla_put_u32(msg, LFS_A_FENCE_ACTION, fence_action)) {
		nlmsg_free(msg);
		return;
	}
	if (lfs_request(ctl, msg, NULL, NULL))
		logmsg("lease renewal failed: %s", lfs_client_error(ctl));
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int serve(void)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct pollfd pfd = { .fd = nl_socket_get_fd(up), .events = POLLIN };
	uint64_t next = 0;
	int ret, wait;

	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_request, NULL);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, NULL);
	nl_socket_set_nonblocking(up);
	while (!stop) {
		if (lease_ms && boottime_ns() >= next) {
			apply_faults(&(struct request){ .op = LFS_UP_UNSPEC }, &(struct fault){ 0 });
			if (renew)
				lease_renew();
			next = boottime_ns() + lease_ms * 250000ULL;
		}
		wait = lease_ms ? (int)(lease_ms / 4) : -1;
		if (poll(&pfd, 1, wait) <= 0)
			continue;
		do
			ret = nl_recvmsgs(up, cb);
		while (ret >= 0 && !stop);
		if (ret < 0 && ret != -NLE_AGAIN)
			logmsg("receiving failed: %s", nl_geterror(ret));
	}
	nl_cb_put(cb);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: upcalld [--state FILE] [--fault FILE] [--log FILE] [--lease MS]\n"
			"               [--fence-action reset|eio] [--leased] [--local-ig IG]\n"
			"               [--map-batch N] [--list-batch N] [--readonly NAME]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", 1, NULL, 's' },    { "fault", 1, NULL, 'f' },
		{ "log", 1, NULL, 'l' },      { "lease", 1, NULL, 'L' },
		{ "leased", 0, NULL, 'e' },   { "local-ig", 1, NULL, 'i' },
		{ "map-batch", 1, NULL, 'm' }, { "list-batch", 1, NULL, 'b' },
		{ "readonly", 1, NULL, 'r' }, { "fence-action", 1, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': cat.path = optarg; break;
		case 'f': fault_path = optarg; break;
		case 'l': logf = fopen(optarg, "a"); break;
		case 'L': lease_ms = strtoul(optarg, NULL, 0); break;
		case 'e': opt_leased = true; break;
		case 'i': cat.local_ig = strtoul(optarg, NULL, 0); break;
		case 'm': map_batch = strtoul(optarg, NULL, 0); break;
		case 'b': list_batch = strtoul(optarg, NULL, 0); break;
		case 'r': readonly_name = optarg; break;
		case 'a': fence_action = !strcmp(optarg, "reset") ? LFS_FENCE_RESET : LFS_FENCE_EIO; break;
		default: return usage();
		}
	}
	if (optind != argc || !map_batch || map_batch > LFS_BOOKS_PER_ATTR || !list_batch)
		return usage();
	srandom(time(NULL) ^ getpid());
	cat.zero = zero_books;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	ret = lfs_client_open(&ctl);
	if (!ret)
		ret = fabrics_load();
	if (!ret)
		ret = cat_load(&cat);
	if (!ret)
		ret = register_server();
	if (ret) {
		fprintf(stderr, "upcalld: cannot start: %s (%s)\n", strerror(-ret),
			ctl ? lfs_client_error(ctl) : "");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	serve();
	cat_save(&cat);
	return 0;
}
