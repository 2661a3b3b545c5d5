/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the agent is doing, as agent.json and `lfsvol status' show it: its
 * passes' counts and progress (state.c writes it; agent.c, zero.c and
 * check.c keep it up to date).
 */
#ifndef LFSVOL_STATE_H
#define LFSVOL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "conf.h"
#include "lfsagent.h"

/* A zeroing or sweep under way: books done of total, and since when. */
struct agent_progress {
	char what[32]; /* "ZOMBIE books", "never-used books"; empty: none */
	long long done, total;
	uint64_t bytes; /* of the books done */
	int64_t started_ms, updated_ms;
};

struct agent_state {
	long long zeroed; /* books zeroed by this agent since it started */
	long long pending; /* ZOMBIE books of this node the librarian reported */
	char librarian[256]; /* "connected" or why not */
	char scrub[256]; /* "idle", "zeroing N of M", or an error */
	bool daemon; /* the running agent, not a --once pass or scrub */
	struct agent_progress zeroing; /* the ZOMBIE run under way */
	long long runs; /* ZOMBIE runs ended (agent.scrub waits for the next) */
	long long run_zeroed; /* books zeroed in the run under way */
	/* ... in run k (1, 2, ...) at [k % AGENT_RECENT_RUNS], for the last runs */
	long long recent_zeroed[AGENT_RECENT_RUNS];
	/* the sweep of FREE books of unknown content (daemon only) */
	long long checked_zero; /* found zero and marked known zero by the librarian */
	long long checked_other; /* found not zero and not zeroed, or not marked (changed meanwhile) */
	long long checked_skipped; /* passed over in the last sweep: not readable here */
	long long zeroed_free; /* zeroed in the background and marked known zero */
	char check[320]; /* "idle ...", "reading N books ...", or an error */
	struct agent_progress sweep; /* the sweep under way */
	bool sweeping; /* a sweep is under way */
	json_t *after; /* [ig, book]: the sweep goes on after this book */
	int64_t next_sweep; /* ms (lfsvol_now_ms); 0: at once */
	uint64_t fabric_sig; /* attached devices at the last pass */
	json_t *sweep_books; /* the batch being read, as listed */
	json_t *copies; /* the copies of shelves (copyjob.c), as agent.json shows them */
	char sweep_token[64];
};

/* state.c: write agent.json (a pass beside the running daemon leaves the daemon's in place). */
void lfsvol_state_write(const struct lfsvol_conf *conf, const struct agent_state *st);
/* Does a running agent daemon other than this process own agent.json? */
bool lfsvol_state_daemon_runs(const struct lfsvol_conf *conf);
/* Take STATE_DIR/agent.lock (waits unless nowait: then -EWOULDBLOCK); its descriptor. */
int lfsvol_state_lock(const struct lfsvol_conf *conf, bool nowait);
/* "12 of 30 books (768 MiB of 1.9 GiB), 45 MiB/s, 25 s left" */
void lfsvol_progress_text(const struct agent_progress *p, uint64_t book_size, char *buf,
			  size_t len);
json_t *lfsvol_progress_json(const struct agent_progress *p);
void lfsvol_progress_start(struct agent_progress *p, const char *what, long long total);
void lfsvol_progress_add(struct agent_progress *p, long long books, uint64_t bytes);

#endif /* LFSVOL_STATE_H */
