// SPDX-License-Identifier: MIT
/* The lfs family's commands, one function each (see driver/uapi/lfs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netlink/genl/genl.h>

#include "liblfsnl.h"
#include "client.h"

#define MSG_SMALL 4096
#define MSG_BOOKS (MSG_SMALL + LFS_BOOKS_PER_ATTR * sizeof(struct lfs_book))

static int put_failed(struct lfs_client *c, struct nl_msg *msg)
{
	nlmsg_free(msg);
	lfs_client_set_error(c, "building the request failed");
	return -ENOMEM;
}

/* ATTACH and LABEL: a device, its place in the fabric and (LABEL: required) the fabric. */
static int fabric_request(struct lfs_client *c, uint8_t cmd, const char *path, uint32_t ig,
			  uint64_t book_size, uint64_t offset, const uint8_t *fabric_uuid)
{
	struct nl_msg *msg = lfs_msg_new(c, cmd, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_PATH, path) || nla_put_u32(msg, LFS_A_IG, ig) ||
	    nla_put_u64(msg, LFS_A_BOOK_SIZE, book_size) ||
	    nla_put_u64(msg, LFS_A_OFFSET, offset) ||
	    (fabric_uuid && nla_put(msg, LFS_A_FABRIC_UUID, LFS_UUID_LEN, fabric_uuid)))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

int lfsnl_attach(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
		 uint64_t offset)
{
	return fabric_request(c, LFS_CMD_FABRIC_ATTACH, path, ig, book_size, offset, NULL);
}

int lfsnl_attach_labelled(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
			  uint64_t offset, const uint8_t *fabric_uuid)
{
	return fabric_request(c, LFS_CMD_FABRIC_ATTACH, path, ig, book_size, offset, fabric_uuid);
}

int lfsnl_fabric_label(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
		       uint64_t offset, const uint8_t *fabric_uuid)
{
	if (!fabric_uuid) {
		lfs_client_set_error(c, "a label needs the fabric's UUID");
		return -EINVAL;
	}
	return fabric_request(c, LFS_CMD_FABRIC_LABEL, path, ig, book_size, offset, fabric_uuid);
}

int lfsnl_detach(struct lfs_client *c, const char *path)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_FABRIC_DETACH, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_PATH, path))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

struct fabric_list {
	struct lfs_fabric_info *v;
	size_t n;
	size_t cap;
};

static int parse_fabric(struct nlattr **tb, void *arg)
{
	struct fabric_list *l = arg;
	struct lfs_fabric_info *f;

	if (!tb[LFS_A_IG] || !tb[LFS_A_PATH] || !tb[LFS_A_BOOK_SIZE] || !tb[LFS_A_NR_BOOKS])
		return -EPROTO;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct lfs_fabric_info *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	f->ig = nla_get_u32(tb[LFS_A_IG]);
	nla_strlcpy(f->path, tb[LFS_A_PATH], sizeof(f->path));
	f->book_size = nla_get_u64(tb[LFS_A_BOOK_SIZE]);
	f->nr_books = nla_get_u32(tb[LFS_A_NR_BOOKS]);
	f->devt = tb[LFS_A_DEVT] ? nla_get_u32(tb[LFS_A_DEVT]) : 0;
	f->offset = tb[LFS_A_OFFSET] ? nla_get_u64(tb[LFS_A_OFFSET]) : 0;
	f->dev_size = tb[LFS_A_DEV_SIZE] ? nla_get_u64(tb[LFS_A_DEV_SIZE]) : 0;
	f->books_used = tb[LFS_A_BOOKS_USED] ? nla_get_u32(tb[LFS_A_BOOKS_USED]) : 0;
	f->dax = tb[LFS_A_DAX] ? nla_get_u8(tb[LFS_A_DAX]) : 0;
	f->numa_node = tb[LFS_A_NUMA_NODE] ? (int32_t)nla_get_u32(tb[LFS_A_NUMA_NODE]) : -1;
	f->devdax = tb[LFS_A_DEVDAX] && nla_get_u8(tb[LFS_A_DEVDAX]);
	f->volatile_mem = tb[LFS_A_VOLATILE] && nla_get_u8(tb[LFS_A_VOLATILE]);
	f->labelled = tb[LFS_A_FABRIC_UUID] != NULL;
	if (f->labelled)
		memcpy(f->fabric_uuid, nla_data(tb[LFS_A_FABRIC_UUID]), LFS_UUID_LEN);
	if (tb[LFS_A_BAD]) {
		f->nr_bad = nla_len(tb[LFS_A_BAD]) / sizeof(struct lfs_bad_range);
		if (f->nr_bad > LFS_BAD_MAX)
			f->nr_bad = LFS_BAD_MAX;
		memcpy(f->bad, nla_data(tb[LFS_A_BAD]), f->nr_bad * sizeof(struct lfs_bad_range));
	}
	return 0;
}

