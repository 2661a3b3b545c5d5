/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the librarian daemon: configuration and geometry,
 * allocation policies and the request dispatcher. The catalogue's interface
 * is store.h, the operations' ops.h.
 * Library-style code returns negative errno and fills a struct lib_err with
 * a message naming the offending value; only the top level logs.
 */
#ifndef LIBRARIAN_H
#define LIBRARIAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"

/*
 * Shelf names and the other rules shared with the kernel are lfs_rules.h's.
 * Librarians before those rules took shelf names of up to 128 characters:
 * a catalogue may still hold such shelves, so lookups accept that length.
 */
#define LIB_OLD_NAME_MAX 128
#define LIB_ATTR_VALUE_MAX 4096
#define LIB_ATTRS_PER_SHELF 64
#define LIB_MAX_IGS (LFS_IG_MAX + 1)
#define LIB_MAX_NODES 16384
#define LIB_MAX_IG_BOOKS (1ULL << 32)
#define LIB_MAX_LISTEN 16
#define LIB_PSK_MAX 64
#define LIB_LIST_LIMIT 10000
#define LIB_BOOKS_LIMIT 65536

/* Book states as stored in the database; statements name them (store.h). */
enum lib_book_state {
	BOOK_FREE = 0,
	BOOK_INUSE = 1,
	BOOK_ZOMBIE = 2,
	BOOK_OFFLINE = 3,
};

struct lib_err {
	int err; /* positive errno */
	char msg[512];
};

int lib_fail(struct lib_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct lib_ig {
	uint32_t ig;
	int node; /* index into cfg->nodes */
	uint64_t books;
};

struct lib_node {
	char *name;
	int rack; /* index into cfg->racks */
	int enc; /* index into cfg->encs */
	int power; /* index into cfg->powers */
	int *igs; /* indexes into cfg->igs */
	int nigs;
	uint8_t key[LIB_PSK_MAX];
	size_t keylen;
};

struct lib_enc {
	char *name;
	int rack;
};

struct lib_config {
	char *path;
	char *db_path;
	char *listen[LIB_MAX_LISTEN];
	int nlisten;
	uint64_t book_size;
	int heartbeat_interval; /* seconds, advised to nodes */
	int lease_time; /* seconds without heartbeat before takeover */
	enum lfs_policy default_policy;
	int max_connections;
	size_t max_message;
	int idle_timeout;
	int handshake_timeout;
	int max_shelves;
	int sync_full;
	unsigned int unix_mode;
	char *admin_name;
	uint8_t admin_key[LIB_PSK_MAX];
	size_t admin_keylen;

	char **racks;
	int nracks;
	struct lib_enc *encs;
	int nencs;
	char **powers;
	int npowers;
	struct lib_node *nodes;
	int nnodes;
	struct lib_ig *igs;
	int nigs;
	int *ig_index; /* IG number -> index + 1 into igs, 0 = none */
	uint64_t total_books;
};

int lib_config_load(const char *path, struct lib_config **out, struct lib_err *e);
void lib_config_free(struct lib_config *cfg);
int lib_config_find_node(const struct lib_config *cfg, const char *name);
int lib_config_find_ig(const struct lib_config *cfg, int64_t ig);

/* alloc.c: allocation policies. */
struct lib_store;

struct lib_shelf_ctx {
	int64_t shelf_id;
	int64_t nbooks; /* current size */
	enum lfs_policy policy;
	uint32_t *req_igs; /* RequestIG list */
	int nreq_igs;
	int64_t *avoid; /* shelf ids for power-domain anti-affinity */
	int navoid;
	int node; /* requesting node index, -1 for none */
	bool zeroed; /* out: every book the grow took had books.zeroed = 1 */
};

int lib_alloc_books(struct lib_store *s, struct lib_shelf_ctx *sh, int64_t n, struct lib_err *e);

/* Requests. */
struct lib_identity {
	char name[LFS_NODE_NAME_MAX + 1];
	int node; /* index into cfg->nodes, -1 for admin */
	bool admin;
	bool tls; /* identity fixed by the TLS handshake */
};

struct lib_server {
	struct lib_config *cfg;
	struct lib_store *store;
	int64_t *last_seen; /* per node: monotonic seconds of its last request */
	int64_t started; /* monotonic seconds */
	uint64_t requests;
	int nconns;
	bool batch_open; /* a group-commit transaction is open */
	bool batch_failed; /* it was lost: its replies must not be sent */
};

int lib_batch_commit(struct lib_server *srv);

int64_t lib_now_mono(void);

json_t *lib_handle_request(struct lib_server *srv, struct lib_identity *who, bool *authed,
			   const char *buf, size_t len);
void lib_node_seen(struct lib_server *srv, int node);

/* main.c, cli.c: the command line. */
void lib_usage(FILE *f);
int lib_cmd_client(int argc, char **argv);

#endif
