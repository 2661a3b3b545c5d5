/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operations of the protocol (docs/PROTOCOL.md), one file per family:
 * ops_shelf.c (shelf.*), ops_attr.c (attr.*, and the attributes a grow
 * reads), ops_activation.c (shelf.activate, shelf.deactivate), ops_books.c
 * (zombie.*, free.*), ops_bad.c (book.*), ops_node.c (auth, geometry, stats, heartbeat,
 * node.set_state). dispatch.c holds the table of operations and runs each
 * request in its savepoint; request.c reads arguments; reply.c builds the
 * JSON that several operations return.
 *
 * A handler gets its arguments already checked against the table's list,
 * sets rq->result and returns 0, or returns -errno with rq->err naming what
 * was wrong (FAIL). It reads and writes the catalogue through store.h.
 */
#ifndef LIB_OPS_H
#define LIB_OPS_H

#include <jansson.h>

#include "librarian.h"
#include "store.h"

/* JSON text being written (reply_text.c); oom once an allocation failed. */
struct lib_text {
	char *p;
	size_t len, cap;
	bool oom;
};

struct req {
	struct lib_server *srv;
	struct lib_store *s;
	const struct lib_config *c;
	struct lib_identity *who;
	bool *authed;
	const char *op;
	int op_index; /* in dispatch.c's table, -1 until known */
	json_t *args;
	json_t *result;
	struct lib_text text; /* or the result as JSON text (shelf.list) */
	struct lib_err err;
	int64_t read_at; /* service clock (ms) when the request was read */
	int pending_node; /* node.set_state: its new state, applied after the savepoint */
	bool changes; /* an OP_CHANGES operation: audited (audit.c) */
	enum lib_node_state pending_state;
};

#define FAIL(rq, code, ...) lib_fail(&(rq)->err, code, __VA_ARGS__)

/* request.c: arguments, names and the acting node. */
int lib_args_check(struct req *rq, const char *const *allowed);
int lib_arg_str(struct req *rq, const char *key, bool required, const char **out);
int lib_arg_int(struct req *rq, const char *key, int64_t lo, int64_t hi, bool required,
		int64_t *out);
int lib_arg_bool(struct req *rq, const char *key, bool *out);
/* The node an operation acts for: the caller, or for the admin "node": NAME. */
int lib_arg_node(struct req *rq, bool required, int *node);
/* "name": an existing shelf. */
int lib_arg_shelf(struct req *rq, struct lib_shelf *sh);
/* "uuid", if given: sh must still be that shelf (ESTALE: renamed or replaced since). */
int lib_arg_same_shelf(struct req *rq, const struct lib_shelf *sh);
/* A shelf by name (the lookup rule, see request.c), ENOENT naming it. */
int lib_shelf_lookup(struct req *rq, const char *name, struct lib_shelf *sh);
/* A name for a new shelf (lfs_rule_shelf_name); prefix starts the message. */
int lib_check_new_name(struct req *rq, const char *prefix, const char *name);
int lib_check_lookup_name(struct req *rq, const char *name);
/* A shelf's book count the kernel can map (lfs_rule_shelf_books): E2BIG beyond. */
int lib_check_shelf_books(struct req *rq, int64_t books);

/* ops_books.c: books[i] = [ig, book] of the fabric, of the caller's IGs unless admin; k: IG index. */
int lib_book_ref(struct req *rq, size_t i, json_t *el, int64_t *id, int *k);

/* reply.c: JSON shared by several operations. */
json_t *lib_book_pair(int64_t id);
/* Appends [ig, book] of id to the JSON array arg (a lib_id_fn). */
int lib_append_book(void *arg, int64_t id);
json_t *lib_reply_map(struct req *rq, int64_t shelf, int64_t offset, int64_t limit);
json_t *lib_reply_shelf(struct req *rq, int64_t shelf);
json_t *lib_reply_shelf_map(struct req *rq, int64_t shelf, int64_t offset, int64_t limit);
json_t *lib_reply_attrs(struct req *rq, int64_t shelf);
json_t *lib_reply_shelf_row(struct req *rq, const struct lib_shelf_row *row);
/* lib_reply_shelf() from what the request knows: the row, activations acts (taken). */
json_t *lib_reply_shelf_known(struct req *rq, int64_t id, const struct lib_shelf_row *row,
			      json_t *acts);
/* Books as [ig, book] pairs. */
json_t *lib_books_array(const int64_t *ids, int64_t n);
/* o with lib_reply_shelf_map()'s map from offset 0, of the n books ids[] (o returned). */
json_t *lib_reply_map_known(struct req *rq, json_t *o, const int64_t *ids, int64_t n,
			    int64_t limit);
