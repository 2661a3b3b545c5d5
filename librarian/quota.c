// SPDX-License-Identifier: GPL-2.0
/*
 * Quotas (librarian.conf): node_quota limits the shelves each node owns and
 * the books they hold, a tenant's quota those of all its nodes' shelves.
 * Shelves and books count for their owner and its tenant whoever asks for
 * them (a node granted rw that grows another's shelf uses the owner's
 * quota); the admin's own shelves count for no quota. A request that would
 * go over one is refused with EDQUOT, naming the quota and its figures, and
 * changes nothing. Usage is counted when a quota is set, on covering
 * indexes (store_shelf.c).
 */
#include <errno.h>

#include "ops.h"

static int over(struct req *rq, const char *who, const char *name, const char *setting,
		const struct lib_quota *q, bool tenant, int64_t shelves, int64_t books)
{
	int64_t have_shelves = 0, have_books = 0;
	int r;

	if (q->shelves < 0 && q->books < 0)
		return 0;
	if ((r = lib_store_usage(rq->s, tenant, name, &have_shelves, &have_books, &rq->err)) < 0)
		return r;
	if (q->shelves >= 0 && shelves > 0 && have_shelves + shelves > q->shelves)
		return FAIL(rq, EDQUOT,
			    "%s '%s' is at its quota: %s shelves = %lld, it has %lld shelves", who,
			    name, setting, (long long)q->shelves, (long long)have_shelves);
	if (q->books >= 0 && books > 0 && have_books + books > q->books)
		return FAIL(
			rq, EDQUOT,
			"%s '%s' would go over its quota: %s books = %lld, its shelves hold %lld books and the request adds %lld",
			who, name, setting, (long long)q->books, (long long)have_books,
			(long long)books);
	return 0;
}

int lib_quota_check(struct req *rq, const char *owner, const char *tenant, int64_t shelves,
		    int64_t books)
{
	int t = tenant[0] ? lib_config_find_tenant(rq->c, tenant) : -1;
	int r = 0;

	if (lib_config_find_node(rq->c, owner) >= 0)
		r = over(rq, "node", owner, "node_quota", &rq->c->node_quota, false, shelves,
			 books);
	if (r == 0 && t >= 0)
		r = over(rq, "tenant", tenant, "quota", &rq->c->tenants[t].quota, true, shelves,
			 books);
	return r;
}
