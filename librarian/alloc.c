// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation policies. A plan (which IG each new book comes from) is made
 * from the per-IG free counts alone; only when the whole request can be met
 * are books picked, each by one seek in the free-book index. The cost is
 * O(books requested x IGs) and never depends on the catalogue's size.
 *
 * The pick also reads the book's zeroed flag (the row the UPDATE that takes
 * the book touches anyway), so whether a grow got only known-zero books costs
 * no extra query.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "librarian.h"

struct cand {
	int gi;			/* index into cfg->igs */
	int64_t free;		/* free books left for this plan */
	int64_t have;		/* shelf's books in this IG (Spread) */
	int tier;
	bool excluded;
};

static int tier_of(const struct lib_config *c, int node, int gi)
{
	const struct lib_node *me = &c->nodes[node];
	const struct lib_node *n = &c->nodes[c->igs[gi].node];

	if (n == me)
		return 0;
	if (n->enc == me->enc)
		return 1;
	if (n->rack == me->rack)
		return 2;
	return 3;
}

/* Tiers a node-relative policy may use, in order of preference. */
static int policy_tiers(enum lfs_policy p, int tiers[4])
{
	static const int t[][5] = {
		[LFS_POL_LOCAL_NODE] = { 1, 0 },
		[LFS_POL_NEAREST] = { 4, 0, 1, 2, 3 },
		[LFS_POL_NEAREST_REMOTE] = { 3, 1, 2, 3 },
		[LFS_POL_NEAREST_ENC] = { 2, 0, 1 },
		[LFS_POL_NEAREST_RACK] = { 3, 0, 1, 2 },
		[LFS_POL_NONLOCAL_ENC] = { 2, 2, 3 },
	};

	if ((size_t)p >= sizeof(t) / sizeof(t[0]) || !t[p][0])
		return 0;
	memcpy(tiers, &t[p][1], t[p][0] * sizeof(int));
	return t[p][0];
}

static int load_candidates(struct lib_store *s, struct lib_shelf_ctx *sh, struct cand *cd,
			   struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	sqlite3_stmt *st;

	for (int i = 0; i < c->nigs; i++) {
		cd[i].gi = i;
		cd[i].free = 0;
		cd[i].have = 0;
		cd[i].excluded = false;
		cd[i].tier = sh->node >= 0 ? tier_of(c, sh->node, i) : 3;
	}
	st = lib_stmt(s, "SELECT ig, free FROM igs");
	if (!st)
		return lib_sql_fail(s, e);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int k = lib_config_find_ig(c, sqlite3_column_int64(st, 0));

		if (k >= 0)
			cd[k].free = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);

	/* power-domain anti-affinity: skip every domain another named shelf uses */
	if (sh->navoid) {
		char *pd = calloc(c->npowers, 1);

		if (!pd)
			return lib_fail(e, ENOMEM, "out of memory");
		for (int a = 0; a < sh->navoid; a++) {
			st = lib_stmt(s, "SELECT DISTINCT id >> 32 FROM books WHERE shelf = ?1");
			if (!st) {
				free(pd);
				return lib_sql_fail(s, e);
			}
			sqlite3_bind_int64(st, 1, sh->avoid[a]);
			while (sqlite3_step(st) == SQLITE_ROW) {
				int k = lib_config_find_ig(c, sqlite3_column_int64(st, 0));

				if (k >= 0)
					pd[c->nodes[c->igs[k].node].power] = 1;
			}
			sqlite3_reset(st);
		}
		for (int i = 0; i < c->nigs; i++)
			if (pd[c->nodes[c->igs[i].node].power])
				cd[i].excluded = true;
		free(pd);
	}
	if (sh->policy == LFS_POL_SPREAD && sh->nbooks) {
		st = lib_stmt(s, "SELECT id >> 32, count(*) FROM books WHERE shelf = ?1 GROUP BY 1");
		if (!st)
			return lib_sql_fail(s, e);
		sqlite3_bind_int64(st, 1, sh->shelf_id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int k = lib_config_find_ig(c, sqlite3_column_int64(st, 0));

			if (k >= 0)
				cd[k].have = sqlite3_column_int64(st, 1);
		}
		sqlite3_reset(st);
	}
	return 0;
}

static int cmp_ig_asc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier - y->tier;
	return x->gi - y->gi;
}

static int cmp_ig_desc(const void *a, const void *b)
{
	return -cmp_ig_asc(a, b);
}

/* Greedy over candidates in order; plan[k] = cand index of book k. */
static int64_t plan_ordered(struct cand *cd, int ncd, int64_t n, int *plan)
{
	int64_t k = 0;

	for (int i = 0; i < ncd && k < n; i++) {
		while (cd[i].free > 0 && k < n) {
			cd[i].free--;
			plan[k++] = i;
		}
	}
	return k;
}

