/* SPDX-License-Identifier: MIT */
/*
 * upcalld, the test upcall server of the lfs filesystem (tests/namespace):
 * what its catalogue (catalog.c) and its netlink side (upcalld.c) share.
 */
#ifndef UPCALLD_H
#define UPCALLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/lfs.h"

struct xattr {
	char name[256];
	char *value;
	size_t len;
};

/* A shelf of the catalogue. */
struct shelf {
	char name[LFS_NAME_MAX + 1];
	uint8_t uuid[LFS_UUID_LEN];
	uint64_t ino;
	uint64_t size; /* lfs.size */
	uint64_t mtime, ctime; /* ns since the epoch */
	uint32_t nr_books;
	struct lfs_book *books;
	char policy[LFS_POLICY_NAME_MAX + 1]; /* "": the default */
	char igs[256]; /* user.LFS.InterleaveRequest */
	int writable;
	int active; /* 0, or the node's activation: 1 read-only, 2 read-write */
	struct xattr *x;
	size_t nx;
};

/* An attached fabric device: the state of each of its books. */
enum { BOOK_FREE, BOOK_USED, BOOK_DIRTY };

struct fabric {
	uint32_t ig;
	uint32_t nr_books;
	uint64_t book_size;
	uint8_t *state;
};

/* Zero books no shelf holds; zeroed[i] says which were. 0 or -errno. */
typedef int (*zero_fn)(const struct lfs_book *books, size_t n, bool *zeroed);

struct catalog {
	struct shelf **v;
	size_t n;
	struct fabric *f;
	size_t nf;
	uint32_t local_ig;
	char policy_default[LFS_POLICY_NAME_MAX + 1];
	const char *path; /* state file, or NULL */
	zero_fn zero;
};

uint64_t now_ns(void);
struct shelf *cat_find(struct catalog *c, const char *name);
struct shelf *cat_find_uuid(struct catalog *c, const uint8_t *uuid);
int cat_create(struct catalog *c, const char *name, const char *policy, struct shelf **out);
int cat_destroy(struct catalog *c, struct shelf *s);
int cat_rename(struct catalog *c, struct shelf *s, const char *to, bool noreplace);
int cat_resize(struct catalog *c, struct shelf *s, uint64_t size);
uint64_t cat_book_size(struct catalog *c);
void cat_space(struct catalog *c, uint64_t *total, uint64_t *free);
int cat_save(struct catalog *c);
int cat_load(struct catalog *c);

/* Extended attributes: 0 or -errno; get returns a malloc'ed value. */
int cat_getxattr(struct catalog *c, struct shelf *s, const char *name, char **val, size_t *len);
int cat_setxattr(struct catalog *c, struct shelf *s, const char *name, const char *val,
		 size_t len, uint32_t flags);
int cat_removexattr(struct catalog *c, struct shelf *s, const char *name);
int cat_listxattr(struct catalog *c, struct shelf *s, char **names, size_t *len);

#endif
