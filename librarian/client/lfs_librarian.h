/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lfs_librarian.h - client library for the LFS librarian (liblibrarian.a).
 *
 * Link with: liblibrarian.a -ljansson -lssl -lcrypto
 *
 * Wire format (docs/PROTOCOL.md has every message):
 *   each message is a 4-byte big-endian length followed by that many bytes of
 *   UTF-8 JSON (one object). Requests: {"v":1,"id":N,"op":"...", args...}.
 *   Replies: {"v":1,"id":N,"ok":true,"result":{...}} or
 *            {"v":1,"id":N,"ok":false,"error":{"errno":E,"code":"ENOSPC","message":"..."}}.
 *
 * Transport: "HOST:PORT" (TLS 1.3 with an external pre-shared key; the PSK
 * identity is the node name) or "unix:PATH" (local administration; access
 * is granted by the socket's file permissions).
 *
 * Keys: a key file holds 32 to 64 random bytes as hex on one line (64-128 hex
 * digits), e.g. made by `librarian genkey > node01.key` or
 * `openssl rand -hex 32 > node01.key`; mode 0600.
 *
 * Every function returns 0 or a negative errno. After a failed call,
 * lfs_lib_errmsg() gives a human-readable message (the server's message for
 * errors it reported, naming the bad value) and lfs_lib_errcode() its symbolic
 * code ("ENOSPC", ...). Nothing blocks longer than the configured timeouts.
 * A connection is not thread-safe; use one per thread.
 *
 * A librarian that closes the connection is an error (ECONNRESET, EPIPE, or
 * the reply it sent before closing, such as EMSGSIZE), never SIGPIPE: each
 * call blocks SIGPIPE in the calling thread and takes one raised meanwhile,
 * leaving the process's disposition alone.
 */
#ifndef LFS_LIBRARIAN_H
#define LFS_LIBRARIAN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define LFS_PROTOCOL_VERSION 1
#define LFS_DEFAULT_PORT 9093
#define LFS_DEFAULT_ADDR "127.0.0.1:9093"
#define LFS_MAX_MESSAGE_DEFAULT (1U << 20) /* requests */
#define LFS_MAX_REPLY (64U << 20) /* replies */
#define LFS_PSK_IDENTITY_MAX 64
#define LFS_ADDR_MAX 256 /* one address, with its terminating NUL */
#define LFS_ADDR_LIST_MAX 16 /* addresses in a list */

struct lfs_lib;

struct lfs_lib_opts {
	/* "HOST:PORT", "[V6]:PORT" or "unix:PATH", or a comma-separated list of them */
	const char *addr;
	const char *node; /* PSK identity (node name or admin name); TLS only */
	const char *key_file; /* PSK key file; TLS only */
	int connect_timeout_ms; /* 0 = 5000 */
	int reply_timeout_ms; /* 0 = 30000 */
	int start; /* a list: the index of the address tried first */
};

/*
 * Connect, complete the TLS handshake and the "auth" exchange. On failure
 * *out is NULL and, if errmsg is not NULL, *errmsg is a malloc'd message the
 * caller frees.
 */
int lfs_lib_connect(const struct lfs_lib_opts *opts, struct lfs_lib **out, char **errmsg);

/*
 * A list of librarians (docs/HA.md, "Nodes follow the leader"): with more
 * than one address lfs_lib_connect() tries them in turn from opts->start
 * and keeps the first that serves ("role" "leader" or "single" in its auth
 * reply). A standby is left (it would refuse every request with EREMOTE);
 * the leader it names is tried next if it is in the list. If none serves,
 * -EREMOTE (some standby answered) or the last failure, with a message that
 * says what each address answered. One address is connected whatever its
 * role, as lfs_lib_connect_one() does.
 */
int lfs_lib_connect_one(const struct lfs_lib_opts *opts, struct lfs_lib **out, char **errmsg);
/* The address a connection was made to. */
const char *lfs_lib_addr(const struct lfs_lib *lib);
/* The index of addr in list (-1 if absent). */
int lfs_lib_addr_index(const char *list, const char *addr);
/*
 * Split a comma-separated list (blanks around each item ignored) into out,
 * checking each: 1..LFS_ADDR_LIST_MAX addresses, each HOST:PORT with a port
 * of 1-65535, [V6]:PORT or unix:/PATH, none twice. Returns the count or
 * -EINVAL with msg naming the bad address.
 */
int lfs_lib_addr_split(const char *list, char out[][LFS_ADDR_MAX], int max, char *msg,
		       size_t msglen);

/*
 * Send one request and wait for its reply. args (may be NULL) is a JSON object
 * whose members are added to the request; it is borrowed, not stolen.
 * On success *result (if not NULL) receives a new reference to the reply's
 * "result" object. A server-reported error returns -errno from the reply.
 */
int lfs_lib_call(struct lfs_lib *lib, const char *op, json_t *args, json_t **result);

/*
 * 1 while the connection is usable. After a transport failure (timeout, reset,
 * malformed reply) it is 0 and the caller must reconnect; a request in flight
 * at that moment may or may not have been applied.
 */
int lfs_lib_connected(const struct lfs_lib *lib);

/*
 * The "auth" reply: node, admin, book_size, heartbeat_interval, lease_time,
 * fence_grace, fabric_uuid, protocol, server.
 */
json_t *lfs_lib_server_info(struct lfs_lib *lib);

const char *lfs_lib_errmsg(const struct lfs_lib *lib);
const char *lfs_lib_errcode(const struct lfs_lib *lib);

/* Close and free; NULL is accepted. */
void lfs_lib_close(struct lfs_lib *lib);

/*
 * Asynchronous use of a connection, for a caller that must not wait for a
 * reply (the node agent's lease renewals): lfs_lib_send() writes one
 * request (at most timeout_ms, 0 = the reply timeout) and gives its id;
 * lfs_lib_receive() returns 1 and a whole reply object ({"id", "ok",
 * "result" or "error"}) if one has arrived, 0 if none has yet (it never
 * waits), or -errno after which the connection is closed. The bytes of a
 * reply that arrive in pieces are kept in the caller's inbox between calls.
 * lfs_lib_reply_result() turns a reply into lfs_lib_call()'s result or
 * error (it consumes the reply). lfs_lib_fd() is the socket, for poll()
 * and SIOCOUTQ (bytes not yet acknowledged by the peer); -1 if closed.
 */
struct lfs_lib_inbox {
	uint8_t *buf;
	size_t len, cap;
};
int lfs_lib_fd(const struct lfs_lib *lib);
int lfs_lib_send(struct lfs_lib *lib, const char *op, json_t *args, int timeout_ms, int64_t *id);
int lfs_lib_receive(struct lfs_lib *lib, struct lfs_lib_inbox *in, json_t **reply);
int lfs_lib_reply_result(struct lfs_lib *lib, json_t *reply, json_t **result);
void lfs_lib_inbox_free(struct lfs_lib_inbox *in);

/* Read a key file (hex). Returns the key length or a negative errno. */
int lfs_lib_read_key(const char *path, uint8_t *key, size_t max, char *msg, size_t msglen);

/* errno <-> symbolic name ("ENOSPC"), for printing and for servers. */
const char *lfs_errno_name(int err);

#endif
