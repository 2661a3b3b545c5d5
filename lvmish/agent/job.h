/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's work on books in a child process of its own (job.c): what
 * the agent's passes (zero.c, check.c) start, read and stop.
 */
#ifndef LFSVOL_JOB_H
#define LFSVOL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "liblfsnl.h"

/* What a job does to each book (job.c): read it, zero it (if not read as zeroes). */
enum { LFSVOL_JOB_CHECK = 1, LFSVOL_JOB_ZERO = 2 };
/* What became of a book. */
enum lfsvol_book_result {
	LFSVOL_BOOK_UNTOUCHED = 0, /* not zero and not zeroed, or held by a shelf here */
	LFSVOL_BOOK_ZERO = 1, /* read as zeroes; nothing written */
	LFSVOL_BOOK_ZEROED = 2, /* zeroed and flushed */
	LFSVOL_BOOK_REPORTED = 3, /* zeroed, and the librarian told so */
	/*
	 * BOOK_ZERO refused it with EIO: it holds memory the kernel reports
	 * bad (the fabric's bad ranges, `lfsctl fabric'). Left as it was: a
	 * ZOMBIE book stays ZOMBIE, so it is never handed out again.
	 */
	LFSVOL_BOOK_BAD = 4,
	LFSVOL_BOOK_PENDING = 0xff, /* not done yet */
};

/* A child process at work on books (job.c). */
struct lfsvol_job {
	pid_t pid; /* 0 once reaped */
	int fd; /* its results, non-blocking; -1 once it ended */
	struct lfs_book *books;
	uint8_t *result; /* enum lfsvol_book_result per book */
	size_t n, done, zeroed, bad;
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

#endif /* LFSVOL_JOB_H */
