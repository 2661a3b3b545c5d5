// SPDX-License-Identifier: GPL-2.0
/*
 * Upcalls: the filesystem's questions to the node's upcall server (the node
 * agent), specified in uapi/lfs.h. A caller sends one request and sleeps,
 * killably and at most the mount's upcall_timeout, until the server's reply
 * (possibly several messages) has been checked and taken in (upreply.c), or
 * the server goes away. This file is the channel: the server's registration,
 * the pending requests and their ids, sending and waiting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "fs.h"

struct lfs_up_req {
	u32 op;
	int error; /* the outcome, once taken off lfs_up_pending */
	bool started; /* a first reply message was taken */
	const struct lfs_fmap *base;
	struct lfs_up_result *res;
	struct completion done;
};

/*
 * lfs_up_lock protects the server's portid and the pending requests: a
 * request is completed, given up or failed only by whoever takes it off
 * lfs_up_pending under the lock.
 */
static DEFINE_MUTEX(lfs_up_lock);
static DEFINE_XARRAY_ALLOC1(lfs_up_pending);
static u32 lfs_up_next_id;
static u32 lfs_up_portid; /* 0: no server */
static u64 lfs_up_sent, lfs_up_refused;

/* What a notification's id stands for while it is sent: nobody waits. */
static struct lfs_up_req lfs_up_orphan;

/* Requests between their slot and their end, at most LFS_UP_PENDING_MAX. */
static atomic_t lfs_up_nr = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(lfs_up_slots);

/* Fail every pending request: the server is gone. Under lfs_up_lock. */
static void lfs_up_drop(void)
{
	struct lfs_up_req *req;
	unsigned long id;
	unsigned int n = 0;

	xa_for_each(&lfs_up_pending, id, req) {
		xa_erase(&lfs_up_pending, id);
		req->error = -ENOTCONN;
		complete(&req->done);
		n++;
	}
	pr_info("upcall server (portid %u) unregistered; %u pending requests fail with ENOTCONN\n",
		lfs_up_portid, n);
	WRITE_ONCE(lfs_up_portid, 0);
}

int lfs_upcall_register(u32 portid, struct netlink_ext_ack *extack)
{
	int ret = 0;

	mutex_lock(&lfs_up_lock);
	if (lfs_up_portid && lfs_up_portid != portid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "an upcall server is registered already (portid %u)",
				   lfs_up_portid);
		ret = -EBUSY;
	} else if (!lfs_up_portid) {
		WRITE_ONCE(lfs_up_portid, portid);
		pr_info("upcall server registered (portid %u)\n", portid);
	}
	mutex_unlock(&lfs_up_lock);
	return ret;
}

int lfs_upcall_unregister(u32 portid, struct netlink_ext_ack *extack)
{
	int ret = 0;

	mutex_lock(&lfs_up_lock);
	if (!lfs_up_portid) {
		NL_SET_ERR_MSG(extack, "no upcall server is registered");
		ret = -ENOTCONN;
	} else if (lfs_up_portid != portid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "the upcall server is another socket (portid %u)",
				   lfs_up_portid);
		ret = -EPERM;
	} else {
		lfs_up_drop();
	}
	mutex_unlock(&lfs_up_lock);
	return ret;
}

/* A netlink socket closed (NETLINK_URELEASE): was it the server's? */
void lfs_upcall_release(u32 portid)
{
	if (READ_ONCE(lfs_up_portid) != portid)
		return;
	mutex_lock(&lfs_up_lock);
	if (lfs_up_portid == portid)
		lfs_up_drop();
	mutex_unlock(&lfs_up_lock);
}

void lfs_upcall_stats(u32 *portid, u32 *pending, u64 *sent, u64 *refused)
{
	struct lfs_up_req *req;
	unsigned long id;

	mutex_lock(&lfs_up_lock);
	*portid = lfs_up_portid;
	*pending = 0;
	xa_for_each(&lfs_up_pending, id, req)
		(*pending)++;
	*sent = lfs_up_sent;
	*refused = lfs_up_refused;
	mutex_unlock(&lfs_up_lock);
}

