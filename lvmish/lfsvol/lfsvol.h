/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lfsvol: the LFS volume manager and node agent.
 *
 * One file per subcommand group (shelf.c, activate.c, attr.c, fabric.c,
 * agent.c), like wireguard-tools' wg.c: main.c holds the command table and
 * the global options. Library-style helpers return a negative errno or an
 * LFSVOL_E* exit code and print nothing unless they say so; the commands
 * print one message with context.
 */
#ifndef LFSVOL_H
#define LFSVOL_H

#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes (documented in lfsvol(8)). */
enum lfsvol_exit {
	LFSVOL_OK = 0,
	LFSVOL_EFAIL = 1,	/* anything not listed below */
	LFSVOL_EUSAGE = 2,	/* bad option, SIZE, policy or name */
	LFSVOL_ECONFIG = 3,	/* lfs.conf unreadable or invalid */
	LFSVOL_ELIBRARIAN = 4,	/* librarian unreachable, timed out or refused */
	LFSVOL_EDRIVER = 5,	/* lfs.ko not loaded or the kernel refused */
	LFSVOL_ENOENT = 6,	/* no such shelf */
	LFSVOL_EREFUSED = 7,	/* guard: filesystem signature, mounted, busy */
	LFSVOL_EPERM = 8,	/* needs root (CAP_SYS_ADMIN) */
};

#define LFSVOL_DEFAULT_CONF "/etc/lfs/lfs.conf"
#define LFSVOL_MAX_FABRICS 256
#define LFSVOL_MAX_SHELF_CONF 1024
#define LFSVOL_MAX_IGS 256
#define LFSVOL_NAME_MAX 64

/* ---- size.c ---- */

/*
 * A parsed SIZE: either bytes (K/M/G/T suffixes, powers of 1024) or a
 * number of books ("8b"). sign is +1/-1 for "+SIZE"/"-SIZE" (only when
 * allow_sign), 0 otherwise.
 */
struct lfsvol_size {
	uint64_t value;
	bool books;
	int sign;
};

int lfsvol_parse_size(const char *s, bool allow_sign, struct lfsvol_size *out,
		      char *msg, size_t msglen);
/* Books needed for sz (rounded up); -ERANGE on overflow or > max books. */
int lfsvol_size_to_books(const struct lfsvol_size *sz, uint64_t book_size, uint64_t *books);
/* "64 MiB", "1.5 GiB": exact binary units when possible. */
const char *lfsvol_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* ---- policy.c ---- */
extern const char *const lfsvol_policies[];
/* Returns the canonical spelling, or NULL; *hint gets a close match if any. */
const char *lfsvol_policy_lookup(const char *name, const char **hint);
int lfsvol_parse_ig_list(const char *s, uint32_t *igs, int max, char *msg, size_t msglen);
bool lfsvol_valid_name(const char *name);

/* ---- config.c ---- */
enum lfsvol_selector {
	LFSVOL_SEL_PATH,	/* device = "/dev/pmem0" */
	LFSVOL_SEL_NUMA,	/* numa_node = 1: the pmem device on that node */
	LFSVOL_SEL_BY_PATH,	/* by_path = "..." under /dev/disk/by-path */
};

struct lfsvol_fabric_conf {
	uint32_t ig;
	enum lfsvol_selector sel;
	char *path;		/* LFSVOL_SEL_PATH / LFSVOL_SEL_BY_PATH */
	int numa_node;		/* LFSVOL_SEL_NUMA */
	uint64_t offset;
	bool force;		/* attach even over a foreign signature */
	int line;
};

struct lfsvol_shelf_conf {
	char *name;
	const char *policy;	/* canonical, or NULL */
	uint32_t igs[LFSVOL_MAX_IGS];
	int nigs;
	bool auto_activate;
	int line;
};

struct lfsvol_conf {
	char *path;
	char *librarian;	/* "HOST:PORT" or "unix:PATH" */
	char *node;
	char *key_file;
	int connect_timeout;	/* seconds */
	int reply_timeout;
	int process_priority;	/* nice value while the kernel builds or removes a shelf's disk */
	const char *default_policy;	/* NULL: the librarian's default */
	uint64_t book_size;	/* 0 = ask the librarian */
	char *state_dir;	/* agent progress file */
	int scrub_batch;	/* books per BOOK_ZERO request */
	bool check_free;	/* the agent reads never-used FREE books to learn which are zero */
	int check_interval;	/* seconds between two such sweeps */
	struct lfsvol_fabric_conf fabrics[LFSVOL_MAX_FABRICS];
	int nfabrics;
	struct lfsvol_shelf_conf shelves[LFSVOL_MAX_SHELF_CONF];
	int nshelves;
};

/*
 * Load path; missing_ok makes a missing file give the defaults. On error
 * returns -errno with "FILE:LINE: what is wrong" in msg.
 */
int lfsvol_conf_load(const char *path, bool missing_ok, struct lfsvol_conf **out,
		     char *msg, size_t msglen);
void lfsvol_conf_free(struct lfsvol_conf *c);
const struct lfsvol_shelf_conf *lfsvol_conf_shelf(const struct lfsvol_conf *c, const char *name);
/* Resolve a fabric entry to a device path now; -ENODEV if not present. */
int lfsvol_fabric_resolve(const struct lfsvol_fabric_conf *f, char *path, size_t len);

/* ---- main.c: global state and messages ---- */
struct lfsvol_ctx {
	const char *conf_path;
	const char *librarian;	/* --librarian overrides lfs.conf */
	struct lfsvol_conf *conf;
	bool json;
	bool no_agent;		/* the agent itself: never proxy through the agent */
	bool takeover;		/* activate --takeover: from holders whose lease expired */
};

