/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server: server.c runs the event loop in rounds, conn.c is one
 * connection (its buffers, frames, replies), listen.c the listening sockets,
 * accepting under the connection budgets, and TLS identities.
 */
#ifndef LIB_SERVER_H
#define LIB_SERVER_H

#include <openssl/ssl.h>

#include "librarian.h"

#define LIB_OUT_HIGH (4U << 20) /* stop taking requests while this much output is unsent */
#define LIB_IN_LOW (64U << 10) /* read ahead at most this much beyond a complete frame */
#define LIB_IN_MIN 4096 /* a connection's input buffer to start with */
#define LIB_FLUSH_MAX (256U << 10) /* bytes sent to one connection per round */

enum conn_state { C_HANDSHAKE, C_OPEN, C_CLOSING };

struct conn {
	int fd;
	SSL *ssl;
	enum conn_state state;
	bool is_unix; /* the admin socket */
	struct lib_identity who;
	bool authed; /* "auth" done */
	/*
	 * The ClientHello named a known identity and its PSK binder checks out.
	 * Not a proof of the key: a replayed ClientHello has a valid binder too;
	 * only a finished handshake proves it.
	 */
	bool psk_ok;
	bool counted; /* in srv->id_conns (an authenticated TCP connection) */
	bool renews; /* it carried a heartbeat: the node's renewal session */
	uint64_t seq; /* order of authentication: the older of two as recently active */
	char peer[80];
	unsigned char addr[16]; /* the peer's IP (IPv4 mapped), for the per-address budget */
	uint8_t *in;
	size_t inlen, incap;
	bool eof; /* the peer sends nothing more */
	struct lib_frame head; /* the first frame, parsed ahead by the heartbeat pass */
	uint8_t *out;
	size_t outlen, outoff, outcap;
	int64_t last_active; /* service clock (ms) */
	int64_t read_at; /* service clock (ms) of the last read that brought bytes */
	int64_t read_us; /* monotonic us of that read (request latencies, latency.c) */
	uint32_t events;
	bool queued; /* on the work list */
	bool dirty; /* on the list of connections to flush at the round's end */
	size_t batch_start; /* where the open round's replies start in out */
	json_t *batch_ids; /* the ids of the open round's requests */
	struct conn *lru_prev, *lru_next; /* on the unauthenticated or the admin list */
	bool listed; /* on one of them */
	bool beat; /* the lease thread serves it (beat.c): the loop leaves it alone */
};

/* Least recently active first. */
struct conn_list {
	struct conn *head, *tail;
	int n;
};

struct listener {
	int fd;
	bool is_unix;
	char *path;
	char *addr;
};

struct srv {
	struct lib_server core;
	int ep, sigfd;
	int reserve_fd; /* closed to shed a connection when no descriptor is left */
	SSL_CTX *tls;
	struct listener ls[LIB_MAX_LISTEN];
	int nls;
	struct conn **conns; /* by fd */
	int maxfd;
	int verbose;
	int64_t last_reject_log; /* monotonic seconds */
	int *dirty; /* fds to flush after this round's commit */
	int ndirty;
	int *work; /* fds with requests to process, in turn */
	int nwork;
	int *hb; /* fds whose heartbeats this round answered */
	struct conn_list unauth, admin;
	int nauthed; /* authenticated TCP connections */
	int *id_conns; /* ... of each node (by index; cfg->nnodes: the admin) */
	uint64_t nseq; /* connections authenticated so far */
	struct lib_beat *beat; /* the lease thread, or NULL */
	int64_t commit_us; /* how long commits take: a moving average (server.c) */
};

/* data.fd of the lease thread's eventfd in the loop's epoll (listeners: -2 - index) */
#define LIB_BEAT_EVENT (-2 - LIB_MAX_LISTEN)

/* A connection's identity as an index of srv->id_conns. */
static inline int lib_id_slot(const struct srv *s, const struct conn *c)
{
	return c->who.node >= 0 ? c->who.node : s->core.cfg->nnodes;
}

int lib_serve(struct lib_config *cfg, struct lib_store *store, struct lib_leader *leader,
	      int verbose);

/* conn.c */
struct conn *lib_conn_new(struct srv *s, int fd, bool is_unix);
void lib_conn_close(struct srv *s, struct conn *c, const char *why);
void lib_conn_set_events(struct srv *s, struct conn *c, uint32_t ev);
/* Read what is there, within the buffer's bounds; -1 if the connection is gone. */
int lib_conn_pull(struct srv *s, struct conn *c);
bool lib_conn_can_work(struct srv *s, struct conn *c);
bool lib_conn_head_is_heartbeat(struct srv *s, struct conn *c);
void lib_conn_process_one(struct srv *s, struct conn *c);
void lib_conn_mark_dirty(struct srv *s, struct conn *c);
/* After the commit: send, close, or wait for the socket. */
void lib_conn_output(struct srv *s, struct conn *c);
/* The round's commit failed: its replies become errors, then the connection closes. */
void lib_conn_batch_failed(struct srv *s, struct conn *c, const struct lib_err *e);
void lib_conn_batch_done(struct conn *c);
void lib_work_add(struct srv *s, struct conn *c);
void lib_list_remove(struct conn_list *l, struct conn *c);
void lib_list_append(struct conn_list *l, struct conn *c);

void lib_conn_unlist(struct srv *s, struct conn *c);
bool lib_conn_has_frame(struct srv *s, struct conn *c);
/* 1 = got data, 0 = would block or no room, -1 = EOF or error */
int lib_conn_read(struct srv *s, struct conn *c);
/* 1 = all sent, 0 = would block or this round's share sent, -1 = dead */
int lib_conn_flush(struct conn *c);
int lib_conn_beat_one(struct srv *s, struct conn *c, struct lib_store *ro);

/* beat.c: the lease thread */
int lib_beat_start(struct srv *s);
void lib_beat_stop(struct srv *s);
/* After the loop answered a heartbeat: hand c to the thread if it has nothing else. */
void lib_beat_offer(struct srv *s, struct conn *c);
/* The connections the thread gave back (its eventfd was readable). */
void lib_beat_returns(struct srv *s);

/* listen.c */
int lib_listen_all(struct srv *s);
/* A listening TCP socket (non-blocking) on HOST:PORT, numeric. */
int lib_listen_tcp(struct listener *l, const char *addr, struct lib_err *e);
void lib_listen_close(struct srv *s);
void lib_accept(struct srv *s, struct listener *l);
/* 0: still going or done; -1: the connection was closed (c is gone). */
int lib_handshake(struct srv *s, struct conn *c);
int lib_fd_budget(struct srv *s);

#endif
