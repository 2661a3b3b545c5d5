/* SPDX-License-Identifier: MIT */
/*
 * liblfsnl: client of the lfs kernel module's generic netlink family (the
 * protocol is specified in driver/uapi/lfs.h) and the parsers of its book
 * lists and UUIDs.
 *
 * Functions return 0 or a negative errno and never print. After a failure,
 * lfs_client_error() gives the reason: the kernel's extended ack message when
 * there is one, else a description of the local failure.
 */
#ifndef LIBLFS_H
#define LIBLFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uapi/lfs.h>

struct lfs_client;

struct lfs_fabric_info {
	uint32_t ig;
	char path[LFS_PATH_MAX];
	uint32_t devt; /* new_encode_dev(): major() and minor() decode it */
	uint64_t book_size;
	uint64_t offset;
	uint64_t dev_size;
	uint32_t nr_books;
	uint32_t books_used;
	int dax;
	int numa_node;
	bool devdax; /* a device-DAX character device (LFS_A_DEVDAX) */
	bool volatile_mem; /* not known persistent (LFS_A_VOLATILE): no MAP_SYNC */
	bool labelled; /* the device carries a label (LFS_A_FABRIC_UUID) */
	uint8_t fabric_uuid[LFS_UUID_LEN]; /* the label's fabric, if labelled */
	uint32_t nr_bad; /* bad ranges (LFS_A_BAD), docs/CXL.md "Poison" */
	struct lfs_bad_range bad[LFS_BAD_MAX];
};

struct lfs_shelf_info {
	char name[LFS_NAME_MAX + 1];
	uint8_t uuid[LFS_UUID_LEN];
	uint32_t id;
	char disk[32];
	uint32_t devt;
	uint64_t book_size;
	uint32_t nr_books;
	int dax;
	uint32_t open;
	int zeroed; /* known to read as zeroes (LFS_A_ZEROED) */
	uint32_t state; /* enum lfs_shelf_state: LFS_SHELF_ACTIVE or LFS_SHELF_FENCED */
	bool leased; /* covered by the node's lease (LFS_A_LEASED) */
	uint64_t created; /* CLOCK_BOOTTIME ns when the block device appeared */
	struct lfs_book *books; /* nr_books entries, shelf order */
};

/* The node's lease (LFS_CMD_LEASE_GET). */
struct lfs_lease_info {
	uint32_t lease_ms; /* 0: not enforced (no renewal yet, or given up) */
	int64_t left_ms; /* until the deadline; negative once it passed */
	uint32_t fence_action; /* enum lfs_fence_action */
	uint32_t nr_fenced; /* shelves fenced now */
	/* Fence latency of the lease's lapses (0 and zeroes: none measured). */
	uint32_t fence_count;
	uint64_t fence_last_ns, fence_max_ns; /* deadline to every object refusing */
	uint64_t fence_done_last_ns, fence_done_max_ns; /* deadline to the fence's end */
	uint32_t fence_hist[LFS_FENCE_HIST_BUCKETS]; /* within 1, 2, 4 .. 64 ms, later */
};

/* Flags of lfsnl_shelf_create_flags(). */
#define LFS_CREATE_ZEROED 1U /* every book reads as zeroes: udev need not probe */
#define LFS_CREATE_LEASED 2U /* an activation the librarian granted: covered by the lease */

/*
 * Connect and resolve the family; -ENOENT if the module is not loaded,
 * -EPROTONOSUPPORT if its family is not LFS_GENL_VERSION, and then
 * lfs_client_open_error() names both versions.
 */
int lfs_client_open(struct lfs_client **out);
/* Why this thread's last lfs_client_open() failed ("" if it did not). */
const char *lfs_client_open_error(void);

struct nl_sock;
/*
 * The generic netlink family name on sk: its id, or -ENOENT (none) or
 * -EPROTONOSUPPORT (the kernel's family is not version want); msg says
 * which, naming both versions.
 */
int lfs_genl_family(struct nl_sock *sk, const char *name, uint32_t want, char *msg, size_t len);
void lfs_client_close(struct lfs_client *c);
const char *lfs_client_error(const struct lfs_client *c);

int lfsnl_attach(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
		 uint64_t offset);
/*
 * The same, and the device must carry a label of this fabric (fabric_uuid
 * not NULL): EMEDIUMTYPE with the kernel's message naming both otherwise.
 */
int lfsnl_attach_labelled(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
			  uint64_t offset, const uint8_t *fabric_uuid);