/* reply_text.c: JSON text without jansson objects; the same object as lib_reply_shelf_row. */
void lib_text_add(struct lib_text *t, const char *s, size_t n);
void lib_text_printf(struct lib_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void lib_text_str(struct lib_text *t, const char *s, size_t n);
void lib_text_shelf_row(struct req *rq, struct lib_text *t, const struct lib_shelf_row *row);
char *lib_reply_allocation(struct req *rq, int64_t shelf);

/* ops_attr.c: attributes checked and stored; what a grow reads from them. */
int lib_attr_set(struct req *rq, const struct lib_shelf *sh, const char *key, json_t *v);
int lib_shelf_ctx_load(struct req *rq, struct lib_shelf *sh, int node, struct lib_shelf_ctx *x);
/*
 * The same from the texts of lfs.policy, lfs.igs and lfs.anti_affinity as
 * the request knows them (NULL: the shelf has none); text NULL: read them.
 */
int lib_shelf_ctx_texts(struct req *rq, struct lib_shelf *sh, int node, const char *const text[3],
			struct lib_shelf_ctx *x);
void lib_shelf_ctx_free(struct lib_shelf_ctx *x);

/* access.c: owners, tenants and access lists (lfs.access). */
const char *lib_access_name(int level);
int lib_access_of(struct req *rq, const struct lib_shelf *sh, enum lib_access *out);
/* 0, or ENOENT if the caller does not see the shelf, or EPERM naming what it may not do. */
int lib_require_access(struct req *rq, const struct lib_shelf *sh, enum lib_access need,
		       const char *what);
const struct lib_shelf_filter *lib_access_filter(struct req *rq, struct lib_shelf_filter *f,
						 char *tag, size_t len);
int lib_access_set(struct req *rq, int64_t shelf, json_t *v);
json_t *lib_access_list(struct req *rq, int64_t shelf);
json_t *lib_access_from_text(const char *text);

/* quota.c: EDQUOT if adding shelves and books to owner's (and tenant's) would exceed a quota. */
int lib_quota_check(struct req *rq, const char *owner, const char *tenant, int64_t shelves,
		    int64_t books);

/* lapse.c: fencing nodes that are no longer live set offline. */
int lib_fence_settle(struct req *rq);
/* lease.c: "N.N" seconds of ms, for messages. */
const char *lib_secs(int64_t ms, char *buf, size_t len);
/* fence_cmd.c: 0 once node k (not live) is fenced or no fence_command is set; else EBUSY/EIO. */
int lib_fence_require(struct req *rq, int k, const char *what);
/* true once node k is fenced (or none is set); else its fence is started. */
bool lib_fence_settled(struct lib_server *srv, int k);
/* lapse.c: 0 if the holder may be taken over (not live, fenced); else EBUSY naming it. */
int lib_require_not_live(struct req *rq, const char *shelf, const char *holder, const char *mode,
			 const char *what);

/* activation_mode.c: which activation modes ("rw", "shared", "ro") coexist. */
int lib_mode_check(struct req *rq, const char *arg, const char *mode);
bool lib_modes_compatible(const char *a, const char *b);
/* "rw" and "shared": the holder writes; fencing treats both alike. */
bool lib_mode_writes(const char *mode);
enum lib_access lib_mode_access(const char *mode);

/* shelf_size.c: a shelf's bytes, lfs.size (at most its capacity, books * book_size). */
int64_t lib_shelf_capacity(const struct lib_config *c, int64_t books);
/* lfs.size (stored text, or NULL), else the capacity. */
int64_t lib_shelf_bytes(const struct lib_config *c, int64_t books, const char *size);
int lib_size_put(struct req *rq, int64_t shelf, int64_t bytes);
int lib_size_set(struct req *rq, const struct lib_shelf *sh, json_t *v);
/* Whether lfs.size text size is not a byte count within cap (a shrink brings it to cap). */
bool lib_size_over(const char *size, int64_t cap);

/* ops_activation.c */
struct lib_holder {
	char node[LFS_NODE_NAME_MAX + 1];
	char mode[8];
};

/*
 * Activations of the shelf by nodes other than node (NULL: none excluded)
 * that an activation in mode would conflict with: their count, the first.
 */
int lib_activation_conflicts(struct req *rq, int64_t shelf, const char *node, const char *mode,
			     struct lib_holder *first);
/* node's own activation of the shelf: 1 and its mode, or 0 if it holds none. */
int lib_activation_mode(struct req *rq, int64_t shelf, const char *node, char *mode, size_t len);
int lib_require_unshared(struct req *rq, struct lib_shelf *sh, const char *what);
int lib_require_growable(struct req *rq, struct lib_shelf *sh);

/* ops_shelf.c */
/*
 * placement: the shelf's lfs.policy, lfs.igs and lfs.anti_affinity as the
 * request knows them (lib_shelf_ctx_texts; NULL: read them). taken: the new
 * books' ids, in order (malloc'd).
 */
int lib_shelf_grow(struct req *rq, struct lib_shelf *sh, int node, int64_t n,
		   const char *const placement[3], int64_t **taken);

/* The handlers, in the table of dispatch.c. */
int lib_op_auth(struct req *rq);
int lib_op_geometry(struct req *rq);
int lib_op_stats(struct req *rq);
int lib_op_ping(struct req *rq);
int lib_op_heartbeat(struct req *rq);
int lib_op_node_set_state(struct req *rq);
int lib_op_shelf_create(struct req *rq);
int lib_op_shelf_destroy(struct req *rq);
int lib_op_shelf_resize(struct req *rq);
int lib_op_shelf_rename(struct req *rq);
int lib_op_shelf_list(struct req *rq);
int lib_op_shelf_get(struct req *rq);
int lib_op_attr_get(struct req *rq);
int lib_op_attr_set(struct req *rq);
int lib_op_attr_list(struct req *rq);
int lib_op_attr_remove(struct req *rq);
int lib_op_activate(struct req *rq);
int lib_op_deactivate(struct req *rq);
int lib_op_zombie_list(struct req *rq);
int lib_op_zombie_zeroed(struct req *rq);
int lib_op_free_scrub(struct req *rq);
int lib_op_free_forget(struct req *rq);
int lib_op_free_unknown(struct req *rq);
int lib_op_free_checked(struct req *rq);
int lib_op_free_zeroed(struct req *rq);
int lib_op_book_bad(struct req *rq);
int lib_op_book_bad_list(struct req *rq);
int lib_op_book_clear(struct req *rq);

#endif
