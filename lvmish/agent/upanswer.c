// SPDX-License-Identifier: GPL-2.0
/*
 * The upcall server's replies (LFS_CMD_UPCALL_REPLY): an errno, a file's
 * attributes, a book map and a listing in as many messages as they take
 * (LFS_A_MORE on all but the last), an xattr value or names, the space.
 */
#include <errno.h>
#include <netlink/genl/genl.h>

#include "msg.h"
#include "upserver.h"

/* Entries of a LIST per message: a name and an inode number each, well under a page. */
#define UP_LIST_BATCH 256

static struct nl_msg *reply_new(struct up_worker *w, uint32_t id, size_t size)
{
	struct nl_msg *msg = nlmsg_alloc_size(size);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, up_family(w->srv), 0, 0,
			 LFS_CMD_UPCALL_REPLY, LFS_GENL_VERSION) ||
	    nla_put_u32(msg, LFS_A_UP_ID, id)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int reply_send(struct up_worker *w, struct nl_msg *msg, bool fail)
{
	if (fail || !msg) {
		nlmsg_free(msg);
		lfsvol_err("upcall %s: no memory for the reply", w->what);
		return -ENOMEM;
	}
	return up_send(w->srv, msg, NULL);
}

int up_answer_errno(struct up_worker *w, uint32_t id, int err)
{
	struct nl_msg *msg = reply_new(w, id, 1024);

	return reply_send(w, msg, msg && err && nla_put_u32(msg, LFS_A_UP_ERRNO, err));
}

static int put_attrs(struct nl_msg *msg, const struct up_shelf *s, bool leased)
{
	return nla_put(msg, LFS_A_UUID, LFS_UUID_LEN, s->uuid) ||
	       nla_put_u64(msg, LFS_A_INO, s->ino) || nla_put_u64(msg, LFS_A_SIZE, s->size) ||
	       nla_put_u32(msg, LFS_A_NR_BOOKS, s->nr_books) ||
	       nla_put_u64(msg, LFS_A_BOOK_SIZE, s->nr_books ? s->book_size : 0) ||
	       nla_put_u64(msg, LFS_A_MTIME, s->mtime) || nla_put_u64(msg, LFS_A_CTIME, s->ctime) ||
	       nla_put_u8(msg, LFS_A_WRITABLE, s->writable) ||
	       (leased && nla_put_flag(msg, LFS_A_LEASED));
}

int up_answer_attrs(struct up_worker *w, const struct up_req *r, const struct up_shelf *s,
		    bool leased)
{
	struct nl_msg *msg = reply_new(w, r->id, 4096);

	return reply_send(w, msg, msg && put_attrs(msg, s, leased));
}

/*
 * Attributes in the first message, the map in parts. An OPEN's messages
 * are watched: if the kernel refuses one, the activation is undone.
 */
int up_answer_map(struct up_worker *w, const struct up_req *r, const struct up_shelf *s,
		  bool leased)
{
	uint32_t start = 0, n, seq = 0;
	struct nl_msg *msg;
	int ret;

	do {
		n = s->nr_books - start < LFS_BOOKS_PER_ATTR ? s->nr_books - start :
							       LFS_BOOKS_PER_ATTR;
		msg = reply_new(w, r->id, 8192 + n * sizeof(struct lfs_book));
		if (!msg || (!start && put_attrs(msg, s, leased)) ||
		    (n &&
		     (nla_put_u32(msg, LFS_A_BOOKS_START, start) ||
		      nla_put(msg, LFS_A_BOOKS, n * sizeof(struct lfs_book), s->books + start))) ||
		    (start + n < s->nr_books && nla_put_flag(msg, LFS_A_MORE)))
			return reply_send(w, msg, true);
		ret = up_send(w->srv, msg, &seq);
		if (!ret && w->watch)
			up_watch_open(w->srv, seq, s->name, s->uuid);
		start += n;
	} while (!ret && start < s->nr_books);
	return ret;
}

/* entries: a JSON array of [name, ino]. */
int up_answer_list(struct up_worker *w, uint32_t id, json_t *entries)
{
	size_t i = 0, total = json_array_size(entries);
	struct nlattr *list, *e;
	struct nl_msg *msg;
	int ret = 0;

	do {
		msg = reply_new(w, id, 8192 + UP_LIST_BATCH * 96);
		list = msg ? nla_nest_start(msg, LFS_A_ENTRIES | NLA_F_NESTED) : NULL;
		if (!list)
			return reply_send(w, msg, true);
		for (int k = 0; k < UP_LIST_BATCH && i < total; k++, i++) {
			json_t *el = json_array_get(entries, i);

			e = nla_nest_start(msg, (k + 1) | NLA_F_NESTED);
			if (!e ||
			    nla_put_string(msg, LFS_A_NAME,
					   json_string_value(json_array_get(el, 0))) ||
			    nla_put_u64(msg, LFS_A_INO,
					(uint64_t)json_integer_value(json_array_get(el, 1))))
				return reply_send(w, msg, true);
			nla_nest_end(msg, e);
		}
		nla_nest_end(msg, list);
		if (i < total && nla_put_flag(msg, LFS_A_MORE))
			return reply_send(w, msg, true);
		ret = up_send(w->srv, msg, NULL);
	} while (!ret && i < total);
	return ret;
}

int up_answer_blob(struct up_worker *w, uint32_t id, int type, const char *p, size_t len)
{
	struct nl_msg *msg = reply_new(w, id, 8192 + len);

	return reply_send(w, msg,
			  msg && (len || type == LFS_A_XATTR_VALUE) && nla_put(msg, type, len, p));
}

int up_answer_statfs(struct up_worker *w, uint32_t id, uint64_t total, uint64_t free,
		     uint64_t files)
{
	struct nl_msg *msg = reply_new(w, id, 1024);

	return reply_send(w, msg,
			  msg && (nla_put_u64(msg, LFS_A_TOTAL_BYTES, total) ||
				  nla_put_u64(msg, LFS_A_FREE_BYTES, free) ||
				  nla_put_u64(msg, LFS_A_NR_FILES, files)));
}