/* Write a device's label (LFS_CMD_FABRIC_LABEL); EEXIST if it has one. */
int lfsnl_fabric_label(struct lfs_client *c, const char *path, uint32_t ig, uint64_t book_size,
		       uint64_t offset, const uint8_t *fabric_uuid);
int lfsnl_detach(struct lfs_client *c, const char *path);
int lfsnl_fabric_list(struct lfs_client *c, struct lfs_fabric_info **out, size_t *n);

/*
 * Book lists longer than LFS_BOOKS_PER_ATTR go in several messages. zeroed:
 * the caller knows every book reads as zeroes (the librarian had them
 * scrubbed), so udev need not probe the new device.
 */
int lfsnl_shelf_create(struct lfs_client *c, const char *name, const uint8_t *uuid, bool zeroed,
		       const struct lfs_book *books, size_t n, struct lfs_shelf_info *out);
/* The same with LFS_CREATE_* flags: a leased shelf fails with ENOLCK without a lease. */
int lfsnl_shelf_create_flags(struct lfs_client *c, const char *name, const uint8_t *uuid,
			     unsigned int flags, const struct lfs_book *books, size_t n,
			     struct lfs_shelf_info *out);
int lfsnl_shelf_extend(struct lfs_client *c, const char *name, const struct lfs_book *books,
		       size_t n);
int lfsnl_shelf_shrink(struct lfs_client *c, const char *name, uint32_t nr_books);
int lfsnl_shelf_remove(struct lfs_client *c, const char *name);
/* Move book @index of shelf @name to book @to, the shelf active (BOOK_MOVE). */
int lfsnl_book_move(struct lfs_client *c, const char *name, uint32_t index,
		    const struct lfs_book *to);
/* All shelves, or only @name (then -ENOENT if it does not exist). */
int lfsnl_shelf_list(struct lfs_client *c, const char *name, struct lfs_shelf_info **out,
		     size_t *n);
void lfsnl_shelf_list_free(struct lfs_shelf_info *shelves, size_t n);
/*
 * Zero books no shelf holds, one at a time in the kernel; zeroed[i] tells
 * whether book i was (a book a shelf holds is skipped, not an error).
 */
int lfsnl_books_zero(struct lfs_client *c, const struct lfs_book *books, size_t n, bool *zeroed);
/*
 * Read-only: zero[i] = book i reads as zeroes (LFS_CMD_BOOK_CHECK). A book a
 * shelf holds, or on a device without DAX, does not.
 */
int lfsnl_books_check_zero(struct lfs_client *c, const struct lfs_book *books, size_t n,
			   bool *zero);

/*
 * The lease: renewed with the CLOCK_BOOTTIME time (ns) a request the
 * librarian received was sent, the lease length (0 gives it up) and the
 * fence action (negative: unchanged); lfsnl_lease_renew_watch() also the
 * fence watchdog's bound in ms (0: none; negative: unchanged).
 */
int lfsnl_lease_renew(struct lfs_client *c, uint64_t start_ns, uint32_t lease_ms, int action);
int lfsnl_lease_renew_watch(struct lfs_client *c, uint64_t start_ns, uint32_t lease_ms, int action,
			    int64_t watch_ms);
int lfsnl_lease_get(struct lfs_client *c, struct lfs_lease_info *out);
/* A fence action's name ("reset", "eio"; "?" for a value this liblfsnl does not know). */
const char *lfs_fence_action_name(uint32_t action);
/* Fence a shelf now, as the lease's expiry does (LFS_CMD_SHELF_FENCE). */
int lfsnl_shelf_fence(struct lfs_client *c, const char *name);
/* Fence the file of @uuid open through the lfs filesystem, whatever its name here. */
int lfsnl_file_fence(struct lfs_client *c, const uint8_t *uuid);
/* clock_gettime(CLOCK_BOOTTIME) in ns: the clock of the lease. */
uint64_t lfs_boottime_ns(void);

/*
 * BOOKS: a comma list of IG:BOOK or IG:FIRST-LAST. On error, err receives a
 * message quoting the bad token. Names and SIZE: common/lfs_rules.h.
 */
int lfs_parse_u32(const char *s, uint32_t max, uint32_t *out);
int lfs_parse_books(const char *s, struct lfs_book **out, size_t *n, char *err, size_t errlen);
/* The inverse: IG:FIRST-LAST ranges where books run consecutively. */
char *lfs_format_books(const struct lfs_book *books, size_t n);
int lfs_parse_uuid(const char *s, uint8_t uuid[LFS_UUID_LEN]);
void lfs_format_uuid(const uint8_t uuid[LFS_UUID_LEN], char buf[37]);

#endif /* LIBLFS_H */