extern const char *lfsvol_prog;
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
void lfsvol_err(const char *fmt, ...) __printf(1, 2);
void lfsvol_info(const char *fmt, ...) __printf(1, 2);
/* Load lfs.conf into ctx (once); returns an exit code. */
int lfsvol_need_conf(struct lfsvol_ctx *ctx);
bool lfsvol_want_help(int argc, char **argv);

/* Subcommands: argv[0] is the subcommand name. */
int cmd_create(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_remove(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_resize(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_rename(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_list(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_show(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_activate(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_deactivate(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_attr(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_fabric(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_scrub(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_status(int argc, char **argv, struct lfsvol_ctx *ctx);
int cmd_agent(int argc, char **argv, struct lfsvol_ctx *ctx);

#endif

/* ---- common.c: the librarian, the driver, devices ---- */
#include <jansson.h>

struct lv_lib;
struct lfs_client;
struct lfs_shelf_info;
struct lfs_book;

/* ---- proxy.c: the librarian directly, or through the running agent ---- */
struct lfs_lib_opts;
/* The running agent's session, if there is an agent (root only). */
int lv_open_agent(const char *state_dir, struct lv_lib **out);
int lv_open(const struct lfs_lib_opts *o, struct lv_lib **out, char **errmsg);
/* As lfs_lib_call(), but args is stolen (may be NULL). */
int lv_call(struct lv_lib *l, const char *op, json_t *args, json_t **result);
json_t *lv_info(struct lv_lib *l);
const char *lv_errmsg(const struct lv_lib *l);
void lv_close(struct lv_lib *l);
bool lv_via_agent(const struct lv_lib *l);
int lfsvol_msg_send(int fd, json_t *msg);
int lfsvol_msg_recv(int fd, json_t **msg, int ms);
int lfsvol_agent_listen(const char *state_dir);
int lfsvol_agent_accept(int lfd);
int lfsvol_agent_serve_one(int fd, struct lv_lib *lib);

/* Connect to the librarian; prints the error and returns an exit code. */
int lfsvol_lib_connect(struct lfsvol_ctx *ctx, struct lv_lib **out);
/*
 * One librarian call; on failure prints "what: librarian: message" plus a
 * hint and returns an exit code (LFSVOL_ENOENT for ENOENT, ...).
 */
int lfsvol_lib_call(struct lv_lib *lib, const char *what, const char *op, json_t *args,
		    json_t **result);
int lfsvol_lib_fail(struct lv_lib *lib, const char *what, int r);
/* Book size announced by the librarian at auth. */
uint64_t lfsvol_lib_book_size(struct lv_lib *lib);
/* Open the driver; prints the error and returns an exit code. */
int lfsvol_drv_open(struct lfs_client **out);
/*
 * Around the kernel's shelf create and remove: the config's
 * process_priority (like LVM's activation/process_priority), so that the
 * udev work those start does not preempt the rest of the request.
 * lfsvol_priority_raise() returns the previous nice value for _restore().
 */
int lfsvol_priority_raise(const struct lfsvol_ctx *ctx);
void lfsvol_priority_restore(int old);
/* Print "what: kernel reports: ..." for a driver error, return an exit code. */
int lfsvol_drv_fail(struct lfs_client *c, int err, const char *what);
int lfsvol_need_root(const char *what);
/* Kernel shelf by name (from a list); NULL if not active here. */
struct lfs_shelf_info *lfsvol_find_active(struct lfs_shelf_info *v, size_t n, const char *name);
/* The shelf's whole book map from the librarian (follows map_complete). */
int lfsvol_lib_shelf_map(struct lv_lib *lib, const char *name, json_t *first,
			 struct lfs_book **books, size_t *n);

/* Filesystem signature found by libblkid (empty strings if none). */
struct lfsvol_fsinfo {
	char type[32];
	char label[128];
	char uuid[64];
};

int lfsvol_probe_fs(const char *dev, uint64_t offset, uint64_t size, struct lfsvol_fsinfo *fs);
/* Is the block device mounted (listed in /proc/self/mountinfo by major:minor)? */
bool lfsvol_dev_mounted(uint32_t devt);
bool lfsvol_udev_running(void);
/*
 * Make /dev/lfs/NAME usable: with udevd running wait (bounded) for its
 * symlink, otherwise create it. Returns 0 or -ETIMEDOUT.
 */
#define LINK_DROP_TIMEOUT_MS 5000	/* udev removing /dev/lfs/NAME */
int lfsvol_dev_link_wait(const char *name, const char *disk, int timeout_ms);
void lfsvol_dev_link_drop(const char *name, const char *disk);
/* Attach configured fabric devices not attached yet; returns how many failed. */
int lfsvol_attach_fabrics(struct lfsvol_ctx *ctx, struct lfs_client *drv, uint64_t book_size,
			  bool quiet);
/*
 * Create the kernel shelf from the librarian's answer to shelf.activate or
 * shelf.create. raw_errors: return -ENODEV (a book's IG is not attached
 * here) and -EEXIST (the kernel has a shelf of that name) without a message.
 */
int lfsvol_kernel_activate(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			   json_t *shelf, char *disk, size_t disklen, bool raw_errors);
int64_t lfsvol_now_ms(void);
extern bool lfsvol_tracing;
void lfsvol_trace(const char *fmt, ...) __printf(1, 2);

/* activate.c: activate NAME here, librarian first (it arbitrates), then the kernel. */
int lfsvol_activate_one(struct lfsvol_ctx *ctx, struct lv_lib *lib, struct lfs_client *drv,
			const char *name, bool shared, bool quiet, json_t *given);
