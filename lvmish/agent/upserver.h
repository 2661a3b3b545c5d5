/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent as the upcall server of the lfs filesystem
 * (docs/NAMESPACE.md, driver/uapi/lfs_fs.h): what its files share.
 * upcall.c owns the registered generic netlink socket, a receiver thread
 * and a pool of workers, each with its own librarian session; upanswer.c
 * builds the replies; upops.c maps the operations to the librarian,
 * upxattr.c the extended attributes; upactive.c remembers the files this
 * node has open, for the renewal thread's fencing.
 */
#ifndef LFSVOL_UPSERVER_H
#define LFSVOL_UPSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "conf.h"
#include "liblfsnl.h"

struct nl_msg;

/* Workers, each with a librarian session: one slow call does not hold the others. */
#define LFSVOL_UP_WORKERS 4
/* A shelf name the librarian may still hold from before the name rule (PROTOCOL.md). */
#define LFSVOL_UP_NAME_MAX 128
/* book-map entries asked of the librarian per request */
#define UP_MAP_PAGE 65536
/* Internal: undo an OPEN whose reply the kernel refused. */
#define LFSVOL_UP_UNDO_OPEN 0x10000

/* One request, copied out of its message. */
struct up_req {
	uint32_t id, op, flags;
	char *name, *new_name, *policy, *xname;
	uint8_t uuid[LFS_UUID_LEN];
	bool has_uuid, has_size;
	uint64_t size;
	char *xvalue;
	size_t xlen;
};

struct up_server;

/* A worker: its own librarian session. */
struct up_worker {
	struct up_server *srv;
	const struct lfsvol_conf *conf;
	struct lfs_lib *lib; /* NULL until connected, or after a drop */
	struct lfs_client *drv; /* the driver's netlink, kept: NULL until needed */
	int64_t used_ms; /* lfsvol_now_ms() of the session's last answer */
	uint64_t book_size;
	char node[LFSVOL_UP_NAME_MAX + 1];
	char what[LFSVOL_UP_NAME_MAX + 64]; /* "OPEN db": for the log */
	bool watch; /* the OPEN being answered made a new activation: undo it if refused */
};

/* A shelf as the kernel sees a file. */
struct up_shelf {
	char name[LFSVOL_UP_NAME_MAX + 1];
	uint8_t uuid[LFS_UUID_LEN];
	uint64_t ino, size, book_size, mtime, ctime;
	uint32_t nr_books;
	bool writable;
	struct lfs_book *books; /* with a map: nr_books */
};

/*
 * A worker's handling of one request: answered (by the handler, errors too)
 * when it returns. The threads below know nothing of the librarian: the
 * agent passes up_dispatch (upops.c).
 */
typedef int (*up_handler_fn)(struct up_worker *w, const struct up_req *r);

/* upcall.c: start the receiver and the workers (daemon only); stop them. */
int lfsvol_upcall_start(const struct lfsvol_conf *conf, up_handler_fn handle,
			struct up_server **out);
void lfsvol_upcall_stop(struct up_server *srv);

/* upcall.c: send one reply message (serialised); its sequence number in *seq. */
int up_send(struct up_server *srv, struct nl_msg *msg, uint32_t *seq);
int up_family(struct up_server *srv);
/* upcall.c: an OPEN's reply was sent as seq: undo it if the kernel refuses it. */
void up_watch_open(struct up_server *srv, uint32_t seq, const char *name, const uint8_t *uuid);

/* upanswer.c: the replies; 0 or -errno (sending failed). */
int up_answer_errno(struct up_worker *w, uint32_t id, int err);
int up_answer_attrs(struct up_worker *w, const struct up_req *r, const struct up_shelf *s,
		    bool leased);
int up_answer_map(struct up_worker *w, const struct up_req *r, const struct up_shelf *s,
		  bool leased);
int up_answer_list(struct up_worker *w, uint32_t id, json_t *entries);
int up_answer_blob(struct up_worker *w, uint32_t id, int type, const char *p, size_t len);
int up_answer_statfs(struct up_worker *w, uint32_t id, uint64_t total, uint64_t free,
		     uint64_t files);

/* upsession.c: the worker's librarian session; -errno */
int up_call(struct up_worker *w, const char *op, json_t *args, json_t **res);
int up_find(struct up_worker *w, const struct up_req *r, bool map, json_t **res);
/* upshelf.c: a librarian reply as the kernel's attributes and map */
uint64_t up_uuid_ino(const uint8_t *u);
int up_shelf_from(struct up_worker *w, json_t *j, bool map, struct up_shelf *s);
void up_shelf_free(struct up_shelf *s);
/* upname.c: the name of a file open here, which `lfsvol rename` may change */
int up_name_of(struct up_worker *w, const struct up_req *r, char *name, size_t len);
int up_call_same(struct up_worker *w, const char *op, json_t *args, const uint8_t *uuid,
		 json_t **res);
bool up_renamed(struct up_worker *w, const struct up_req *r, int ret, char *name, size_t len);
/*
 * upops.c: the librarian's side of a request, answered: 0, or the negative
 * errno it was answered with (as every up_* function: negative errno).
 */
int up_dispatch(struct up_worker *w, const struct up_req *r);
/* upopen.c: OPEN, CREATE_OPEN, and the undoing of a refused answer */
int up_do_open(struct up_worker *w, const struct up_req *r);
int up_do_create_open(struct up_worker *w, const struct up_req *r);
int up_undo_open(struct up_worker *w, const struct up_req *r);
/* upxattr.c */
int up_xattr(struct up_worker *w, const struct up_req *r);

/*
 * upactive.c: the files open here through the filesystem (OPEN answered,
 * CLOSE not yet), with when their activation was granted (CLOCK_BOOTTIME).
 */
void lfsvol_upactive_add(const char *name, const uint8_t *uuid, uint64_t granted, bool write);
/* Forget it; was it there (and open for writing)? */
bool lfsvol_upactive_remove(const uint8_t *uuid, bool *write);
bool lfsvol_upactive_name(const uint8_t *uuid, char *name, size_t len);
void lfsvol_upactive_rename(const uint8_t *uuid, const char *to);
/*
 * The renewal thread: fence (LFS_CMD_SHELF_FENCE, by UUID: the kernel may
 * know the file by another name) every open file granted before sent that
 * activations (the heartbeat's reply) does not list; every one if
 * activations is NULL. Calls fence(name, uuid) for each.
 */
void lfsvol_upactive_fence(json_t *activations, uint64_t sent,
			   void (*fence)(const char *name, const uint8_t *uuid, void *arg),
			   void *arg);

#endif /* LFSVOL_UPSERVER_H */
