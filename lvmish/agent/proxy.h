/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LFSVOL_AGENT_PROXY_H
#define LFSVOL_AGENT_PROXY_H

#include <stdbool.h>

#include "liblfsnl.h"

struct lfsvol_lib;
struct agent_state;
struct agent_copies;

/* proxy.c: STATE_DIR/agent.sock (mode 0600); one request of a client, on lib (NULL: none). */
int lfsvol_proxy_listen(const char *state_dir);
void lfsvol_proxy_unlink(const char *state_dir);
/* The copies the requests of copy.h act on, and the driver session that finds the shelves. */
struct proxy_copy {
	struct agent_copies *copies;
	struct lfs_client *drv;
};
/* agent.info, agent.scrub and agent.copy.* are answered here; agent.scrub sets *scrub. */
int lfsvol_proxy_serve_one(int fd, struct lfsvol_lib *lib, const struct agent_state *st,
			   bool *scrub, struct proxy_copy *pc);

#endif