static struct nl_msg *build_fabric_dump(struct lfs_client *c, void *arg)
{
	(void)arg;
	return lfs_msg_new(c, LFS_CMD_FABRIC_GET, NLM_F_DUMP, MSG_SMALL);
}

static void reset_fabric_list(void *arg)
{
	struct fabric_list *l = arg;

	l->n = 0;
}

int lfsnl_fabric_list(struct lfs_client *c, struct lfs_fabric_info **out, size_t *n)
{
	struct fabric_list l = { 0 };
	int ret;

	ret = lfs_dump(c, build_fabric_dump, parse_fabric, reset_fabric_list, &l);
	if (ret) {
		free(l.v);
		return ret;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

static int parse_created(struct nlattr **tb, void *arg)
{
	struct lfs_shelf_info *s = arg;

	if (!tb[LFS_A_ID] || !tb[LFS_A_DISK])
		return -EPROTO;
	s->id = nla_get_u32(tb[LFS_A_ID]);
	nla_strlcpy(s->disk, tb[LFS_A_DISK], sizeof(s->disk));
	if (tb[LFS_A_NAME])
		nla_strlcpy(s->name, tb[LFS_A_NAME], sizeof(s->name));
	if (tb[LFS_A_DEVT])
		s->devt = nla_get_u32(tb[LFS_A_DEVT]);
	return 0;
}

/* CREATE or EXTEND, in messages of at most LFS_BOOKS_PER_ATTR books. */
static int send_books(struct lfs_client *c, uint8_t cmd, const char *name, const uint8_t *uuid,
		      unsigned int flags, const struct lfs_book *books, size_t n,
		      struct lfs_shelf_info *out)
{
	size_t done = 0, part;
	struct nl_msg *msg;
	int last, ret;

	if (!n) {
		lfs_client_set_error(c, "no books given");
		return -EINVAL;
	}
	while (done < n) {
		part = n - done < LFS_BOOKS_PER_ATTR ? n - done : LFS_BOOKS_PER_ATTR;
		last = done + part == n;
		msg = lfs_msg_new(c, cmd, NLM_F_ACK, MSG_BOOKS);
		if (!msg || nla_put_string(msg, LFS_A_NAME, name) ||
		    (uuid && !done && nla_put(msg, LFS_A_UUID, LFS_UUID_LEN, uuid)) ||
		    nla_put(msg, LFS_A_BOOKS, part * sizeof(*books), books + done) ||
		    (!last && nla_put_flag(msg, LFS_A_MORE)) ||
		    ((flags & LFS_CREATE_LEASED) && !done && nla_put_flag(msg, LFS_A_LEASED)) ||
		    ((flags & LFS_CREATE_ZEROED) && nla_put_flag(msg, LFS_A_ZEROED)))
			return put_failed(c, msg);
		ret = lfs_request(c, msg, last && out ? parse_created : NULL, out);
		if (ret)
			return ret;
		done += part;
	}
	return 0;
}

int lfsnl_shelf_create(struct lfs_client *c, const char *name, const uint8_t *uuid, bool zeroed,
		       const struct lfs_book *books, size_t n, struct lfs_shelf_info *out)
{
	return send_books(c, LFS_CMD_SHELF_CREATE, name, uuid, zeroed ? LFS_CREATE_ZEROED : 0,
			  books, n, out);
}

int lfsnl_shelf_create_flags(struct lfs_client *c, const char *name, const uint8_t *uuid,
			     unsigned int flags, const struct lfs_book *books, size_t n,
			     struct lfs_shelf_info *out)
{
	return send_books(c, LFS_CMD_SHELF_CREATE, name, uuid, flags, books, n, out);
}

int lfsnl_shelf_extend(struct lfs_client *c, const char *name, const struct lfs_book *books,
		       size_t n)
{
	return send_books(c, LFS_CMD_SHELF_EXTEND, name, NULL, 0, books, n, NULL);
}

int lfsnl_shelf_shrink(struct lfs_client *c, const char *name, uint32_t nr_books)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_SHELF_SHRINK, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_NAME, name) ||
	    nla_put_u32(msg, LFS_A_NR_BOOKS, nr_books))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

