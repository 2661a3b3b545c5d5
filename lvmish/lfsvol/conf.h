/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lfs.conf (libconfig, lfs.conf(5)), and the global options that select it.
 * Names, policies, sizes and IG numbers follow the shared rules
 * (common/lfs_rules.h).
 */
#ifndef LFSVOL_CONF_H
#define LFSVOL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LFSVOL_DEFAULT_CONF "/etc/lfs/lfs.conf"
#define LFSVOL_MAX_FABRICS 256
#define LFSVOL_MAX_SHELF_CONF 1024
#define LFSVOL_MAX_IGS 256

enum lfsvol_selector {
	LFSVOL_SEL_PATH, /* device = "/dev/pmem0" */
	LFSVOL_SEL_NUMA, /* numa_node = 1: the pmem device on that node */
	LFSVOL_SEL_BY_PATH, /* by_path = "..." under /dev/disk/by-path */
};

struct lfsvol_fabric_conf {
	uint32_t ig;
	enum lfsvol_selector sel;
	char *path; /* LFSVOL_SEL_PATH / LFSVOL_SEL_BY_PATH */
	int numa_node; /* LFSVOL_SEL_NUMA */
	uint64_t offset;
	bool force; /* attach even over a foreign signature */
	int line;
};

struct lfsvol_shelf_conf {
	char *name;
	const char *policy; /* the exact spelling (lfs_policy_name()), or NULL */
	uint32_t igs[LFSVOL_MAX_IGS];
	int nigs;
	bool auto_activate;
	int line;
};

struct lfsvol_conf {
	char *path;
	char *librarian; /* "HOST:PORT" or "unix:PATH", or a list of them: "A,B" */
	char *node;
	char *key_file;
	int connect_timeout; /* seconds */
	int reply_timeout;
	int process_priority; /* nice value while the kernel builds or removes a shelf's disk */
	int fence_action; /* enum lfs_fence_action: what a fence does to an open shelf */
	const char *default_policy; /* NULL: the librarian's default */
	uint64_t book_size; /* 0 = ask the librarian */
	char *state_dir; /* agent progress file, lock and session socket */
	int scrub_batch; /* books per BOOK_ZERO request */
	bool check_free; /* the agent reads never-used FREE books to learn which are zero */
	int check_interval; /* seconds between two such sweeps */
	struct lfsvol_fabric_conf fabrics[LFSVOL_MAX_FABRICS];
	int nfabrics;
	struct lfsvol_shelf_conf shelves[LFSVOL_MAX_SHELF_CONF];
	int nshelves;
};

/*
 * Load path; missing_ok makes a missing file give the defaults. On error
 * returns -errno with "FILE:LINE: what is wrong" in msg.
 */
int lfsvol_conf_load(const char *path, bool missing_ok, struct lfsvol_conf **out, char *msg,
		     size_t msglen);
void lfsvol_conf_free(struct lfsvol_conf *c);
/* A librarian address list checked and joined "A,B" into *out; -EINVAL with msg naming it. */
int lfsvol_librarian_list(const char *list, char **out, char *msg, size_t len);
const struct lfsvol_shelf_conf *lfsvol_conf_shelf(const struct lfsvol_conf *c, const char *name);
/*
 * Resolve a fabric entry to a device path now: -ENODEV if not present;
 * -ENOTUNIQ if numa_node matches several pmem devices (path lists them).
 */
int lfsvol_fabric_resolve(const struct lfsvol_fabric_conf *f, char *path, size_t len);
extern const char *lfsvol_sysfs;

/* What the global options select, and the configuration once loaded. */
struct lfsvol_ctx {
	const char *conf_path; /* -c FILE */
	const char *librarian; /* --librarian overrides lfs.conf */
	struct lfsvol_conf *conf;
	bool no_agent; /* never borrow the agent's session (the agent, scrub) */
};

/*
 * Load lfs.conf into ctx once: -c, else $LFS_CONF, else the default file
 * (which may be missing). Reports a failure (exit code 3).
 */
int lfsvol_need_conf(struct lfsvol_ctx *ctx);

#endif /* LFSVOL_CONF_H */
