// SPDX-License-Identifier: MIT
/*
 * upcalld's catalogue: shelves with their books, policies and attributes,
 * kept in memory and saved to a state file after every change (so that a
 * restarted server, or another VM sharing the file, knows them). Books are
 * allocated simply: by the shelf's policy from the attached fabric devices,
 * a freed book is zeroed (LFS_CMD_BOOK_ZERO) before it is handed out again,
 * and the devices' books are assumed zero at the start (fresh test fabrics).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lfs_rules.h"
#include "upcalld.h"

#define IGS_MAX 256

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct shelf *cat_find(struct catalog *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i]->name, name))
			return c->v[i];
	return NULL;
}

struct shelf *cat_find_uuid(struct catalog *c, const uint8_t *uuid)
{
	for (size_t i = 0; i < c->n; i++)
		if (!memcmp(c->v[i]->uuid, uuid, LFS_UUID_LEN))
			return c->v[i];
	return NULL;
}

uint64_t cat_book_size(struct catalog *c)
{
	return c->nf ? c->f[0].book_size : LFS_BOOK_SIZE_MIN;
}

void cat_space(struct catalog *c, uint64_t *total, uint64_t *free)
{
	*total = *free = 0;
	for (size_t i = 0; i < c->nf; i++)
		for (uint32_t b = 0; b < c->f[i].nr_books; b++) {
			*total += c->f[i].book_size;
			if (c->f[i].state[b] != BOOK_USED)
				*free += c->f[i].book_size;
		}
}

static struct fabric *fabric_of(struct catalog *c, uint32_t ig)
{
	for (size_t i = 0; i < c->nf; i++)
		if (c->f[i].ig == ig)
			return &c->f[i];
	return NULL;
}

static void books_free(struct catalog *c, const struct lfs_book *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fabric *f = fabric_of(c, b[i].ig);

		if (f && b[i].book < f->nr_books)
			f->state[b[i].book] = BOOK_DIRTY;
	}
}

/* The next usable book of @f: a free one, or a dirty one zeroed now. */
static int book_take(struct catalog *c, struct fabric *f, struct lfs_book *out)
{
	for (uint32_t b = 0; b < f->nr_books; b++) {
		struct lfs_book book = { f->ig, b };
		bool zeroed = false;

		if (f->state[b] == BOOK_USED)
			continue;
		if (f->state[b] == BOOK_DIRTY &&
		    (c->zero(&book, 1, &zeroed) || !zeroed))
			continue; /* still held by the kernel: later */
		f->state[b] = BOOK_USED;
		*out = book;
		return 0;
	}
	return -ENOSPC;
}

/* The IGs a shelf's policy draws from, in order. */
static int policy_igs(struct catalog *c, struct shelf *s, uint32_t *igs)
{
	const char *p = s->policy[0] ? s->policy : c->policy_default;
	char msg[128];
	int n = 0;

	if (!strcmp(p, "LocalNode") || !strcmp(p, "Nearest"))
		igs[n++] = c->local_ig;
	else if (!strcmp(p, "RequestIG") && s->igs[0])
		n = lfs_ig_list_parse(s->igs, igs, IGS_MAX, msg, sizeof(msg));
	if (n > 0)
		return n;
	for (size_t i = 0; i < c->nf && i < IGS_MAX; i++)
		igs[n++] = c->f[i].ig;
	return n;
}

/* @n more books for @s by its policy: book k on the policy's IG k mod n. */
static int books_alloc(struct catalog *c, struct shelf *s, uint32_t n)
{
	uint32_t igs[IGS_MAX], have = s->nr_books;
	struct lfs_book *v = realloc(s->books, (have + n + 1) * sizeof(*v));
	int nig, tries;

	if (!v)
		return -ENOMEM;
	s->books = v;
	nig = policy_igs(c, s, igs);
	for (uint32_t i = 0; i < n; i++) {
		for (tries = 0; tries < nig; tries++) {
			struct fabric *f = fabric_of(c, igs[(have + i + tries) % nig]);

			if (f && !book_take(c, f, &v[have + i]))
				break;
		}
		if (tries == nig) {
			books_free(c, v + have, i);
			return -ENOSPC;
		}
	}
	s->nr_books = have + n;
	return 0;
}

int cat_create(struct catalog *c, const char *name, const char *policy, struct shelf **out)
{
	struct shelf *s, **v;
	enum lfs_policy p;

	if (lfs_rule_shelf_name(name, NULL, 0))
		return -EINVAL;
	if (policy && lfs_policy_parse(policy, &p))
		return -EINVAL;
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	s = calloc(1, sizeof(*s));
	if (!v || !s) {
		free(s);
		return -ENOMEM;
	}
	c->v = v;
	snprintf(s->name, sizeof(s->name), "%s", name);
	for (int i = 0; i < LFS_UUID_LEN; i++)
		s->uuid[i] = (uint8_t)random();
	s->uuid[6] = (s->uuid[6] & 0x0f) | 0x40;
	s->uuid[8] = (s->uuid[8] & 0x3f) | 0x80;
	/* the stable inode number: from the UUID, never 0 or 1 */
	memcpy(&s->ino, s->uuid, sizeof(s->ino));
	s->ino = (s->ino >> 1) | 2;
	s->mtime = s->ctime = now_ns();
	s->writable = 1;
	if (policy)
		snprintf(s->policy, sizeof(s->policy), "%s", policy);
	c->v[c->n++] = s;
	*out = s;
	return 0;
}

static void shelf_free(struct shelf *s)
{
	for (size_t i = 0; i < s->nx; i++)
		free(s->x[i].value);
	free(s->x);
	free(s->books);
	free(s);
}

int cat_destroy(struct catalog *c, struct shelf *s)
{
	if (s->active)
		return -EBUSY;
	books_free(c, s->books, s->nr_books);
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i] == s)
			c->v[i] = c->v[--c->n];
	shelf_free(s);
	return 0;
}

int cat_rename(struct catalog *c, struct shelf *s, const char *to, bool noreplace)
{
	struct shelf *t = cat_find(c, to);
	int ret;

	if (lfs_rule_shelf_name(to, NULL, 0))
		return -EINVAL;
	if (t == s)
		return 0;
	if (t && noreplace)
		return -EEXIST;
	if (t) {
		ret = cat_destroy(c, t);
		if (ret)
			return ret;
	}
	snprintf(s->name, sizeof(s->name), "%s", to);
	s->ctime = now_ns();
	return 0;
}

/* lfs.size = @size, with the books covering it exactly. */
int cat_resize(struct catalog *c, struct shelf *s, uint64_t size)
{
	uint64_t bs = cat_book_size(c), want = (size + bs - 1) / bs;
	int ret;

	if (want > LFS_SHELF_BOOKS_MAX)
		return -EFBIG;
	if (want > s->nr_books) {
		ret = books_alloc(c, s, want - s->nr_books);
		if (ret)
			return ret;
	} else if (want < s->nr_books) {
		books_free(c, s->books + want, s->nr_books - want);
		s->nr_books = want;
	}
	s->size = size;
	s->mtime = s->ctime = now_ns();
	return 0;
}