int lfsnl_shelf_remove(struct lfs_client *c, const char *name)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_SHELF_REMOVE, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_NAME, name))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

int lfsnl_book_move(struct lfs_client *c, const char *name, uint32_t index,
		    const struct lfs_book *to)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_BOOK_MOVE, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_NAME, name) ||
	    nla_put_u32(msg, LFS_A_BOOKS_START, index) ||
	    nla_put(msg, LFS_A_BOOKS, sizeof(*to), to))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

struct check_zero {
	const struct lfs_book *books; /* this request's part */
	size_t n;
	bool *zero; /* of this part */
	size_t next; /* reply books are in request order */
};

static int check_zero_parse(struct nlattr **tb, void *arg)
{
	struct check_zero *cz = arg;
	const struct lfs_book *got;
	size_t n;

	if (!tb[LFS_A_BOOKS])
		return 0;
	got = nla_data(tb[LFS_A_BOOKS]);
	n = (size_t)nla_len(tb[LFS_A_BOOKS]) / sizeof(*got);
	for (size_t i = 0; i < n; i++) {
		while (cz->next < cz->n && (cz->books[cz->next].ig != got[i].ig ||
					    cz->books[cz->next].book != got[i].book))
			cz->next++;
		if (cz->next == cz->n)
			return -EPROTO; /* not one of ours, or out of order */
		cz->zero[cz->next++] = true;
	}
	return 0;
}

/* BOOK_ZERO and BOOK_CHECK: each reply lists the books of its request that qualify. */
static int books_request(struct lfs_client *c, uint8_t cmd, const struct lfs_book *books, size_t n,
			 bool *which)
{
	size_t done = 0, part;
	struct nl_msg *msg;
	int ret;

	memset(which, 0, n * sizeof(*which));
	while (done < n) {
		struct check_zero cz;

		part = n - done < LFS_BOOKS_PER_ATTR ? n - done : LFS_BOOKS_PER_ATTR;
		cz = (struct check_zero){ books + done, part, which + done, 0 };
		msg = lfs_msg_new(c, cmd, NLM_F_ACK, MSG_BOOKS);
		if (!msg || nla_put(msg, LFS_A_BOOKS, part * sizeof(*books), books + done))
			return put_failed(c, msg);
		ret = lfs_request(c, msg, check_zero_parse, &cz);
		if (ret)
			return ret;
		done += part;
	}
	return 0;
}

int lfsnl_books_check_zero(struct lfs_client *c, const struct lfs_book *books, size_t n, bool *zero)
{
	return books_request(c, LFS_CMD_BOOK_CHECK, books, n, zero);
}

int lfsnl_books_zero(struct lfs_client *c, const struct lfs_book *books, size_t n, bool *zeroed)
{
	return books_request(c, LFS_CMD_BOOK_ZERO, books, n, zeroed);
}

struct shelf_list {
	struct lfs_client *c;
	const char *name;
	struct lfs_shelf_info *v;
	size_t n;
	size_t cap;
	uint32_t have; /* books received for v[n - 1] */
};