static int64_t plan_random(struct lib_store *s, struct cand *cd, int ncd, int64_t n, int *plan)
{
	int64_t total = 0, k;

	for (int i = 0; i < ncd; i++)
		total += cd[i].free;
	for (k = 0; k < n && total > 0; k++) {
		int64_t r = lib_random(s) % total;
		int i = 0;

		while (r >= cd[i].free)
			r -= cd[i++].free;
		cd[i].free--;
		total--;
		plan[k] = i;
	}
	return k;
}

static int64_t plan_spread(struct cand *cd, int ncd, int64_t n, int *plan)
{
	int64_t k;

	for (k = 0; k < n; k++) {
		int best = -1;

		for (int i = 0; i < ncd; i++)
			if (cd[i].free > 0 && (best < 0 || cd[i].have < cd[best].have))
				best = i;
		if (best < 0)
			break;
		cd[best].free--;
		cd[best].have++;
		plan[k] = best;
	}
	return k;
}

static int64_t plan_request_ig(struct lib_shelf_ctx *sh, struct cand *cd, const int *map,
			       int64_t n, int *plan)
{
	int64_t k = 0;
	int pos = sh->nreq_igs ? sh->nbooks % sh->nreq_igs : 0, dry = 0;

	while (k < n && dry < sh->nreq_igs) {
		int i = map[pos];

		pos = (pos + 1) % sh->nreq_igs;
		if (i < 0 || cd[i].free <= 0) {
			dry++;
			continue;
		}
		dry = 0;
		cd[i].free--;
		plan[k++] = i;
	}
	return k;
}

/*
 * The next free book of an IG at or after *cursor (wrapping around once), or
 * the highest below it for LZAdescending, and its zeroed flag. Consecutive
 * picks in one request continue from the last one, so a request touches few
 * index pages.
 */
static int pick_book(struct lib_store *s, enum lfs_policy pol, uint32_t ig, int64_t *cursor,
		     int64_t *id, bool *zeroed)
{
	int64_t lo = lib_book_id(ig, 0), hi = lib_book_id(ig, 0xffffffffU);
	bool desc = pol == LFS_POL_LZA_DESCENDING;
	sqlite3_stmt *st;
	int rc, pass;

	for (pass = 0; pass < 2; pass++) {
		if (desc)
			st = lib_stmt(s, "SELECT id, zeroed FROM books WHERE state = 0"
				      " AND id BETWEEN ?1 AND ?2 ORDER BY id DESC LIMIT 1");
		else
			st = lib_stmt(s, "SELECT id, zeroed FROM books WHERE state = 0"
				      " AND id BETWEEN ?1 AND ?2 ORDER BY id LIMIT 1");
		if (!st)
			return -EIO;
		if (desc) {
			sqlite3_bind_int64(st, 1, pass ? *cursor : lo);
			sqlite3_bind_int64(st, 2, pass ? hi : *cursor);
		} else {
			sqlite3_bind_int64(st, 1, pass ? lo : *cursor);
			sqlite3_bind_int64(st, 2, pass ? *cursor : hi);
		}
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*id = sqlite3_column_int64(st, 0);
			*zeroed = sqlite3_column_int(st, 1) == 1;
			sqlite3_reset(st);
			*cursor = desc ? *id - 1 : *id + 1;
			return 0;
		}
		sqlite3_reset(st);
	}
	return -EIO;	/* the free count said there was one */
}

