// SPDX-License-Identifier: GPL-2.0
/*
 * One connection: its input buffer (grown as bytes arrive, never by what a
 * frame header announces), its frames, the replies it waits for and their
 * sending. Requests on a connection are answered in order; a connection that
 * does not read its replies is not read either once LIB_OUT_HIGH bytes wait.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/err.h>

#include "ops.h"
#include "server.h"

struct conn *lib_conn_new(struct srv *s, int fd, bool is_unix)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->in = malloc(LIB_IN_MIN);
	if (!c->in) {
		free(c);
		return NULL;
	}
	c->incap = LIB_IN_MIN;
	c->fd = fd;
	c->is_unix = is_unix;
	c->who.node = -1;
	c->who.peer = c->peer;
	c->last_active = lib_svc_now(&s->core);
	return c;
}

void lib_list_remove(struct conn_list *l, struct conn *c)
{
	if (c->lru_prev)
		c->lru_prev->lru_next = c->lru_next;
	else
		l->head = c->lru_next;
	if (c->lru_next)
		c->lru_next->lru_prev = c->lru_prev;
	else
		l->tail = c->lru_prev;
	c->lru_prev = c->lru_next = NULL;
	c->listed = false;
	l->n--;
}

void lib_list_append(struct conn_list *l, struct conn *c)
{
	c->lru_prev = l->tail;
	c->lru_next = NULL;
	if (l->tail)
		l->tail->lru_next = c;
	else
		l->head = c;
	l->tail = c;
	c->listed = true;
	l->n++;
}

/*
 * The connection off the round's lists: its descriptor may be reused at once,
 * or the lease thread takes it. (A connection already flushed in this round
 * may still be on the dirty list.)
 */
void lib_conn_unlist(struct srv *s, struct conn *c)
{
	for (int i = 0; c->queued && i < s->nwork; i++)
		if (s->work[i] == c->fd)
			s->work[i] = -1;
	for (int i = 0; i < s->ndirty; i++)
		if (s->dirty[i] == c->fd)
			s->dirty[i] = -1;
	c->queued = c->dirty = false;
}

void lib_conn_close(struct srv *s, struct conn *c, const char *why)
{
	char b[100];

	if (s->verbose && why)
		lib_log("%s (%s): closed: %s", c->peer,
			c->who.name[0] ? lib_shown(c->who.name, b, sizeof(b)) : "-", why);
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	lib_conn_unlist(s, c);
	if (c->is_unix && c->listed) {
		lib_list_remove(&s->admin, c);
		s->core.nadmin--;
	} else if (c->listed) {
		lib_list_remove(&s->unauth, c);
		s->core.nunauth--;
	} else if (!c->is_unix && c->state != C_HANDSHAKE) {
		s->nauthed--;
	}
	if (c->counted)
		s->id_conns[lib_id_slot(s, c)]--;
	if (c->ssl)
		SSL_free(c->ssl);
	close(c->fd);
	s->conns[c->fd] = NULL;
	json_decref(c->head.req);
	json_decref(c->head.reply);
	json_decref(c->batch_ids);
	free(c->in);
	free(c->out);
	free(c);
	s->core.nconns--;
}

void lib_conn_set_events(struct srv *s, struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = c->fd };

	if (ev == c->events)
		return;
	c->events = ev;
	epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &e);
}

void lib_conn_mark_dirty(struct srv *s, struct conn *c)
{
	if (!c->dirty) {
		c->dirty = true;
		s->dirty[s->ndirty++] = c->fd;
	}
}

/* Room for the text of one reply frame in out (compacting first). */
static int out_room(struct conn *c, size_t len)
{
	size_t need, cap;
	uint8_t *n;

	if (c->outoff && c->outoff == c->outlen && !c->batch_ids)
		c->outoff = c->outlen = 0;
	need = c->outlen + 4 + len;
	if (need <= c->outcap)
		return 0;
	if (c->outoff) {
		memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
		c->outlen -= c->outoff;
		c->batch_start -= c->batch_ids ? c->outoff : 0;
		c->outoff = 0;
		need = c->outlen + 4 + len;
	}
	cap = c->outcap ? c->outcap : 4096;
	while (cap < need)
		cap *= 2;
	n = realloc(c->out, cap);
	if (!n)
		return -ENOMEM;
	c->out = n;
	c->outcap = cap;
	return 0;
}