static struct lfs_shelf_info *shelf_new(struct shelf_list *l, struct nlattr **tb)
{
	struct lfs_shelf_info *s;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct lfs_shelf_info *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	s = &l->v[l->n];
	memset(s, 0, sizeof(*s));
	s->nr_books = nla_get_u32(tb[LFS_A_NR_BOOKS]);
	s->books = calloc(s->nr_books ? s->nr_books : 1, sizeof(*s->books));
	if (!s->books)
		return NULL;
	l->n++;
	l->have = 0;
	nla_strlcpy(s->name, tb[LFS_A_NAME], sizeof(s->name));
	memcpy(s->uuid, nla_data(tb[LFS_A_UUID]), LFS_UUID_LEN);
	s->id = nla_get_u32(tb[LFS_A_ID]);
	nla_strlcpy(s->disk, tb[LFS_A_DISK], sizeof(s->disk));
	s->devt = tb[LFS_A_DEVT] ? nla_get_u32(tb[LFS_A_DEVT]) : 0;
	s->book_size = nla_get_u64(tb[LFS_A_BOOK_SIZE]);
	s->dax = tb[LFS_A_DAX] ? nla_get_u8(tb[LFS_A_DAX]) : 0;
	s->open = tb[LFS_A_OPEN] ? nla_get_u32(tb[LFS_A_OPEN]) : 0;
	s->zeroed = tb[LFS_A_ZEROED] ? nla_get_u8(tb[LFS_A_ZEROED]) : 0;
	s->state = tb[LFS_A_STATE] ? nla_get_u32(tb[LFS_A_STATE]) : LFS_SHELF_ACTIVE;
	s->leased = tb[LFS_A_LEASED] && nla_get_u8(tb[LFS_A_LEASED]);
	s->created = tb[LFS_A_CREATED] ? nla_get_u64(tb[LFS_A_CREATED]) : 0;
	return s;
}

/* A shelf's books may come in several consecutive messages. */
static int parse_shelf(struct nlattr **tb, void *arg)
{
	struct shelf_list *l = arg;
	struct lfs_shelf_info *s = l->n ? &l->v[l->n - 1] : NULL;
	uint32_t start, count;

	if (!tb[LFS_A_NAME] || !tb[LFS_A_UUID] || !tb[LFS_A_ID] || !tb[LFS_A_DISK] ||
	    !tb[LFS_A_BOOK_SIZE] || !tb[LFS_A_NR_BOOKS] || !tb[LFS_A_BOOKS_START] ||
	    !tb[LFS_A_BOOKS] || nla_len(tb[LFS_A_BOOKS]) % sizeof(struct lfs_book))
		goto bad;
	start = nla_get_u32(tb[LFS_A_BOOKS_START]);
	count = nla_len(tb[LFS_A_BOOKS]) / sizeof(struct lfs_book);
	if (!s || start == 0 || strcmp(s->name, nla_get_string(tb[LFS_A_NAME]))) {
		if (start != 0 || (s && l->have != s->nr_books))
			goto bad;
		s = shelf_new(l, tb);
		if (!s)
			return -ENOMEM;
	}
	if (start != l->have || count > s->nr_books - start)
		goto bad;
	memcpy(s->books + start, nla_data(tb[LFS_A_BOOKS]), count * sizeof(struct lfs_book));
	l->have += count;
	return 0;
bad:
	lfs_client_set_error(l->c, "malformed shelf description from the kernel");
	return -EPROTO;
}

static struct nl_msg *build_shelf_dump(struct lfs_client *c, void *arg)
{
	struct shelf_list *l = arg;
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_SHELF_GET, NLM_F_DUMP, MSG_SMALL);

	if (msg && l->name && nla_put_string(msg, LFS_A_NAME, l->name)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

void lfsnl_shelf_list_free(struct lfs_shelf_info *shelves, size_t n)
{
	size_t i;

	if (!shelves)
		return;
	for (i = 0; i < n; i++)
		free(shelves[i].books);
	free(shelves);
}

static void reset_shelf_list(void *arg)
{
	struct shelf_list *l = arg;
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].books);
	l->n = 0;
	l->have = 0;
}

