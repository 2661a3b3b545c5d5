// SPDX-License-Identifier: MIT
/*
 * upcalld's state file: the catalogue as text, rewritten (to a temporary
 * file, then renamed) after every change, read at the start.
 *   default POLICY
 *   shelf NAME UUID INO SIZE MTIME CTIME WRITABLE ACTIVE POLICY|- IGS|- N IG:BOOK...
 *   xattr NAME HEX          (of the shelf above)
 *   dirty IG BOOK...        (freed books not zeroed yet)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upcalld.h"

static void put_hex(FILE *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", ((const unsigned char *)p)[i]);
	if (!n)
		fputc('-', f);
}

static void save_shelf(FILE *f, const struct shelf *s)
{
	fprintf(f, "shelf %s ", s->name);
	put_hex(f, s->uuid, LFS_UUID_LEN);
	fprintf(f, " %llu %llu %llu %llu %d %d %s %s %u", (unsigned long long)s->ino,
		(unsigned long long)s->size, (unsigned long long)s->mtime,
		(unsigned long long)s->ctime, s->writable, s->active,
		s->policy[0] ? s->policy : "-", s->igs[0] ? s->igs : "-", s->nr_books);
	for (uint32_t i = 0; i < s->nr_books; i++)
		fprintf(f, " %u:%u", s->books[i].ig, s->books[i].book);
	fputc('\n', f);
	for (size_t i = 0; i < s->nx; i++) {
		fprintf(f, "xattr %s ", s->x[i].name);
		put_hex(f, s->x[i].value, s->x[i].len);
		fputc('\n', f);
	}
}

int cat_save(struct catalog *c)
{
	char tmp[4096];
	FILE *f;

	if (!c->path)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", c->path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "default %s\n", c->policy_default);
	for (size_t i = 0; i < c->n; i++)
		save_shelf(f, c->v[i]);
	for (size_t i = 0; i < c->nf; i++) {
		fprintf(f, "dirty %u", c->f[i].ig);
		for (uint32_t b = 0; b < c->f[i].nr_books; b++)
			if (c->f[i].state[b] == BOOK_DIRTY)
				fprintf(f, " %u", b);
		fputc('\n', f);
	}
	if (fclose(f))
		return -errno;
	return rename(tmp, c->path) ? -errno : 0;
}

static size_t get_hex(const char *s, void *out, size_t max)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	while (n < max && sscanf(s + 2 * n, "%2hhx", (unsigned char *)out + n) == 1)
		n++;
	return n;
}

static struct fabric *fabric_of(struct catalog *c, uint32_t ig)
{
	for (size_t i = 0; i < c->nf; i++)
		if (c->f[i].ig == ig)
			return &c->f[i];
	return NULL;
}

static void mark(struct catalog *c, uint32_t ig, uint32_t book, int state)
{
	struct fabric *f = fabric_of(c, ig);

	if (f && book < f->nr_books)
		f->state[book] = state;
}

static int load_shelf(struct catalog *c, char *line)
{
	char name[80], uuid[40], pol[40], igs[256];
	unsigned long long ino, size, mt, ct;
	struct shelf *s = calloc(1, sizeof(*s)), **v;
	int w, act, off;
	unsigned int n;
	char *p;

	if (!s || sscanf(line, "shelf %79s %39s %llu %llu %llu %llu %d %d %39s %255s %u%n", name,
			 uuid, &ino, &size, &mt, &ct, &w, &act, pol, igs, &n, &off) != 11)
		goto bad;
	snprintf(s->name, sizeof(s->name), "%.64s", name);
	get_hex(uuid, s->uuid, LFS_UUID_LEN);
	s->ino = ino, s->size = size, s->mtime = mt, s->ctime = ct;
	s->writable = w, s->active = act;
	snprintf(s->policy, sizeof(s->policy), "%.32s", strcmp(pol, "-") ? pol : "");
	snprintf(s->igs, sizeof(s->igs), "%s", strcmp(igs, "-") ? igs : "");
	s->books = calloc(n + 1, sizeof(*s->books));
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!s->books || !v)
		goto bad;
	c->v = v;
	p = line + off;
	for (s->nr_books = 0; s->nr_books < n; s->nr_books++) {
		struct lfs_book *b = &s->books[s->nr_books];

		if (sscanf(p, " %u:%u%n", &b->ig, &b->book, &off) != 2)
			goto bad;
		p += off;
		mark(c, b->ig, b->book, BOOK_USED);
	}
	c->v[c->n++] = s;
	return 0;
bad:
	if (s)
		free(s->books);
	free(s);
	return -EINVAL;
}

static int load_xattr(struct catalog *c, char *line)
{
	struct shelf *s = c->n ? c->v[c->n - 1] : NULL;
	char name[256], *hex = malloc(2 * LFS_XATTR_VALUE_MAX + 2);
	struct xattr *v;
	int ret = -EINVAL;

	if (!s || !hex || sscanf(line, "xattr %255s %s", name, hex) != 2)
		goto out;
	v = realloc(s->x, (s->nx + 1) * sizeof(*v));
	if (!v)
		goto out;
	s->x = v;
	v = &s->x[s->nx++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->value = malloc(LFS_XATTR_VALUE_MAX + 1);
	v->len = v->value ? get_hex(hex, v->value, LFS_XATTR_VALUE_MAX) : 0;
	ret = 0;
out:
	free(hex);
	return ret;
}

static void load_dirty(struct catalog *c, char *line)
{
	unsigned int ig, b;
	char *p = line + 5;
	int off;

	if (sscanf(p, " %u%n", &ig, &off) != 1)
		return;
	for (p += off; sscanf(p, " %u%n", &b, &off) == 1; p += off)
		mark(c, ig, b, BOOK_DIRTY);
}

/* Read the state file if there is one; the fabrics are known already. */
int cat_load(struct catalog *c)
{
	size_t cap = 2 * LFS_XATTR_VALUE_MAX + 1024;
	char *line = malloc(cap);
	int ret = 0;
	FILE *f;

	if (!c->path || !line) {
		free(line);
		return c->path ? -ENOMEM : 0;
	}
	f = fopen(c->path, "r");
	if (!f) {
		free(line);
		return errno == ENOENT ? 0 : -errno;
	}
	while (!ret && fgets(line, cap, f)) {
		if (!strncmp(line, "default ", 8))
			sscanf(line, "default %32s", c->policy_default);
		else if (!strncmp(line, "shelf ", 6))
			ret = load_shelf(c, line);
		else if (!strncmp(line, "xattr ", 6))
			ret = load_xattr(c, line);
		else if (!strncmp(line, "dirty ", 6))
			load_dirty(c, line);
	}
	fclose(f);
	free(line);
	return ret;
}
