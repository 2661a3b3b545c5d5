// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation policies. A plan (which IG each new book comes from) is made
 * from the per-IG free counts alone; only when the whole request can be met
 * are books picked, each by one seek in the free-book index. The cost is
 * O(books requested x IGs) and never depends on the catalogue's size.
 *
 * Only FREE books known zero are allocated (igs.zero, books_zero): a new
 * shelf never holds a byte it did not write. Others wait to be zeroed or
 * checked; ENOSPC says how many.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

struct cand {
	int gi; /* index into cfg->igs */
	int64_t free; /* allocatable (FREE, known zero) books left for this plan */
	int64_t unknown; /* FREE books not known zero */
	int64_t have; /* shelf's books in this IG (Spread) */
	int tier;
	bool excluded;
};

/* One grow: the candidates in policy order and the IG of each new book. */
struct plan {
	struct cand *cd; /* one per configured IG, then the allowed ones first */
	int ncd;
	int *pick; /* pick[k]: candidate of book k */
	int64_t got; /* books planned */
	int64_t avail; /* allocatable books the policy could reach */
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
		[LFS_POL_LOCAL_NODE] = { 1, 0 },	   [LFS_POL_NEAREST] = { 4, 0, 1, 2, 3 },
		[LFS_POL_NEAREST_REMOTE] = { 3, 1, 2, 3 }, [LFS_POL_NEAREST_ENC] = { 2, 0, 1 },
		[LFS_POL_NEAREST_RACK] = { 3, 0, 1, 2 },   [LFS_POL_NONLOCAL_ENC] = { 2, 2, 3 },
	};

	if ((size_t)p >= sizeof(t) / sizeof(t[0]) || !t[p][0])
		return 0;
	memcpy(tiers, &t[p][1], t[p][0] * sizeof(int));
	return t[p][0];
}

struct cand_walk {
	const struct lib_config *c;
	struct cand *cd;
	char *pd; /* power domains to avoid */
};

static int set_free(void *arg, int64_t ig, int64_t free, int64_t zero)
{
	struct cand_walk *w = arg;
	int k = lib_config_find_ig(w->c, ig);

	if (k >= 0) {
		w->cd[k].free = zero;
		w->cd[k].unknown = free - zero;
	}
	return 0;
}

static int set_have(void *arg, int64_t ig, int64_t n)
{
	struct cand_walk *w = arg;
	int k = lib_config_find_ig(w->c, ig);

	if (k >= 0)
		w->cd[k].have = n;
	return 0;
}

static int avoid_domain(void *arg, int64_t ig, int64_t n)
{
	struct cand_walk *w = arg;
	int k = lib_config_find_ig(w->c, ig);

	if (k >= 0 && n > 0)
		w->pd[w->c->nodes[w->c->igs[k].node].power] = 1;
	return 0;
}

/* Power-domain anti-affinity: exclude every domain another named shelf uses. */
static int exclude_domains(struct lib_store *s, struct lib_shelf_ctx *sh, struct cand_walk *w,
			   struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	int r = 0;

	w->pd = calloc(c->npowers, 1);
	if (!w->pd)
		return lib_fail(e, ENOMEM, "out of memory");
	for (int a = 0; a < sh->navoid && r == 0; a++)
		r = lib_store_shelf_igs(s, sh->avoid[a], avoid_domain, w, e);
	for (int i = 0; i < c->nigs && r == 0; i++)
		if (w->pd[c->nodes[c->igs[i].node].power])
			w->cd[i].excluded = true;
	free(w->pd);
	return r;
}