int lfsnl_shelf_list(struct lfs_client *c, const char *name, struct lfs_shelf_info **out, size_t *n)
{
	struct shelf_list l = { .c = c, .name = name };
	int ret;

	ret = lfs_dump(c, build_shelf_dump, parse_shelf, reset_shelf_list, &l);
	if (!ret && l.n && l.have != l.v[l.n - 1].nr_books) {
		lfs_client_set_error(c, "incomplete book list for shelf '%s'", l.v[l.n - 1].name);
		ret = -EPROTO;
	}
	if (!ret && name && !l.n) {
		lfs_client_set_error(c, "no shelf '%s'", name);
		ret = -ENOENT;
	}
	if (ret) {
		lfsnl_shelf_list_free(l.v, l.n);
		return ret;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int lfsnl_lease_renew_watch(struct lfs_client *c, uint64_t start_ns, uint32_t lease_ms, int action,
			    int64_t watch_ms)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_LEASE_RENEW, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_u64(msg, LFS_A_LEASE_START, start_ns) ||
	    nla_put_u32(msg, LFS_A_LEASE_MS, lease_ms) ||
	    (action >= 0 && nla_put_u32(msg, LFS_A_FENCE_ACTION, (uint32_t)action)) ||
	    (watch_ms >= 0 && nla_put_u32(msg, LFS_A_FENCE_WATCHDOG_MS, (uint32_t)watch_ms)))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

int lfsnl_lease_renew(struct lfs_client *c, uint64_t start_ns, uint32_t lease_ms, int action)
{
	return lfsnl_lease_renew_watch(c, start_ns, lease_ms, action, -1);
}

static uint64_t get_u64_or_0(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

/* The fence latency, from a kernel that reports it (else zeroes). */
static void parse_fence_stats(struct nlattr **tb, struct lfs_lease_info *l)
{
	struct nlattr *h = tb[LFS_A_FENCE_HIST];

	l->fence_count = tb[LFS_A_FENCE_COUNT] ? nla_get_u32(tb[LFS_A_FENCE_COUNT]) : 0;
	l->fence_last_ns = get_u64_or_0(tb[LFS_A_FENCE_LAST_NS]);
	l->fence_max_ns = get_u64_or_0(tb[LFS_A_FENCE_MAX_NS]);
	l->fence_done_last_ns = get_u64_or_0(tb[LFS_A_FENCE_DONE_LAST_NS]);
	l->fence_done_max_ns = get_u64_or_0(tb[LFS_A_FENCE_DONE_MAX_NS]);
	if (h && nla_len(h) >= (int)sizeof(l->fence_hist))
		memcpy(l->fence_hist, nla_data(h), sizeof(l->fence_hist));
}

static int parse_lease(struct nlattr **tb, void *arg)
{
	struct lfs_lease_info *l = arg;

	if (!tb[LFS_A_LEASE_MS] || !tb[LFS_A_LEASE_LEFT])
		return -EPROTO;
	l->lease_ms = nla_get_u32(tb[LFS_A_LEASE_MS]);
	l->left_ms = (int64_t)nla_get_u64(tb[LFS_A_LEASE_LEFT]);
	l->fence_action = tb[LFS_A_FENCE_ACTION] ? nla_get_u32(tb[LFS_A_FENCE_ACTION]) : 0;
	l->nr_fenced = tb[LFS_A_NR_FENCED] ? nla_get_u32(tb[LFS_A_NR_FENCED]) : 0;
	parse_fence_stats(tb, l);
	return 0;
}

const char *lfs_fence_action_name(uint32_t action)
{
	return action == LFS_FENCE_EIO ? "eio" : action == LFS_FENCE_RESET ? "reset" : "?";
}

int lfsnl_lease_get(struct lfs_client *c, struct lfs_lease_info *out)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_LEASE_GET, NLM_F_ACK, MSG_SMALL);

	memset(out, 0, sizeof(*out));
	if (!msg)
		return put_failed(c, msg);
	return lfs_request(c, msg, parse_lease, out);
}

int lfsnl_shelf_fence(struct lfs_client *c, const char *name)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_SHELF_FENCE, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put_string(msg, LFS_A_NAME, name))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

int lfsnl_file_fence(struct lfs_client *c, const uint8_t *uuid)
{
	struct nl_msg *msg = lfs_msg_new(c, LFS_CMD_SHELF_FENCE, NLM_F_ACK, MSG_SMALL);

	if (!msg || nla_put(msg, LFS_A_UUID, LFS_UUID_LEN, uuid))
		return put_failed(c, msg);
	return lfs_request(c, msg, NULL, NULL);
}

uint64_t lfs_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
