/* SPDX-License-Identifier: GPL-2.0 */
/*
 * liblibrarian's insides, shared by its files, bottom up: the connection's
 * last error (client_err.c), the transport (client_io.c), the frames
 * (client_frame.c), then the session (client.c) and its asynchronous use
 * (client_async.c). A file calls only those before it. Every name here
 * starts with lc_ (a program that links the library keeps its own names);
 * the API is lfs_librarian.h.
 */
#ifndef LFS_LIBRARIAN_CLIENT_H
#define LFS_LIBRARIAN_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"

struct lfs_lib {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	char identity[LFS_PSK_IDENTITY_MAX + 1];
	uint8_t key[64];
	size_t keylen;
	int reply_timeout_ms;
	int64_t next_id;
	json_t *info;
	char addr[LFS_ADDR_MAX]; /* where it is connected */
	char errmsg[1024];
	char errcode[24];
};

/* client_err.c: set the connection's message and code; returns -err. */
int lc_err(struct lfs_lib *l, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * client_json.c: a reply's text into jansson values, as json_loadb(text, len, 0)
 * would make them, faster; NULL with why set if it is not JSON.
 */
json_t *lc_json_parse(const char *text, size_t len, char *why, size_t why_len);

/* client_io.c: the transport, each call by a deadline (CLOCK_MONOTONIC ms) */
int64_t lc_now_ms(void);
/* OpenSSL's queued error as the message ("what: reason"); returns -err. */
int lc_tls_errmsg(struct lfs_lib *l, int err, const char *what);
/* The identity, its key and the TLS objects, ready before the socket is. */
int lc_tls_prepare(struct lfs_lib *l, const struct lfs_lib_opts *o);
int lc_tls_handshake(struct lfs_lib *l, int64_t deadline);
/* Connect to HOST:PORT or unix:PATH (non-blocking); l->fd. */
int lc_open_socket(struct lfs_lib *l, const char *addr, int64_t deadline);
/* All len bytes, or -errno with the message set. */
int lc_write(struct lfs_lib *l, const void *buf, size_t len, int64_t deadline);
int lc_read(struct lfs_lib *l, void *buf, size_t len, int64_t deadline);
/* The connection is out of step: nothing more can be read from it. */
void lc_drop(struct lfs_lib *l);
/* SIGPIPE held off for the length of a call (client_io.c explains). */
struct lc_sigpipe_guard {
	sigset_t old;
	bool pending;
};
void lc_sigpipe_block(struct lc_sigpipe_guard *g);
void lc_sigpipe_restore(struct lc_sigpipe_guard *g);

/* client_frame.c: a request as one frame; a reply read and taken apart */
int lc_make_frame(struct lfs_lib *l, const char *op, json_t *args, int64_t id, uint8_t **frame,
		  size_t *flen);
int lc_read_reply(struct lfs_lib *l, int64_t deadline, json_t **rep);
int lc_take_reply(struct lfs_lib *l, json_t *rep, json_t **result);

#endif /* LFS_LIBRARIAN_CLIENT_H */