static char *reply_text(json_t *reply, size_t *len)
{
	char *txt = json_dumps(reply, JSON_COMPACT);

	if (txt && strlen(txt) > LFS_MAX_REPLY) {
		json_t *r = json_pack(
			"{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", 1, "id",
			json_object_get(reply, "id") ?: json_null(), "ok", 0, "error", "errno",
			EMSGSIZE, "code", "EMSGSIZE", "message",
			"the reply is larger than the protocol allows; ask for less (offset/limit)");

		free(txt);
		txt = json_dumps(r, JSON_COMPACT);
		json_decref(r);
	}
	*len = txt ? strlen(txt) : 0;
	return txt;
}

/* Frame a reply's text into out (freed). */
static int queue_text(struct conn *c, char *txt, size_t len)
{
	if (!txt || out_room(c, len) < 0) {
		free(txt);
		return -ENOMEM;
	}
	c->out[c->outlen++] = len >> 24;
	c->out[c->outlen++] = len >> 16;
	c->out[c->outlen++] = len >> 8;
	c->out[c->outlen++] = len;
	memcpy(c->out + c->outlen, txt, len);
	c->outlen += len;
	free(txt);
	return 0;
}

/*
 * The reply's text with "result": result (JSON text of rlen bytes, freed)
 * added as its last member; the EMSGSIZE error if that is too large.
 */
static char *reply_with_result(json_t *reply, char *result, size_t rlen, size_t *len)
{
	char *head = json_dumps(reply, JSON_COMPACT), *txt = NULL;
	size_t hlen = head ? strlen(head) : 0;

	if (hlen && hlen + rlen + 11 <= LFS_MAX_REPLY && (txt = malloc(hlen + rlen + 11))) {
		memcpy(txt, head, hlen - 1); /* without its closing brace */
		memcpy(txt + hlen - 1, ",\"result\":", 10);
		memcpy(txt + hlen + 9, result, rlen);
		memcpy(txt + hlen + 9 + rlen, "}", 2);
		*len = hlen + rlen + 10;
	} else if (head) {
		json_t *r = json_pack(
			"{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", 1, "id",
			json_object_get(reply, "id") ?: json_null(), "ok", 0, "error", "errno",
			EMSGSIZE, "code", "EMSGSIZE", "message",
			"the reply is larger than the protocol allows; ask for less (offset/limit)");

		txt = reply_text(r, len);
		json_decref(r);
	}
	free(head);
	free(result);
	return txt;
}

/*
 * Queue a reply (consumed), with its result as text if result is not NULL
 * (freed); in an open round its id is kept for lib_conn_batch_failed.
 */
static int queue_reply(struct srv *s, struct conn *c, json_t *reply, char *result, size_t rlen)
{
	size_t len = 0;
	char *txt = result ? reply_with_result(reply, result, rlen, &len) : reply_text(reply, &len);

	if (txt && s->core.batch_open) {
		if (!c->batch_ids && (c->batch_ids = json_array()))
			c->batch_start = c->outlen;
		json_array_append(c->batch_ids, json_object_get(reply, "id") ?: json_null());
	}
	json_decref(reply);
	return queue_text(c, txt, len);
}

