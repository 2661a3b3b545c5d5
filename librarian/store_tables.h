/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalogue's tables as the librarian's operations use them: shelves,
 * access, attributes, activations, books, nodes (store_shelf.c,
 * store_access.c, store_attr.c, store_activation.c, store_books.c,
 * store_zero.c, store_bad.c, store_node.c). Included by store.h, which has the store
 * itself: its connection, statements and transactions, and the rules of
 * every function here (return values, errors, book ids and states).
 */
#ifndef LIB_STORE_TABLES_H
#define LIB_STORE_TABLES_H

/* The attribute holding a shelf's size in bytes (shelf_size.c); shelf rows carry it. */
#define LIB_ATTR_SIZE "lfs.size"

/* store_shelf.c: the shelves table. */
struct lib_shelf {
	int64_t id;
	char name[LIB_OLD_NAME_MAX + 1];
	char owner[LFS_PSK_IDENTITY_MAX + 1]; /* the node (or admin) that created it */
	char tenant[LFS_NODE_NAME_MAX + 1]; /* its owner's, "" for the default tenant */
	int64_t books;
	int64_t gen;
	int64_t active; /* its activations (any node, any mode) */
};

/*
 * A shelf with all a resize needs in one read (lib_store_shelf_find_full):
 * its summary and its placement attributes. Strings malloc'd, NULL for
 * none; lib_shelf_full_free() frees them.
 */
struct lib_shelf_full {
	struct lib_shelf sh;
	char uuid[40];
	int64_t ctime, mtime;
	char *policy, *access, *size, *igs, *partners;
};
int lib_store_shelf_find_full(struct lib_store *s, const char *name, struct lib_shelf_full *f,
			      struct lib_err *e);
void lib_shelf_full_free(struct lib_shelf_full *f);

/* A shelf as replies show it; the strings live until the callback returns. */
struct lib_shelf_row {
	const char *name, *uuid, *owner, *tenant;
	const char *policy; /* NULL: the configured default */
	const char *access; /* "who:level,..." (levels as numbers) or NULL */
	const char *size; /* lfs.size or NULL */
	const char *activations; /* shelf.list only: "node:mode,..." or NULL */
	int64_t ctime, mtime, books, gen;
};
typedef int lib_shelf_fn(void *arg, const struct lib_shelf_row *row);

/*
 * Whose shelves a listing shows: all (NULL), or those of a tenant ("" for
 * the default tenant) and those granted to a node or to the tenant ("@t").
 */
struct lib_shelf_filter {
	const char *tenant, *node, *tag;
};

int lib_store_shelf_find(struct lib_store *s, const char *name, struct lib_shelf *sh,
			 struct lib_err *e);
int lib_store_shelf_find_uuid(struct lib_store *s, const char *uuid, struct lib_shelf *sh,
			      struct lib_err *e);
/* Shelves whose name starts with prefix (NULL: all) that f shows (NULL: all). */
int lib_store_shelf_count(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			  int64_t *n, struct lib_err *e);
/*
 * The row of sh (id, name, owner, tenant) if the name is free and the
 * catalogue holds fewer than max shelves; if not, the request fails (at
 * once on SQLite, with the next round trip on PostgreSQL) and
 * lib_store_mismatch() says so.
 */
int lib_store_shelf_insert(struct lib_store *s, const struct lib_shelf *sh, const char *uuid,
			   int64_t now, int64_t max, struct lib_err *e);
/* Shelves and books owned by a node (tenant false) or held by a tenant's shelves. */
int lib_store_usage(struct lib_store *s, bool tenant, const char *key, int64_t *shelves,
		    int64_t *books, struct lib_err *e);
int lib_store_shelf_set_books(struct lib_store *s, int64_t id, int64_t books, int64_t now,
			      struct lib_err *e);
int lib_store_shelf_rename(struct lib_store *s, int64_t id, const char *name, int64_t now,
			   struct lib_err *e);
/* The shelf, its attributes and activations (its books are released first). */
int lib_store_shelf_delete(struct lib_store *s, int64_t id, struct lib_err *e);
int lib_store_shelf_show(struct lib_store *s, int64_t id, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e);
int lib_store_shelf_list(struct lib_store *s, const char *prefix, const struct lib_shelf_filter *f,
			 int64_t offset, int64_t limit, lib_shelf_fn *fn, void *arg,
			 struct lib_err *e);

/* store_access.c: the access table (lfs.access): grants of a shelf to nodes and tenants. */
typedef int lib_grant_fn(void *arg, const char *who, int level);

/* The highest level granted to who1 or who2 (either may be NULL), ACC_NONE if none. */
int lib_store_access_level(struct lib_store *s, int64_t shelf, const char *who1, const char *who2,
			   int *level, struct lib_err *e);
