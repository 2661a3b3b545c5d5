/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The librarian as lfsvol sees it: the running node agent's session,
 * borrowed over STATE_DIR/agent.sock, or a TLS session of its own
 * (liblibrarian). Either way one request at a time, in the librarian's own
 * framing and JSON (docs/PROTOCOL.md).
 */
#ifndef LFSVOL_SESSION_H
#define LFSVOL_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "conf.h"

struct lfs_book;
struct lfsvol_lib;

/*
 * The agent's session if an agent answers on agent.sock (root only), unless
 * ctx->no_agent, --librarian or LFSVOL_NO_AGENT; else a session of our own.
 * Reports a failure (exit code 3, 4 or 8).
 */
int lfsvol_lib_open(struct lfsvol_ctx *ctx, struct lfsvol_lib **out);
void lfsvol_lib_close(struct lfsvol_lib *l);
/* One request; args (may be NULL) is stolen. No message: lfsvol_lib_errmsg(). */
int lfsvol_lib_call(struct lfsvol_lib *l, const char *op, json_t *args, json_t **result);
/* The same, reporting a failure as "WHAT: librarian: MESSAGE". */
int lfsvol_lib_request(struct lfsvol_lib *l, const char *what, const char *op, json_t *args,
		       json_t **result);
/* Report a failed request r: the exit code follows from the errno (ENOENT: 6, ...). */
int lfsvol_lib_fail(struct lfsvol_lib *l, const char *what, int r);
const char *lfsvol_lib_errmsg(const struct lfsvol_lib *l);
/* The librarian's auth reply (node, book_size, heartbeat_interval...); NULL if unknown. */
json_t *lfsvol_lib_info(struct lfsvol_lib *l);
/* OpenSSL as lfsvol needs it (no openssl.cnf unless OPENSSL_CONF); once, before any session. */
void lfsvol_openssl_init(void);
/* Can the session still carry requests (ours may have been dropped, the agent gone)? */
bool lfsvol_lib_alive(const struct lfsvol_lib *l);
/* Our own session, idle, was closed by the librarian (it restarted, say). */
bool lfsvol_lib_hung_up(const struct lfsvol_lib *l);
/* Is this the agent's session, borrowed over agent.sock? */
bool lfsvol_lib_borrowed(const struct lfsvol_lib *l);
/* Does a node agent answer on STATE_DIR/agent.sock (root only)? */
bool lfsvol_agent_answers(const char *state_dir);
/* The librarian's lease_time in seconds; 0 if it did not say. */
long long lfsvol_lib_lease_time(struct lfsvol_lib *l);
/* Its book size; 0 if unknown. */
uint64_t lfsvol_lib_book_size(struct lfsvol_lib *l);
/* A shelf's whole book map, from a shelf.get/create/activate reply (follows map_complete). */
int lfsvol_lib_shelf_map(struct lfsvol_lib *l, const char *name, json_t *first,
			 struct lfs_book **books, size_t *n);

/*
 * bookmap.c: a shelf's whole map of total books into books: first's "map"
 * (borrowed), then the pages next(arg, offset, &page) asks for. 0 or -errno.
 */
typedef int (*lfsvol_map_page_fn)(void *arg, size_t offset, json_t **page);
int lfsvol_book_map(json_t *first, size_t total, lfsvol_map_page_fn next, void *arg,
		    struct lfs_book *books);

/* frame.c: the framing on agent.sock (4-byte big-endian length, one JSON object). */
#define LFSVOL_FRAME_MAX (64U << 20)
#define LFSVOL_SOCK_TIMEOUT_MS 30000
int lfsvol_frame_send(int fd, json_t *msg);
int lfsvol_frame_recv(int fd, json_t **msg, int ms);

#endif /* LFSVOL_SESSION_H */
