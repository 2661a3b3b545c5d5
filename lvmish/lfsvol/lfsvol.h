/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lfsvol's commands: the table in main.c (wireguard-tools' wg.c style), one
 * file per command group, and the steps two commands share.
 *
 * Units, bottom up: msg (messages, exit codes, tracing), conf (lfs.conf),
 * session (the librarian), kernel and attach (lfs.ko), probe and devlink
 * (block devices), guard and activate (shared steps), and the commands.
 * A unit calls only the units below it. The node agent builds on these
 * units in its own room, lvmish/agent/; the commands see only its face,
 * lfsagent.h (`lfsvol agent', and scrub's zeroing without an agent).
 */
#ifndef LFSVOL_H
#define LFSVOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "conf.h"
#include "msg.h"

struct lfs_client;
struct lfs_shelf_info;
struct lfsvol_lib;

/* A command: argv[0] is its name; returns the exit status (lfsvol(8)). */
typedef int lfsvol_cmd_fn(int argc, char **argv, struct lfsvol_ctx *ctx);

lfsvol_cmd_fn cmd_create, cmd_remove, cmd_resize, cmd_rename, cmd_list, cmd_show;
lfsvol_cmd_fn cmd_activate, cmd_deactivate, cmd_attr, cmd_fabric, cmd_scrub, cmd_status;
/* status_prom.c: the object status --json prints, as Prometheus metrics on stdout */
void lfsvol_status_prometheus(json_t *st);
lfsvol_cmd_fn cmd_attach;
/* book.c: book clear IG:BOOK... (the admin returns cleared memory to service) */
lfsvol_cmd_fn cmd_book;
/* copy.c (the bytes: copy_data.c, copy.h) */
lfsvol_cmd_fn cmd_copy;

/*
 * activate.c: activate NAME here, librarian first (it arbitrates), then
 * the kernel and udev's name. given: the librarian's answer to a
 * shelf.create that activated it already (create -a), sent at given_sent
 * (CLOCK_BOOTTIME ns), or NULL to ask. quiet (the agent): no progress
 * lines, and no wait for udev's name.
 *
 * Every activation is leased (docs/FENCING.md): the kernel shelf is
 * covered by the node's lease, renewed first with the send time of the
 * librarian request that granted it (any request counts as heard). A node
 * whose lease has expired activates nothing until its agent renews.
 */
struct lfsvol_activation {
	bool shared; /* read-only on every node that has it */
	bool takeover; /* from holders whose lease expired */
	bool quiet;
	/*
	 * A book on an IG whose lfs.conf device is not present: LFSVOL_WAITING, an
	 * info line, the activation given back (a udev pass before the
	 * shelf's last device appeared; that device's pass activates it).
	 */
	bool wait_absent;
	json_t *given;
	uint64_t given_sent;
};
#define LFSVOL_WAITING 2 /* lfsvol_activate_one(): see wait_absent */
int lfsvol_activate_one(struct lfsvol_ctx *ctx, struct lfsvol_lib *lib, struct lfs_client *drv,
			const char *name, const struct lfsvol_activation *how);

/* describe.c: shelves as list and show describe them (kernel shelves here: kv). */
struct lfsvol_here {
	struct lfs_shelf_info *kv;
	size_t kn;
};
/* Every shelf, into out; one shelf with its allocation, attrs, owner and map. */
int lfsvol_list_shelves(struct lfsvol_lib *lib, struct lfsvol_here *h, json_t *out);
int lfsvol_show_shelf(struct lfsvol_lib *lib, struct lfsvol_here *h, const char *name, json_t *out);
/* show --json's object of shelf NAME (a new reference), or null if it cannot be read. */
json_t *lfsvol_shelf_describe(struct lfsvol_lib *lib, const char *name);

/*
 * badbooks.c: bad books as the librarian lists them (book.bad_list; shelf
 * NULL: the whole fabric): an array, or NULL if it does not tell.
 */
json_t *lfsvol_bad_books(struct lfsvol_lib *lib, const char *shelf);
/* Those on the IGs igs (an array of numbers): a new array, or null if bad is NULL. */
json_t *lfsvol_bad_of_igs(json_t *bad, json_t *igs);
void lfsvol_bad_print(json_t *bad);
/* show's "bad" (each range with its offset in the shelf) and its line. */
json_t *lfsvol_bad_of_shelf(struct lfsvol_lib *lib, const char *name);
void lfsvol_bad_show(json_t *bad);

/* guard.c: the checks before a shelf's books are given up (remove, shrink). */
/* Check a shelf name (shared rules); a usage error if it is not one. */
int lfsvol_check_name(const char *name);
/* Refuse if the active shelf's device is mounted or open; why ends the message. */
int lfsvol_check_unused(const struct lfs_shelf_info *act, const char *name, const char *why);
/*
 * Refuse if a filesystem signature is on the shelf, or if there is no way
 * to look (not active here and its first book's device not attached);
 * verb ("remove", "shrink") completes the message. shelf: shelf.get's reply.
 */
int lfsvol_fs_guard(struct lfs_client *drv, struct lfs_shelf_info *act, json_t *shelf,
		    const char *name, const char *verb);
/* "64M rounded up to 2 books of 64 MiB (128 MiB)", unless exact. */
void lfsvol_say_rounding(bool books, uint64_t bytes, const char *arg, uint64_t n,
			 uint64_t book_size);

#endif /* LFSVOL_H */