int lib_alloc_books(struct lib_store *s, struct lib_shelf_ctx *sh, int64_t n, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	struct cand *cd = NULL;
	int *plan = NULL, *map = NULL, *used = NULL;
	int64_t *cursor = NULL;
	int tiers[4], ntiers, ncd = 0, r;
	int64_t got, avail = 0;

	sh->zeroed = true;	/* no book taken yet: none that is not known zero */
	if (n <= 0)
		return 0;
	ntiers = policy_tiers(sh->policy, tiers);
	if (ntiers && sh->node < 0)
		return lib_fail(e, EINVAL,
				"policy %s places books relative to the requesting node; an admin request must name one with \"node\"",
				lfs_policy_name(sh->policy));
	if (sh->policy == LFS_POL_REQUEST_IG && !sh->nreq_igs)
		return lib_fail(e, EINVAL,
				"policy RequestIG needs the attribute lfs.igs (a list of IG numbers)");
	cd = calloc(c->nigs, sizeof(*cd));
	plan = malloc(n * sizeof(*plan));
	used = calloc(c->nigs, sizeof(*used));
	if (!cd || !plan || !used) {
		r = lib_fail(e, ENOMEM, "out of memory planning %lld books", (long long)n);
		goto out;
	}
	r = load_candidates(s, sh, cd, e);
	if (r < 0)
		goto out;

	/* keep only allowed candidates, in policy order */
	for (int i = 0; i < c->nigs; i++) {
		bool ok = !cd[i].excluded;

		if (ok && ntiers) {
			ok = false;
			for (int t = 0; t < ntiers; t++)
				if (cd[i].tier == tiers[t])
					ok = true;
		}
		if (ok)
			cd[ncd++] = cd[i];
	}
	if (ntiers) {
		/* preference order is the order of tiers, then IG number */
		for (int i = 0; i < ncd; i++)
			for (int t = 0; t < ntiers; t++)
				if (cd[i].tier == tiers[t])
					cd[i].tier = t;
		qsort(cd, ncd, sizeof(*cd), cmp_ig_asc);
	} else {
		for (int i = 0; i < ncd; i++)
			cd[i].tier = 0;
		qsort(cd, ncd, sizeof(*cd),
		      sh->policy == LFS_POL_LZA_DESCENDING ? cmp_ig_desc : cmp_ig_asc);
	}
	for (int i = 0; i < ncd; i++)
		avail += cd[i].free;

	switch (sh->policy) {
	case LFS_POL_RANDOM_BOOKS:
		got = plan_random(s, cd, ncd, n, plan);
		break;
	case LFS_POL_SPREAD:
		got = plan_spread(cd, ncd, n, plan);
		break;
	case LFS_POL_REQUEST_IG:
		map = malloc(sh->nreq_igs * sizeof(*map));
		if (!map) {
			r = lib_fail(e, ENOMEM, "out of memory");
			goto out;
		}
		avail = 0;
		for (int j = 0; j < sh->nreq_igs; j++) {
			map[j] = -1;
			for (int i = 0; i < ncd; i++) {
				if (c->igs[cd[i].gi].ig == sh->req_igs[j]) {
					map[j] = i;
					break;
				}
			}
		}
		for (int i = 0; i < ncd; i++)
			for (int j = 0; j < sh->nreq_igs; j++)
				if (map[j] == i) {
					avail += cd[i].free;
					break;
				}
		got = plan_request_ig(sh, cd, map, n, plan);
		break;
	default:
		got = plan_ordered(cd, ncd, n, plan);
		break;
	}
	if (got < n) {
		r = lib_fail(e, ENOSPC,
			     "cannot allocate %lld books with policy %s%s%s%s: only %lld free books are available to it",
			     (long long)n, lfs_policy_name(sh->policy),
			     sh->node >= 0 ? " for node " : "",
			     sh->node >= 0 ? c->nodes[sh->node].name : "",
			     sh->navoid ? " (with power-domain anti-affinity)" : "",
			     (long long)avail);
		goto out;
	}

	cursor = malloc(c->nigs * sizeof(*cursor));
	if (!cursor) {
		r = lib_fail(e, ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < c->nigs; i++) {
		const struct lib_ig *g = &c->igs[i];

		/* where each IG's picks start: a random book for RandomBooks */
		if (sh->policy == LFS_POL_RANDOM_BOOKS)
			cursor[i] = lib_book_id(g->ig, lib_random(s) % g->books);
		else if (sh->policy == LFS_POL_LZA_DESCENDING)
			cursor[i] = lib_book_id(g->ig, g->books - 1);
		else
			cursor[i] = lib_book_id(g->ig, 0);
	}
	for (int64_t k = 0; k < n; k++) {
		int gi = cd[plan[k]].gi;
		const struct lib_ig *g = &c->igs[gi];
		sqlite3_stmt *st;
		int64_t id;
		bool zeroed;

		r = pick_book(s, sh->policy, g->ig, &cursor[gi], &id, &zeroed);
		if (r < 0) {
			r = lib_fail(e, EIO, "catalogue inconsistent: IG %u has no free book though its count says so",
				     g->ig);
			goto out;
		}
		st = lib_stmt(s, "UPDATE books SET state = 1, shelf = ?2, seq = ?3 WHERE id = ?1");
		if (!st)
			goto sqlfail;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, sh->shelf_id);
		sqlite3_bind_int64(st, 3, sh->nbooks + k);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlfail;
		used[gi]++;
		sh->zeroed = sh->zeroed && zeroed;
	}
	for (int i = 0; i < c->nigs; i++) {
		sqlite3_stmt *st;

		if (!used[i])
			continue;
		/* a check of this IG's FREE books in flight no longer counts */
		lib_store_ig_changed(s, i);
		st = lib_stmt(s, "UPDATE igs SET free = free - ?2 WHERE ig = ?1");
		if (!st)
			goto sqlfail;
		sqlite3_bind_int64(st, 1, c->igs[i].ig);
		sqlite3_bind_int64(st, 2, used[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlfail;
	}
	sh->nbooks += n;
	r = 0;
	goto out;
sqlfail:
	r = lib_sql_fail(s, e);
out:
	free(cd);
	free(plan);
	free(map);
	free(used);
	free(cursor);
	return r;
}
