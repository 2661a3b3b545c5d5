/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's parts: its progress in STATE_DIR/agent.json and the lock
 * that serialises passes (state.c), the zeroing of ZOMBIE books (scrub.c),
 * the read-only check of never-used FREE books (check.c), and the session
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

struct lfs_client;
struct lfsvol_lib;

struct agent_state {
	long long zeroed; /* books zeroed by this agent since it started */
	long long pending; /* ZOMBIE books of this node the librarian reported */
	long long heartbeats;
	time_t last_heartbeat;
	char librarian[256]; /* "connected" or why not */
	char scrub[256]; /* "idle", "zeroing N of M", or an error */
	bool daemon; /* the running agent, not a --once pass or scrub */
	/* the read-only check of FREE books of unknown content (daemon only) */
	long long checked_zero; /* found zero and marked known zero by the librarian */
	long long checked_other; /* found not zero, or not marked (changed meanwhile) */
	long long checked_skipped; /* passed over in the last sweep: not readable here */
	char check[320]; /* "idle ...", "reading N books ...", or an error */
	bool sweeping; /* a sweep is under way */
	json_t *after; /* [ig, book]: the sweep goes on after this book */
	int64_t next_sweep; /* ms (lfsvol_now_ms); 0: at once */
	uint64_t fabric_sig; /* attached devices at the last pass */
	pid_t job_pid; /* the child reading a batch, 0 if none */
	int job_fd; /* its result pipe, -1 if none */
	json_t *job_books; /* the batch, as listed */
	char job_token[64];
};

/* Set by SIGTERM and SIGINT: passes and scrubs end early. */
extern volatile sig_atomic_t lfsvol_agent_stop;

/* state.c: write agent.json (a pass beside the running daemon leaves the daemon's in place). */
void lfsvol_state_write(const struct lfsvol_conf *conf, const struct agent_state *st);
/* Take STATE_DIR/agent.lock (waits); returns its descriptor, or reports a failure. */
int lfsvol_state_lock(const struct lfsvol_conf *conf);

/* scrub.c: zero this node's ZOMBIE books, then tell the librarian; verbose: a line per batch. */
int lfsvol_scrub_pass(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		      struct lfs_client *drv, struct agent_state *st, bool verbose);

/* check.c: the next batch of the sweep, if due; its result; the end. */
void lfsvol_check_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			struct lfs_client *drv, struct agent_state *st);
void lfsvol_check_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			  struct agent_state *st);
void lfsvol_check_stop(struct agent_state *st);

/* proxy.c: STATE_DIR/agent.sock (mode 0600); one request of a client, on lib (NULL: none). */
int lfsvol_proxy_listen(const char *state_dir);
void lfsvol_proxy_unlink(const char *state_dir);
int lfsvol_proxy_serve_one(int fd, struct lfsvol_lib *lib);

#endif /* LFSVOL_AGENT_H */
