/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's copies of shelves (copyjob.c): each one a child process
 * (`lfsvol agent --copy') that moves the bytes of one active shelf here
 * into another, started and followed by `lfsvol copy' over agent.sock
 * (the operations are copy.h's), and shown in agent.json ("copies").
 */
#ifndef LFSVOL_COPYJOB_H
#define LFSVOL_COPYJOB_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "liblfsnl.h"

/* copies kept at once, running or finished and not yet forgotten */
#define AGENT_COPIES 8
/* what the child writes to its pipe (done after each chunk, then the end) */
#define COPY_RECORD_SIZE 256

enum agent_copy_state { COPY_RUNNING, COPY_DONE, COPY_FAILED, COPY_CANCELLED };

struct agent_copy {
	bool used, src_ours;
	char src[LFS_NAME_MAX + 1], dst[LFS_NAME_MAX + 1];
	char sdisk[32], ddisk[32];
	enum agent_copy_state state;
	uint64_t bytes, done, max_rate;
	int err; /* -errno of a failed copy */
	char msg[COPY_RECORD_SIZE]; /* and what the child said */
	pid_t pid; /* 0 once reaped */
	int fd; /* the child's progress, -1 once it ended */
	int64_t started_ms, updated_ms;
	uint8_t part[COPY_RECORD_SIZE]; /* a record read in part */
	size_t plen;
};

struct agent_copies {
	struct agent_copy v[AGENT_COPIES];
	bool changed; /* agent.json is to be written */
	int64_t written_ms;
};

void lfsvol_copies_init(struct agent_copies *cs);
/*
 * An agent.sock request of the copy operations (op starts with
 * "agent.copy."): the result, or NULL with *err (-errno) and msg set.
 */
json_t *lfsvol_copy_answer(struct agent_copies *cs, struct lfs_client *drv, const char *op,
			   json_t *args, int *err, char *msg, size_t len);
/* The children's fds for poll(), AGENT_COPIES entries (-1: none). */
void lfsvol_copies_fds(const struct agent_copies *cs, struct pollfd *p);
/* What poll() found on them. */
void lfsvol_copies_collect(struct agent_copies *cs, const struct pollfd *p);
/* Is agent.json due (a copy started or ended, or half a second of progress)? Clears it. */
bool lfsvol_copies_due(struct agent_copies *cs);
/* The records, for agent.json's "copies". */
json_t *lfsvol_copies_json(const struct agent_copies *cs);
/* The agent stops: every child is stopped (their DST stay marked incomplete). */
void lfsvol_copies_stop(struct agent_copies *cs);
/* The child: `lfsvol agent --copy SRC DST SRC_DISK DST_DISK BYTES MAX_RATE'. */
int lfsvol_copy_child(int argc, char **argv);

#endif /* LFSVOL_COPYJOB_H */
