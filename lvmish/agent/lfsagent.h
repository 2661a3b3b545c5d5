/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent as lfsvol's commands see it: `lfsvol agent' itself, and
 * the zeroing that `lfsvol scrub' does in its own process when no agent
 * runs. Everything else of the agent (agent.h, upserver.h) is its own.
 */
#ifndef LFSVOL_LFSAGENT_H
#define LFSVOL_LFSAGENT_H

#include <signal.h>
#include <stdbool.h>

#include "lfsvol.h"

struct lfs_client;

/* `lfsvol agent [--once]' (agent.c) */
lfsvol_cmd_fn cmd_agent;

/*
 * The ZOMBIE runs whose counts agent.json keeps: a scrub that asked for run
 * k may read agent.json only after later runs ended (a heartbeat a moment
 * old starts one that finds nothing).
 */
#define AGENT_RECENT_RUNS 16

/* Set by SIGTERM and SIGINT: passes and scrubs end early. */
extern volatile sig_atomic_t lfsvol_agent_stop;

/*
 * zero.c: with no agent running, zero this node's ZOMBIE books in this
 * process under the agent's lock (with free_too first sending its
 * never-used FREE books to be zeroed), with progress lines; the books
 * zeroed and, of them, those never scrubbed before.
 */
int lfsvol_agent_scrub(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
		       struct lfs_client *drv, bool free_too, long long *zeroed, long long *fresh);

#endif /* LFSVOL_LFSAGENT_H */
