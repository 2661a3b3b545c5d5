// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent tells the librarian of poisoned memory: the bad ranges
 * lfs.ko keeps per fabric (FABRIC_GET's LFS_A_BAD, docs/CXL.md "Poison")
 * become book.bad requests, one range per book touched. Every pass reads
 * them (a pass a heartbeat interval, and each udev `--once' pass); a set
 * the librarian has already heard from this session is not sent again,
 * and every REPORT_AGAIN passes it is, in case an admin cleared a book the
 * kernel still refuses. The librarian takes a known range as harmless.
 */
#include <errno.h>
#include <stdlib.h>

#include "agent.h"
#include "bad.h"
#include "lfsvol.h"
#include "session.h"

#define BAD_RANGES_MAX 4096 /* the librarian's limit a request */
#define REPORT_AGAIN 60

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 1099511628211ULL;
	return h;
}

/* One kernel range split at book ends into [ig, book, offset, length] entries. */
static void add_range(json_t *out, const struct lfs_fabric_info *f, const struct lfs_bad_range *b,
		      uint64_t *sig)
{
	uint64_t bs = f->book_size, book = b->book, off = b->offset, len = b->length;

	while (bs && len && off < bs && book < f->nr_books &&
	       json_array_size(out) < BAD_RANGES_MAX) {
		uint64_t n = len < bs - off ? len : bs - off;

		json_array_append_new(out,
				      json_pack("[I,I,I,I]", (json_int_t)f->ig, (json_int_t)book,
						(json_int_t)off, (json_int_t)n));
		*sig = fnv(fnv(fnv(fnv(*sig, f->ig), book), off), n);
		len -= n;
		book++;
		off = 0;
	}
}

/* The bad ranges of this node's fabrics, or NULL if the kernel cannot tell. */
static json_t *bad_ranges(struct lfs_client *drv, uint64_t *sig)
{
	struct lfs_fabric_info *fv = NULL;
	size_t nf = 0;
	json_t *out;

	if (!drv || lfsnl_fabric_list(drv, &fv, &nf))
		return NULL;
	out = json_array();
	*sig = 1469598103934665603ULL;
	for (size_t j = 0; out && j < nf; j++)
		for (uint32_t i = 0; i < fv[j].nr_bad && i < LFS_BAD_MAX; i++)
			add_range(out, &fv[j], &fv[j].bad[i], sig);
	free(fv);
	return out;
}

int lfsvol_bad_report(struct lfsvol_lib *lib, struct lfs_client *drv, struct agent_bad *ab)
{
	uint64_t sig = 0;
	json_t *ranges = lib ? bad_ranges(drv, &sig) : NULL;
	size_t n = json_array_size(ranges);
	int r;

	if (ab->passes++ % REPORT_AGAIN == 0)
		ab->sig = 0;
	if (!n || sig == ab->sig) {
		json_decref(ranges);
		return 0;
	}
	r = lfsvol_lib_call(lib, "book.bad", json_pack("{s:o}", "ranges", ranges), NULL);
	if (r)
		lfsvol_err("reporting %zu bad memory ranges to the librarian: %s", n,
			   lfsvol_lib_errmsg(lib));
	else
		lfsvol_info("reported %zu bad memory ranges to the librarian", n);
	/* a refusal is tried again on a new session or REPORT_AGAIN passes on, not each pass */
	ab->sig = sig;
	return r;
}