static int load_candidates(struct lib_store *s, struct lib_shelf_ctx *sh, struct cand *cd,
			   struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	struct cand_walk w = { .c = c, .cd = cd };
	int r;

	for (int i = 0; i < c->nigs; i++) {
		cd[i].gi = i;
		cd[i].tier = sh->node >= 0 ? tier_of(c, sh->node, i) : 3;
	}
	r = lib_store_igs_known(s, set_free, &w, e);
	if (r == 0 && sh->navoid)
		r = exclude_domains(s, sh, &w, e);
	if (r == 0 && sh->policy == LFS_POL_SPREAD && sh->nbooks)
		r = lib_store_shelf_igs(s, sh->shelf_id, set_have, &w, e);
	return r;
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

/* Keep only the candidates the policy allows, in its order of preference. */
static void order_candidates(struct lib_shelf_ctx *sh, struct plan *p, int nigs)
{
	int tiers[4], ntiers = policy_tiers(sh->policy, tiers);

	p->ncd = 0;
	for (int i = 0; i < nigs; i++) {
		bool ok = !p->cd[i].excluded;

		if (ok && ntiers) {
			ok = false;
			for (int t = 0; t < ntiers; t++)
				if (p->cd[i].tier == tiers[t])
					ok = true;
		}
		if (ok)
			p->cd[p->ncd++] = p->cd[i];
	}
	/* node-relative: the order of its tiers, then IG number; else IG number */
	for (int i = 0; i < p->ncd; i++) {
		int rank = 0;

		for (int t = 0; t < ntiers; t++)
			if (p->cd[i].tier == tiers[t])
				rank = t;
		p->cd[i].tier = rank;
	}
	qsort(p->cd, p->ncd, sizeof(*p->cd),
	      sh->policy == LFS_POL_LZA_DESCENDING ? cmp_ig_desc : cmp_ig_asc);
	p->avail = 0;
	for (int i = 0; i < p->ncd; i++)
		p->avail += p->cd[i].free;
}

/* Greedy over candidates in order. */
static void plan_ordered(struct plan *p, int64_t n)
{
	for (int i = 0; i < p->ncd && p->got < n; i++) {
		while (p->cd[i].free > 0 && p->got < n) {
			p->cd[i].free--;
			p->pick[p->got++] = i;
		}
	}
}

static void plan_random(struct lib_store *s, struct plan *p, int64_t n)
{
	int64_t total = p->avail;

	for (; p->got < n && total > 0; p->got++) {
		int64_t r = lib_random(s) % total;
		int i = 0;

		while (r >= p->cd[i].free)
			r -= p->cd[i++].free;
		p->cd[i].free--;
		total--;
		p->pick[p->got] = i;
	}
}

static void plan_spread(struct plan *p, int64_t n)
{
	for (; p->got < n; p->got++) {
		int best = -1;

		for (int i = 0; i < p->ncd; i++)
			if (p->cd[i].free > 0 && (best < 0 || p->cd[i].have < p->cd[best].have))
				best = i;
		if (best < 0)
			break;
		p->cd[best].free--;
		p->cd[best].have++;
		p->pick[p->got] = best;
	}
}

/* The candidate of IG ig, or -1 (not allowed, or not in the fabric). */
static int cand_of(const struct lib_config *c, const struct plan *p, uint32_t ig)
{
	for (int i = 0; i < p->ncd; i++)
		if (c->igs[p->cd[i].gi].ig == ig)
			return i;
	return -1;
}

/* The IGs of lfs.igs in turn, continuing the rotation of earlier grows. */
static int plan_request_ig(const struct lib_config *c, struct lib_shelf_ctx *sh, struct plan *p,
			   int64_t n)
{
	int *map = malloc(sh->nreq_igs * sizeof(*map));
	int pos = sh->nbooks % sh->nreq_igs, dry = 0;

	if (!map)
		return -ENOMEM;
	p->avail = 0;
	for (int j = 0; j < sh->nreq_igs; j++) {
		bool listed = false;

		map[j] = cand_of(c, p, sh->req_igs[j]);
		for (int k = 0; k < j; k++)
			listed = listed || map[k] == map[j];
		if (map[j] >= 0 && !listed)
			p->avail += p->cd[map[j]].free;
	}
	while (p->got < n && dry < sh->nreq_igs) {
		int i = map[pos];

		pos = (pos + 1) % sh->nreq_igs;
		if (i < 0 || p->cd[i].free <= 0) {
			dry++;
			continue;
		}
		dry = 0;
		p->cd[i].free--;
		p->pick[p->got++] = i;
	}
	free(map);
	return 0;
}

static int make_plan(struct lib_store *s, struct lib_shelf_ctx *sh, struct plan *p, int64_t n)
{
	switch (sh->policy) {
	case LFS_POL_RANDOM_BOOKS:
		plan_random(s, p, n);
		return 0;
	case LFS_POL_SPREAD:
		plan_spread(p, n);
		return 0;
	case LFS_POL_REQUEST_IG:
		return plan_request_ig(s->cfg, sh, p, n);
	default:
		plan_ordered(p, n);
		return 0;
	}
}

/* Where each IG's picks start: a random book for RandomBooks. */
static int64_t *start_cursors(struct lib_store *s, enum lfs_policy pol)
{
	const struct lib_config *c = s->cfg;
	int64_t *cursor = malloc(c->nigs * sizeof(*cursor));

	for (int i = 0; cursor && i < c->nigs; i++) {
		const struct lib_ig *g = &c->igs[i];

		if (pol == LFS_POL_RANDOM_BOOKS)
			cursor[i] = lib_book_id(g->ig, lib_random(s) % g->books);
		else if (pol == LFS_POL_LZA_DESCENDING)
			cursor[i] = lib_book_id(g->ig, g->books - 1);
		else
			cursor[i] = lib_book_id(g->ig, 0);
	}
	return cursor;
}

/* Each IG that gave books: its free count, and a stamp that voids check tokens. */
static int count_taken(struct lib_store *s, const int64_t *used, struct lib_err *e)
{
	for (int i = 0; i < s->cfg->nigs; i++) {
		int r;

		if (!used[i])
			continue;
		lib_store_ig_changed(s, i);
		r = lib_store_ig_free_add(s, s->cfg->igs[i].ig, -used[i], -used[i], e);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Book k of the plan is the FREE known-zero book of its IG nearest to the
 * IG's cursor (in id order from it, wrapping around once; downwards for
 * LZAdescending), at position nbooks + k; each is picked and taken by one
 * statement (store_books.c), all in one round trip, in order: each IG's
 * books are the ones one pick after another from its cursor gives.
 */
static void plan_takes(struct lib_store *s, struct lib_shelf_ctx *sh, const struct plan *p,
		       const int64_t *cursor, struct lib_take *q)
{
	bool desc = sh->policy == LFS_POL_LZA_DESCENDING;

	for (int64_t k = 0; k < p->got; k++) {
		int gi = p->cd[p->pick[k]].gi;
		uint32_t ig = s->cfg->igs[gi].ig;
		int64_t cur = cursor[gi], first = lib_ig_first(ig), end = lib_ig_last(ig);

		q[k] = (struct lib_take){ .lo1 = desc ? first : cur,
					  .hi1 = desc ? cur : end,
					  .lo2 = desc ? cur + 1 : first,
					  .hi2 = desc ? end : cur - 1,
					  .seq = sh->nbooks + k };
	}
}

/* Pick and take the planned books, appending them to the shelf; their ids into ids. */
static int take_books(struct lib_store *s, struct lib_shelf_ctx *sh, struct plan *p, int64_t *ids,
		      struct lib_err *e)
{
	struct lib_take *q = calloc(p->got ? p->got : 1, sizeof(*q));
	int64_t *used = calloc(s->cfg->nigs + 1, sizeof(*used)), *cursor = NULL;
	int r = -ENOMEM;

	if (q && used)
		cursor = start_cursors(s, sh->policy);
	if (!cursor) {
		r = lib_fail(e, ENOMEM, "out of memory taking %lld books", (long long)p->got);
		goto out;
	}
	plan_takes(s, sh, p, cursor, q);
	r = lib_store_books_take(s, q, p->got, sh->shelf_id, sh->policy == LFS_POL_LZA_DESCENDING,
				 e);
	for (int64_t k = 0; k < p->got && r == 0; k++) {
		ids[k] = q[k].id;
		used[p->cd[p->pick[k]].gi]++;
	}
	if (r == 0)
		r = count_taken(s, used, e);
out:
	free(q);
	free(used);
	free(cursor);
	return r;
}

static int check_policy(const struct lib_config *c, struct lib_shelf_ctx *sh, struct lib_err *e)
{
	int tiers[4];

	if (policy_tiers(sh->policy, tiers) && sh->node < 0)
		return lib_fail(
			e, EINVAL,
			"policy %s places books relative to the requesting node; an admin request must name one with \"node\"",
			lfs_policy_name(sh->policy));
	if (sh->policy == LFS_POL_REQUEST_IG && !sh->nreq_igs)
		return lib_fail(
			e, EINVAL,
			"policy RequestIG needs the attribute lfs.igs (a list of IG numbers)");
	return 0;
}

/*
 * ENOSPC: what the policy could reach, and what waits there to be zeroed
 * (ZOMBIE books, freed) or known zero (FREE books never used or of unknown
 * content).
 */
static bool reachable(const struct lib_config *c, struct lib_shelf_ctx *sh, const struct cand *cd)
{
	if (sh->policy != LFS_POL_REQUEST_IG)
		return true;
	for (int j = 0; j < sh->nreq_igs; j++)
		if (sh->req_igs[j] == c->igs[cd->gi].ig)
			return true;
	return false;
}

static int no_space(struct lib_store *s, struct lib_shelf_ctx *sh, struct plan *p, int64_t n,
		    struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	int64_t zombies = 0, unknown = 0;

	for (int i = 0; i < p->ncd; i++) {
		int64_t z;

		if (!reachable(c, sh, &p->cd[i]))
			continue;
		z = lib_store_ig_count(s, c->igs[p->cd[i].gi].ig, BOOK_ZOMBIE, e);

		if (z < 0)
			return z;
		zombies += z;
		unknown += p->cd[i].unknown;
	}
	return lib_fail(
		e, ENOSPC,
		"cannot allocate %lld books with policy %s%s%s%s: only %lld free books known to be zero are available to it; %lld more wait to be zeroed (%lld freed, %lld never used or of unknown content)",
		(long long)n, lfs_policy_name(sh->policy), sh->node >= 0 ? " for node " : "",
		sh->node >= 0 ? c->nodes[sh->node].name : "",
		sh->navoid ? " (with power-domain anti-affinity)" : "", (long long)p->avail,
		(long long)(zombies + unknown), (long long)zombies, (long long)unknown);
}

int lib_alloc_books(struct lib_store *s, struct lib_shelf_ctx *sh, int64_t n, struct lib_err *e)
{
	const struct lib_config *c = s->cfg;
	struct plan p = { 0 };
	int r;

	if (n <= 0)
		return 0;
	r = check_policy(c, sh, e);
	if (r < 0)
		return r;
	p.cd = calloc(c->nigs, sizeof(*p.cd));
	p.pick = malloc(n * sizeof(*p.pick));
	if (!p.cd || !p.pick) {
		r = lib_fail(e, ENOMEM, "out of memory planning %lld books", (long long)n);
		goto out;
	}
	r = load_candidates(s, sh, p.cd, e);
	if (r < 0)
		goto out;
	order_candidates(sh, &p, c->nigs);
	if (make_plan(s, sh, &p, n) < 0) {
		r = lib_fail(e, ENOMEM, "out of memory");
		goto out;
	}
	free(sh->taken);
	sh->taken = malloc(n * sizeof(*sh->taken));
	if (!sh->taken)
		r = lib_fail(e, ENOMEM, "out of memory planning %lld books", (long long)n);
	else
		r = p.got < n ? no_space(s, sh, &p, n, e) : take_books(s, sh, &p, sh->taken, e);
	if (r == 0)
		sh->nbooks += n;
out:
	free(p.cd);
	free(p.pick);
	return r;
}