int lib_store_access_put(struct lib_store *s, int64_t shelf, const char *who, int level,
			 struct lib_err *e);
/* Every grant of the shelf removed: how many there were. */
int lib_store_access_clear(struct lib_store *s, int64_t shelf, struct lib_err *e);
int lib_store_access_each(struct lib_store *s, int64_t shelf, lib_grant_fn *fn, void *arg,
			  struct lib_err *e);

/* store_attr.c: the attrs table. */
typedef int lib_attr_fn(void *arg, const char *key, const char *value);

int lib_store_attr_get(struct lib_store *s, int64_t shelf, const char *key, char *buf, size_t len,
		       struct lib_err *e);
/* Three attributes in one statement: bit k of the result set if key[k] is there (val[k]). */
int lib_store_attr_get3(struct lib_store *s, int64_t shelf, const char *const key[3], char *val[3],
			size_t len, struct lib_err *e);
int lib_store_attr_put(struct lib_store *s, int64_t shelf, const char *key, const char *value,
		       struct lib_err *e);
int lib_store_attr_delete(struct lib_store *s, int64_t shelf, const char *key, struct lib_err *e);
/* User attributes (not lfs.*) of the shelf, and whether key is one of them. */
int lib_store_attr_user_count(struct lib_store *s, int64_t shelf, const char *key, int *n,
			      bool *has, struct lib_err *e);
int lib_store_attr_each(struct lib_store *s, int64_t shelf, lib_attr_fn *fn, void *arg,
			struct lib_err *e);

/* store_activation.c: the activations table. */
struct lib_activation {
	const char *shelf, *uuid; /* activations_of_node only */
	const char *node, *mode;
	int64_t since;
};
typedef int lib_activation_fn(void *arg, const struct lib_activation *a);

int lib_store_activations_of_shelf(struct lib_store *s, int64_t shelf, lib_activation_fn *fn,
				   void *arg, struct lib_err *e);
int lib_store_activations_of_node(struct lib_store *s, const char *node, lib_activation_fn *fn,
				  void *arg, struct lib_err *e);
/*
 * Activations of the shelf by nodes other than node (NULL: all): their
 * count, the first one's holder and mode.
 */
int lib_store_activation_others(struct lib_store *s, int64_t shelf, const char *node, char *holder,
				size_t hlen, char *mode, size_t mlen, struct lib_err *e);
int lib_store_activation_put(struct lib_store *s, int64_t shelf, const char *node, const char *mode,
			     int64_t since, struct lib_err *e);
/* Returns 1 if there was one, 0 if not. */
int lib_store_activation_delete(struct lib_store *s, int64_t shelf, const char *node,
				struct lib_err *e);
int lib_store_activations_end_node(struct lib_store *s, const char *node, struct lib_err *e);

/* store_books.c: the books of shelves, allocation picks, per-IG counts. */
struct lib_counts {
	int64_t free, zero, zombie, inuse, shelves, activations;
	int64_t bad; /* BAD books (on no shelf) */
};

int lib_store_counts(struct lib_store *s, struct lib_counts *out, struct lib_err *e);
/* The shelf's books in order, from position offset. */
int lib_store_shelf_books(struct lib_store *s, int64_t shelf, int64_t offset, int64_t limit,
			  lib_id_fn *fn, void *arg, struct lib_err *e);
/* Books of the shelf per IG (key: IG number). */
int lib_store_shelf_igs(struct lib_store *s, int64_t shelf, lib_count_fn *fn, void *arg,
			struct lib_err *e);
/* The shelf's books at position keep and beyond become ZOMBIE (a write nobody reads). */
int lib_store_shelf_release(struct lib_store *s, int64_t shelf, int64_t keep, struct lib_err *e);
/*
 * A book a grow takes: the FREE known-zero book nearest to lo1 of [lo1, hi1]
 * (to hi1 if desc), else of [lo2, hi2] (the IG wrapped around), onto the
 * shelf at seq; its id left in id.
 */
struct lib_take {
	int64_t lo1, hi1, lo2, hi2, seq, id;
	bool got;
};
/*
 * Each q[i] picked and taken by one statement, in order, all in one round
 * trip (PostgreSQL, per PG_PIPE_CHUNK): EIO unless every one found its book
 * (the counts it was planned from were wrong: nothing is allocated).
 */
int lib_store_books_take(struct lib_store *s, struct lib_take *q, int64_t n, int64_t shelf,
			 bool desc, struct lib_err *e);
