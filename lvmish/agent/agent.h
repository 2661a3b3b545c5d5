/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's parts: its progress in STATE_DIR/agent.json and the lock
 * that serialises passes (state.c), the renewal thread that keeps the
 * node's lease (renew.c), the work on books in a child process (job.c),
 * the zeroing of ZOMBIE books (zero.c), the read-only check and the
 * background zeroing of never-used FREE books (check.c), and the session
 * it lends on STATE_DIR/agent.sock (proxy.c). agent.c runs them.
 */
#ifndef LFSVOL_AGENT_H
#define LFSVOL_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>

#include "conf.h"
#include "lfsagent.h"
#include "liblfsnl.h"

struct lfsvol_lib;

/* What a job does to each book (job.c): read it, zero it (if not read as zeroes). */
enum { LFSVOL_JOB_CHECK = 1, LFSVOL_JOB_ZERO = 2 };
/* What became of a book. */
enum lfsvol_book_result {
	LFSVOL_BOOK_UNTOUCHED = 0, /* not zero and not zeroed, or held by a shelf here */
	LFSVOL_BOOK_ZERO = 1, /* read as zeroes; nothing written */
	LFSVOL_BOOK_ZEROED = 2, /* zeroed and flushed */
	LFSVOL_BOOK_REPORTED = 3, /* zeroed, and the librarian told so */
	LFSVOL_BOOK_PENDING = 0xff, /* not done yet */
};

/* A child process at work on books (job.c). */
struct lfsvol_job {
	pid_t pid; /* 0 once reaped */
	int fd; /* its results, non-blocking; -1 once it ended */
	struct lfs_book *books;
	uint8_t *result; /* enum lfsvol_book_result per book */
	size_t n, done, zeroed;
	uint64_t book_size;
	int status; /* 0, or -errno: why it stopped */
	bool finished;
	int64_t started_ms, reported_ms;
	uint8_t part[8]; /* a record read in part */
	size_t plen;
};

/* Start the child on n books with LFSVOL_JOB_* flags each; -errno if it cannot. */
int lfsvol_job_start(struct lfsvol_job *j, const struct lfs_book *books, const uint8_t *flags,
		     size_t n, uint64_t book_size);
/* Take what the child wrote: 1 once it has finished (j->status), 0 while it works. */
int lfsvol_job_read(struct lfsvol_job *j);
/* Stop the child if it runs, and free the job. */
void lfsvol_job_free(struct lfsvol_job *j);
/* The child itself: `lfsvol agent --job'. */
int lfsvol_job_child(void);

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

/*
 * renew.c: the renewal thread, with its own librarian and driver sessions.
 * lfsvol_renew_start() starts it; lfsvol_renew_zombies() gives the ZOMBIE
 * count of the last heartbeat reply (-1 before any) and its interval.
 */
struct lfsvol_renewer;
int lfsvol_renew_start(const struct lfsvol_conf *conf, struct lfsvol_renewer **out);
void lfsvol_renew_stop(struct lfsvol_renewer *rn);
long long lfsvol_renew_zombies(struct lfsvol_renewer *rn, int *interval);

/*
 * zero.c: zero this node's ZOMBIE books, then tell the librarian; verbose:
 * progress lines. In the caller's process (agent --once, lfsvol_agent_scrub).
 */
int lfsvol_scrub_pass(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct lfs_client *drv, struct agent_state *st, bool verbose);
/*
 * The daemon's ZOMBIE zeroing, in a child: start a batch if there is none
 * (zombie.list), report what the child zeroed (zombie.zeroed) as it goes.
 * lfsvol_zero_start returns 1 if a batch started, 0 if none is due.
 */
int lfsvol_zero_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct agent_state *st, struct lfsvol_job *job);
/* The child's output: reports progress; 1 once the batch is over (the job freed). */
int lfsvol_zero_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			struct agent_state *st, struct lfsvol_job *job);

/*
 * check.c: the next batch of the sweep of never-used FREE books, if due,
 * read (and zeroed on labelled devices) by a child; its result; the end.
 */
int lfsvol_check_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, struct agent_state *st, struct lfsvol_job *job);
int lfsvol_check_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			 struct agent_state *st, struct lfsvol_job *job);
void lfsvol_check_stop(struct agent_state *st);

/* proxy.c: STATE_DIR/agent.sock (mode 0600); one request of a client, on lib (NULL: none). */
int lfsvol_proxy_listen(const char *state_dir);
void lfsvol_proxy_unlink(const char *state_dir);
/* agent.info and agent.scrub are answered here; agent.scrub sets *scrub. */
int lfsvol_proxy_serve_one(int fd, struct lfsvol_lib *lib, const struct agent_state *st,
			   bool *scrub);

#endif /* LFSVOL_AGENT_H */