/*
 * A reply message from the server: take it into its request, and end the
 * request when it is the last one or when it is refused (the caller then
 * gets EIO, the server the reason).
 */
int lfs_upcall_reply(u32 portid, struct nlattr **a,
		     struct netlink_ext_ack *extack)
{
	u32 id = nla_get_u32(a[LFS_A_UP_ID]);
	bool more = nla_get_flag(a[LFS_A_MORE]);
	u32 err = a[LFS_A_UP_ERRNO] ? nla_get_u32(a[LFS_A_UP_ERRNO]) : 0;
	struct lfs_up_req *req;
	int ret = 0;

	mutex_lock(&lfs_up_lock);
	if (portid != lfs_up_portid) {
		NL_SET_ERR_MSG_FMT(extack,
				   "replies come from the registered upcall server (portid %u)",
				   lfs_up_portid);
		ret = -EPERM;
		goto out;
	}
	req = xa_load(&lfs_up_pending, id);
	if (!req || req == &lfs_up_orphan) {
		NL_SET_ERR_MSG_FMT(extack,
				   "upcall %u is not pending (answered, timed out, given up or never sent)",
				   id);
		ret = -ENOENT;
		goto out;
	}
	if (err > LFS_UP_ERRNO_MAX) {
		NL_SET_BAD_ATTR(extack, a[LFS_A_UP_ERRNO]);
		NL_SET_ERR_MSG_FMT(extack, "errno %u is not 1 to %u", err,
				   LFS_UP_ERRNO_MAX);
		err = 0;
		ret = -EINVAL;
	} else if (!err) {
		ret = lfs_up_reply_take(req->res, req->op, req->base, a,
					!req->started, more, extack);
		req->started = true;
		if (!ret && more)
			goto out;
	}
	xa_erase(&lfs_up_pending, id);
	req->error = err ? -(int)err : ret ? -EIO : 0;
	if (ret) {
		lfs_up_refused++;
		pr_warn_ratelimited("upcall %u refused (error %d): %s\n", id,
				    ret, extack && extack->_msg ? extack->_msg : "");
	}
	complete(&req->done);
out:
	mutex_unlock(&lfs_up_lock);
	return ret;
}

static int lfs_up_fill(struct sk_buff *skb, u32 id, const struct lfs_up_args *a)
{
	void *hdr = lfs_genl_put(skb, LFS_CMD_UPCALL_REQUEST);

	if (!hdr || nla_put_u32(skb, LFS_A_UP_ID, id) ||
	    nla_put_u32(skb, LFS_A_UP_OP, a->op) ||
	    (a->flags && nla_put_u32(skb, LFS_A_UP_FLAGS, a->flags)) ||
	    (a->name && nla_put_string(skb, LFS_A_NAME, a->name)) ||
	    (a->uuid && nla_put(skb, LFS_A_UUID, LFS_UUID_LEN, a->uuid)) ||
	    (a->new_name && nla_put_string(skb, LFS_A_NEW_NAME, a->new_name)) ||
	    (a->has_size &&
	     nla_put_u64_64bit(skb, LFS_A_SIZE, a->size, LFS_A_PAD)) ||
	    (a->policy && nla_put_string(skb, LFS_A_POLICY, a->policy)) ||
	    (a->xname && nla_put_string(skb, LFS_A_XATTR_NAME, a->xname)) ||
	    (a->xvalue && nla_put(skb, LFS_A_XATTR_VALUE, a->xlen, a->xvalue)))
		return -EMSGSIZE;
	genlmsg_end(skb, hdr);
	return 0;
}