/* Each IG's number, FREE books and FREE books known zero. */
typedef int lib_ig_fn(void *arg, int64_t ig, int64_t free, int64_t zero);
int lib_store_igs_each(struct lib_store *s, lib_ig_fn *fn, void *arg, struct lib_err *e);
/* The same counts as the writer knows them (store_known.c): read once, then kept. */
int lib_store_igs_known(struct lib_store *s, lib_ig_fn *fn, void *arg, struct lib_err *e);
int lib_store_ig_free_add(struct lib_store *s, uint32_t ig, int64_t dfree, int64_t dzero,
			  struct lib_err *e);
int lib_store_ig_recount(struct lib_store *s, uint32_t ig, struct lib_err *e);
/* Books of the IG in state st (BOOK_FREE or BOOK_ZOMBIE). */
int64_t lib_store_ig_count(struct lib_store *s, uint32_t ig, enum lib_book_state st,
			   struct lib_err *e);

/* store_zero.c: zombies and known-zero books (books.zeroed). */
int lib_store_zombies(struct lib_store *s, uint32_t ig, int64_t limit, lib_id_fn *fn, void *arg,
		      struct lib_err *e);
/* A ZOMBIE book its node zeroed: FREE and known zero, or OFFLINE. 1 if it was ZOMBIE. */
int lib_store_book_zeroed(struct lib_store *s, int64_t id, bool offline, struct lib_err *e);
/* The same for ids[0..n) in one round trip: changed[i] 1 if book i was ZOMBIE, else 0. */
int lib_store_books_zeroed(struct lib_store *s, const int64_t *ids, const bool *offline, int n,
			   int *changed, struct lib_err *e);
/* FREE books not known zero of the IG with ids from 'from', lowest first. */
int lib_store_unknown(struct lib_store *s, uint32_t ig, int64_t from, int64_t limit, lib_id_fn *fn,
		      void *arg, struct lib_err *e);
/* A FREE book not known zero that read as zeroes: 1 if it was marked. */
int lib_store_book_checked(struct lib_store *s, int64_t id, struct lib_err *e);
/* Up to limit FREE books not known zero of the IG become ZOMBIE: how many did. */
int64_t lib_store_scrub(struct lib_store *s, uint32_t ig, int64_t limit, struct lib_err *e);
/* Whether the IG has FREE books not known zero: 1, 0 or -errno. */
int lib_store_has_unknown(struct lib_store *s, uint32_t ig, struct lib_err *e);
/* The IG's FREE books no longer known zero (free.forget): how many; *inuse, its INUSE books. */
int64_t lib_store_ig_forget_zero(struct lib_store *s, uint32_t ig, bool forget, int64_t *inuse,
				 struct lib_err *e);

/* store_bad.c: bad ranges of books (poisoned memory) and the BOOK_BAD state. */
struct lib_bad {
	int64_t book, off, len, since; /* off, len: bytes inside the book */
	const char *node; /* who reported it */
	int state; /* lib_bad_each: the book's state, its shelf and place (-1: none) */
	int64_t shelf, seq;
	const char *shelf_name;
};
typedef int lib_bad_fn(void *arg, const struct lib_bad *b);

/* The range recorded: 1 if new, 0 if it was known already. */
int lib_store_bad_add(struct lib_store *s, const struct lib_bad *b, struct lib_err *e);
/* The book's state and zeroed flag, or -ENOENT. */
int lib_store_book_state(struct lib_store *s, int64_t id, int *state, int *zeroed,
			 struct lib_err *e);
/* A FREE, ZOMBIE or OFFLINE book becomes BAD: 1 if it did (the caller fixes igs.free). */
int lib_store_book_set_bad(struct lib_store *s, int64_t id, struct lib_err *e);
/* The book's ranges forgotten; a BAD book becomes ZOMBIE (1 if it did), to be zeroed. */
int lib_store_bad_clear(struct lib_store *s, int64_t id, struct lib_err *e);
/* Ranges of books with ids in [lo, hi], of the shelf (-1: any), in book order; fn NULL: their count. */
int lib_store_bad_each(struct lib_store *s, int64_t lo, int64_t hi, int64_t shelf, int64_t limit,
		       lib_bad_fn *fn, void *arg, struct lib_err *e);

/* store_node.c: node states and what they do to the books. */
/* The IG's FREE books become OFFLINE (or back), no longer known zero; igs.free follows. */
int lib_store_ig_set_offline(struct lib_store *s, uint32_t ig, bool offline, struct lib_err *e);
int lib_store_node_put_state(struct lib_store *s, const char *node, enum lib_node_state st,
			     struct lib_err *e);
/* node_state[] from the nodes table (at start, after a lost transaction). */
void lib_store_node_load(struct lib_store *s);

#endif