static void queue_error(struct srv *s, struct conn *c, json_t *id, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void queue_error(struct srv *s, struct conn *c, json_t *id, int err, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	queue_reply(s, c,
		    json_pack("{s:i,s:O,s:b,s:{s:i,s:s,s:s}}", "v", 1, "id", id ?: json_null(),
			      "ok", 0, "error", "errno", err, "code", lfs_errno_name(err),
			      "message", msg),
		    NULL, 0);
}

void lib_conn_batch_done(struct conn *c)
{
	json_decref(c->batch_ids);
	c->batch_ids = NULL;
}

/*
 * The commit of the round failed: no reply of it may say "ok". Each is
 * replaced by the error (EIO, or ENOSPC for a full disk) with its id; the
 * connection closes once they are sent, since what the client pipelined
 * after them may have counted on them.
 */
void lib_conn_batch_failed(struct srv *s, struct conn *c, const struct lib_err *e)
{
	json_t *ids = c->batch_ids, *id;
	size_t i;

	if (!ids)
		return;
	c->batch_ids = NULL;
	c->outlen = c->batch_start;
	json_array_foreach(ids, i, id)
		queue_error(
			s, c, id, e->err,
			"the transaction of this request failed to commit and it was not applied (%s); the connection closes",
			e->msg);
	json_decref(ids);
	c->state = C_CLOSING;
}

static uint32_t frame_len(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* The first frame is complete, or is one to refuse as soon as its header is in. */
static bool has_frame(struct srv *s, struct conn *c)
{
	uint32_t len;

	if (c->inlen < 4)
		return false;
	len = frame_len(c->in);
	return len == 0 || len > s->core.cfg->max_message || c->inlen - 4 >= len;
}

bool lib_conn_has_frame(struct srv *s, struct conn *c)
{
	return has_frame(s, c);
}

bool lib_conn_can_work(struct srv *s, struct conn *c)
{
	return c->state == C_OPEN && has_frame(s, c) && c->outlen - c->outoff < LIB_OUT_HIGH;
}

/*
 * Room to read into: up to LIB_IN_LOW bytes, or the whole of a longer first
 * frame, doubling as bytes arrive. 0 when enough is buffered.
 */
static size_t in_room(struct srv *s, struct conn *c)
{
	size_t limit = LIB_IN_LOW, cap;
	uint8_t *n;

	if (c->inlen >= 4 && !has_frame(s, c))
		limit = (size_t)frame_len(c->in) + 4 > limit ? frame_len(c->in) + 4 : limit;
	else if (has_frame(s, c) && c->inlen >= LIB_IN_LOW)
		return 0;
	if (c->inlen < c->incap)
		return c->incap - c->inlen;
	if (c->incap >= limit)
		return 0;
	cap = c->incap * 2 < limit ? c->incap * 2 : limit;
	n = realloc(c->in, cap);
	if (!n)
		return 0;
	c->in = n;
	c->incap = cap;
	return cap - c->inlen;
}

/* 1 = got data, 0 = would block or no room, -1 = EOF or error */
int lib_conn_read(struct srv *s, struct conn *c)
{
	size_t room = in_room(s, c), got = 0;
	ssize_t n;
	int r;

	if (!room)
		return 0;
	if (!c->ssl) {
		n = recv(c->fd, c->in + c->inlen, room, 0);
		if (n > 0)
			c->inlen += n;
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return n > 0;
		return -1;
	}
	r = SSL_read_ex(c->ssl, c->in + c->inlen, room, &got);
	if (r == 1) {
		c->inlen += got;
		return 1;
	}
	r = SSL_get_error(c->ssl, r);
	ERR_clear_error();
	return r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

int lib_conn_pull(struct srv *s, struct conn *c)
{
	for (int i = 0; i < 16 && !c->eof && c->state == C_OPEN; i++) {
		int r = lib_conn_read(s, c);

		if (r == 0)
			break;
		if (r < 0) {
			c->eof = true; /* the peer may only have shut its sending side */
			break;
		}
		c->read_at = c->last_active = lib_svc_now(&s->core);
		c->read_us = lib_mono_us();
		if (c->is_unix) {
			lib_list_remove(&s->admin, c);
			lib_list_append(&s->admin, c);
		}
	}
	lib_work_add(s, c);
	if (c->eof && !has_frame(s, c)) {
		if (c->inlen)
			queue_error(
				s, c, NULL, EBADMSG,
				"truncated message: the connection ended %zu bytes into a message",
				c->inlen);
		c->state = C_CLOSING;
		lib_conn_mark_dirty(s, c);
	}
	return 0;
}

/* The first frame parsed ahead: whether it is a heartbeat (processed first). */
bool lib_conn_head_is_heartbeat(struct srv *s, struct conn *c)
{
	uint32_t len;

	if (!lib_conn_can_work(s, c))
		return false;
	len = frame_len(c->in);
	if (len == 0 || len > s->core.cfg->max_message)
		return false;
	if (!c->head.req && !c->head.reply) {
		c->head.buf = (const char *)c->in + 4;
		c->head.len = len;
		lib_parse_frame(&c->head);
	}
	return lib_is_heartbeat(&c->head);
}

static void log_request(struct srv *s, struct conn *c, const char *txt, uint32_t len, json_t *reply)
{
	char b[100], t[260], *shown = strndup(txt, len > 200 ? 200 : len);

	lib_log("%s (%s): %s -> %s", c->peer, lib_shown(c->who.name, b, sizeof(b)),
		shown ? lib_shown(shown, t, sizeof(t)) : "?",
		json_is_true(json_object_get(reply, "ok")) ?
			"ok" :
			json_string_value(
				json_object_get(json_object_get(reply, "error"), "code")));
	free(shown);
}

/* The first frame (of len bytes) is done: drop it from the input. */
static void consume(struct conn *c, uint32_t len)
{
	c->inlen -= 4 + len;
	memmove(c->in, c->in + 4 + len, c->inlen);
	if (c->incap > LIB_IN_LOW && c->inlen < LIB_IN_MIN) {
		uint8_t *n = realloc(c->in, LIB_IN_MIN); /* a large frame is done: give it back */

		if (n) {
			c->in = n;
			c->incap = LIB_IN_MIN;
		}
	}
}

/* Answer the first frame of the input buffer. */
void lib_conn_process_one(struct srv *s, struct conn *c)
{
	uint32_t len = frame_len(c->in), max = s->core.cfg->max_message;
	struct lib_frame f = c->head;
	json_t *reply;

	memset(&c->head, 0, sizeof(c->head));
	lib_conn_mark_dirty(s, c);
	if (len > max) {
		queue_error(
			s, c, NULL, EMSGSIZE,
			"message of %u bytes is larger than max_message (%u); closing the connection",
			len, max);
		c->state = C_CLOSING;
		return;
	}
	if (len == 0) {
		queue_error(s, c, NULL, EBADMSG, "empty message (length 0)");
	} else {
		f.buf = (const char *)c->in + 4;
		f.len = len;
		f.read_at = c->read_at;
		f.read_us = c->read_us;
		reply = lib_handle_request(&s->core, &c->who, &c->authed, &f);
		if (s->verbose)
			log_request(s, c, f.buf, len, reply);
		if (!reply)
			free(f.result_text);
		if (!reply || queue_reply(s, c, reply, f.result_text, f.result_len) < 0)
			c->state = C_CLOSING;
	}
	consume(c, len);
	if (c->eof && !has_frame(s, c))
		lib_conn_pull(s, c);
}

/*
 * On the lease thread (beat.c): answer the first frame, a heartbeat, from
 * ro. -1 if the reply cannot be queued (the loop then closes the connection).
 */
int lib_conn_beat_one(struct srv *s, struct conn *c, struct lib_store *ro)
{
	struct lib_frame f = c->head;
	uint32_t len = frame_len(c->in);
	size_t tlen = 0;
	json_t *reply;
	char *txt;

	memset(&c->head, 0, sizeof(c->head));
	f.buf = (const char *)c->in + 4;
	f.len = len;
	f.read_at = c->read_at;
	reply = lib_handle_beat(&s->core, ro, &c->who, &c->authed, &f);
	if (s->verbose)
		log_request(s, c, f.buf, len, reply);
	consume(c, len);
	txt = reply ? reply_text(reply, &tlen) : NULL;
	json_decref(reply);
	return queue_text(c, txt, tlen);
}

/*
 * 1 = all sent, 0 = would block (or this round's share, LIB_FLUSH_MAX, is
 * sent: one connection's large replies do not hold up the loop), -1 = the
 * connection is dead
 */
int lib_conn_flush(struct conn *c)
{
	size_t sent = 0;

	while (c->outoff < c->outlen) {
		size_t len = c->outlen - c->outoff, w = 0;
		ssize_t n;
		int r;

		if (sent >= LIB_FLUSH_MAX)
			return 0;
		if (len > LIB_FLUSH_MAX - sent)
			len = LIB_FLUSH_MAX - sent;
		if (!c->ssl) {
			n = send(c->fd, c->out + c->outoff, len, MSG_NOSIGNAL);
			if (n > 0) {
				c->outoff += n;
				sent += n;
				continue;
			}
			return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
		}
		r = SSL_write_ex(c->ssl, c->out + c->outoff, len, &w);
		if (r == 1) {
			c->outoff += w;
			sent += w;
			continue;
		}
		r = SSL_get_error(c->ssl, r);
		ERR_clear_error();
		return r == SSL_ERROR_WANT_WRITE || r == SSL_ERROR_WANT_READ ? 0 : -1;
	}
	c->outoff = c->outlen = 0;
	return 1;
}

/* Whether to ask epoll for input: the buffer has room and output does not pile up. */
static bool wants_input(struct srv *s, struct conn *c)
{
	if (c->eof || c->outlen - c->outoff >= LIB_OUT_HIGH)
		return false;
	return !has_frame(s, c) || c->inlen < LIB_IN_LOW;
}

void lib_conn_output(struct srv *s, struct conn *c)
{
	int r;

	c->dirty = false;
	if (c->state == C_HANDSHAKE)
		return;
	r = lib_conn_flush(c);
	if (r < 0) {
		lib_conn_close(s, c, "send failed");
		return;
	}
	if (c->state == C_CLOSING) {
		if (c->outlen == c->outoff) {
			lib_conn_close(s, c, "closed");
			return;
		}
		lib_conn_set_events(s, c, EPOLLOUT);
		return;
	}
	/* requests waiting for output room, or decrypted bytes epoll cannot see */
	if (c->ssl && SSL_pending(c->ssl) && !has_frame(s, c))
		lib_conn_pull(s, c);
	lib_work_add(s, c);
	lib_conn_set_events(
		s, c, (wants_input(s, c) ? EPOLLIN : 0) | (c->outlen > c->outoff ? EPOLLOUT : 0));
}