/* Send @a as a new pending request of @req; its id in *@idp. */
static int lfs_up_send(struct lfs_up_req *req, const struct lfs_up_args *a,
		       u32 *idp)
{
	struct sk_buff *skb = genlmsg_new(NLMSG_GOODSIZE + a->xlen, GFP_KERNEL);
	u32 id = 0;
	int ret;

	if (!skb)
		return -ENOMEM;
	mutex_lock(&lfs_up_lock);
	ret = -ENOTCONN;
	if (!lfs_up_portid)
		goto out;
	ret = xa_alloc_cyclic(&lfs_up_pending, &id, req, xa_limit_32b,
			      &lfs_up_next_id, GFP_KERNEL);
	if (ret < 0)
		goto out;
	ret = lfs_up_fill(skb, id, a);
	if (!ret) {
		ret = lfs_genl_unicast(skb, lfs_up_portid);
		skb = NULL;
	}
	if (ret == -ECONNREFUSED) {
		/* the socket is gone; its release notifier may not have run */
		lfs_up_drop();
		ret = -ENOTCONN;
	} else if (ret == -EAGAIN) {
		pr_warn_ratelimited("the upcall server's receive buffer is full\n");
		ret = -ENOBUFS;
	} else if (!ret) {
		lfs_up_sent++;
		*idp = id;
	}
	if (ret)
		xa_erase(&lfs_up_pending, id);
out:
	mutex_unlock(&lfs_up_lock);
	kfree_skb(skb);
	return ret;
}

/* The end of a sent request: its reply, or given up (killed, timed out). */
static int lfs_up_wait(struct lfs_up_req *req, u32 id, unsigned long timeout)
{
	long left = wait_for_completion_killable_timeout(&req->done, timeout);
	int ret;

	mutex_lock(&lfs_up_lock);
	if (xa_load(&lfs_up_pending, id) == req) {
		/* a reply arriving from now on finds no request: ENOENT */
		xa_erase(&lfs_up_pending, id);
		ret = left < 0 ? -EINTR : -ETIMEDOUT;
	} else {
		ret = req->error;
	}
	mutex_unlock(&lfs_up_lock);
	return ret;
}

static bool lfs_up_slot_get(void)
{
	return atomic_add_unless(&lfs_up_nr, 1, LFS_UP_PENDING_MAX);
}

/*
 * Ask the server and wait, at most @timeout jiffies: 0 and the answer in
 * @r (free it with lfs_up_result_free()), or a negative errno: the server's
 * own, ENOTCONN (no server, or it went away), ETIMEDOUT, EINTR (a fatal
 * signal), EIO (a reply the kernel refused).
 */
int lfs_upcall(const struct lfs_up_args *a, struct lfs_up_result *r,
	       unsigned long timeout)
{
	struct lfs_up_req req = { .op = a->op, .base = a->base, .res = r };
	long left;
	u32 id;
	int ret;

	memset(r, 0, sizeof(*r));
	init_completion(&req.done);
	if (!READ_ONCE(lfs_up_portid))
		return -ENOTCONN;
	left = wait_event_killable_timeout(lfs_up_slots, lfs_up_slot_get(),
					   timeout);
	if (left <= 0)
		return left ? -EINTR : -ETIMEDOUT;
	ret = lfs_up_send(&req, a, &id);
	if (!ret) {
		r->sent = true;
		ret = lfs_up_wait(&req, id, left);
	}
	atomic_dec(&lfs_up_nr);
	wake_up(&lfs_up_slots);
	if (ret)
		lfs_up_result_free(r);
	return ret;
}

/*
 * Send @a and wait for nothing: for a dying process, whose waits end at
 * once, so that the server still learns what it must (a CLOSE). A reply is
 * refused as not pending.
 */
int lfs_upcall_notify(const struct lfs_up_args *a)
{
	u32 id;
	int ret = lfs_up_send(&lfs_up_orphan, a, &id);

	if (!ret) {
		mutex_lock(&lfs_up_lock);
		xa_erase(&lfs_up_pending, id);
		mutex_unlock(&lfs_up_lock);
	}
	return ret;
}

void lfs_up_result_free(struct lfs_up_result *r)
{
	kvfree(r->books);
	kvfree(r->entries);
	kvfree(r->value);
	r->books = NULL;
	r->entries = NULL;
	r->value = NULL;
}

/* Module unload: nothing is mounted, so nothing is pending. */
void lfs_upcall_exit(void)
{
	mutex_lock(&lfs_up_lock);
	if (lfs_up_portid)
		lfs_up_drop();
	mutex_unlock(&lfs_up_lock);
	xa_destroy(&lfs_up_pending);
}
