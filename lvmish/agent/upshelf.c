// SPDX-License-Identifier: GPL-2.0
/*
 * A librarian's reply about a shelf as the kernel is told it (struct
 * up_shelf, docs/NAMESPACE.md "What the node agent does"): the inode
 * number folded from the UUID, the size in bytes, the mode the access
 * rules give this node, and the whole book map, paged by UUID.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "session.h"
#include "upserver.h"

/* The inode number: the UUID folded, stable for the shelf's life, never 0 or 1. */
uint64_t up_uuid_ino(const uint8_t *u)
{
	uint64_t a, b, ino;

	memcpy(&a, u, 8);
	memcpy(&b, u + 8, 8);
	ino = (a ^ b) & ~(1ULL << 63);
	return ino < 2 ? ino + 2 : ino;
}

struct uuid_pages {
	struct up_worker *w;
	char uuid[40];
};

static int next_by_uuid(void *arg, size_t offset, json_t **page)
{
	struct uuid_pages *p = arg;

	return up_call(p->w, "shelf.get",
		       json_pack("{s:s,s:I,s:i}", "uuid", p->uuid, "offset", (json_int_t)offset,
				 "limit", UP_MAP_PAGE),
		       page);
}

/* The whole book map: the reply's part, then pages of shelf.get by UUID. */
static int map_fetch(struct up_worker *w, json_t *j, struct up_shelf *s)
{
	struct uuid_pages p = { .w = w };

	s->books = calloc(s->nr_books ? s->nr_books : 1, sizeof(*s->books));
	if (!s->books)
		return -ENOMEM;
	lfs_format_uuid(s->uuid, p.uuid);
	return lfsvol_book_map(j, s->nr_books, next_by_uuid, &p, s->books);
}

int up_shelf_from(struct up_worker *w, json_t *j, bool map, struct up_shelf *s)
{
	const char *name = json_string_value(json_object_get(j, "name"));
	const char *uuid = json_string_value(json_object_get(j, "uuid"));
	json_t *bytes = json_object_get(j, "bytes");
	json_int_t books = json_integer_value(json_object_get(j, "books"));
	const char *acc;

	memset(s, 0, sizeof(*s));
	/* "bytes": lfs.size as the librarian parsed it, within the books (PROTOCOL.md) */
	if (!name || !uuid || lfs_parse_uuid(uuid, s->uuid) || books < 0 ||
	    books > LFS_SHELF_BOOKS_MAX || !json_is_integer(bytes) ||
	    json_integer_value(bytes) < 0 ||
	    (uint64_t)json_integer_value(bytes) > (uint64_t)books * w->book_size)
		return -EPROTO;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->ino = up_uuid_ino(s->uuid);
	s->nr_books = (uint32_t)books;
	s->book_size = w->book_size;
	s->size = (uint64_t)json_integer_value(bytes);
	s->mtime = (uint64_t)json_integer_value(json_object_get(j, "mtime")) * 1000000000ULL;
	s->ctime = (uint64_t)json_integer_value(json_object_get(j, "ctime")) * 1000000000ULL;
	/*
	 * The mode shows what the librarian says this node may do ("caller_access";
	 * rw if it could not say). The librarian stays the judge:
	 * a write it refuses fails the open with its errno, whatever the mode.
	 */
	acc = json_string_value(json_object_get(j, "caller_access"));
	s->writable = !acc || !strcmp(acc, "rw") || !strcmp(acc, "all");
	return map ? map_fetch(w, j, s) : 0;
}

void up_shelf_free(struct up_shelf *s)
{
	free(s->books);
	s->books = NULL;
}
