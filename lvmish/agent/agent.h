/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's parts: its progress in STATE_DIR/agent.json and the lock
 * that serialises passes (state.c), the renewal thread that keeps the
 * node's lease (renew.c), the work on books in a child process (job.c),
 * the zeroing of ZOMBIE books (zero.c), the read-only check and the
 * background zeroing of never-used FREE books (check.c), the copies of
 * shelves (copyjob.c), the session it lends on STATE_DIR/agent.sock
 * (proxy.h) and the reports of bad memory (bad.h). agent.c runs them.
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

#include "copyjob.h"
#include "job.h"
#include "state.h"

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

#endif /* LFSVOL_AGENT_H */
