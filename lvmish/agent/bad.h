/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LFSVOL_AGENT_BAD_H
#define LFSVOL_AGENT_BAD_H

#include <stdint.h>

#include "liblfsnl.h"

struct lfsvol_lib;

/*
 * bad.c: this node's fabrics' bad ranges (FABRIC_GET) reported with
 * book.bad, unless the librarian heard this very set in this session
 * (sig is 0 for a new session: agent.c).
 */
struct agent_bad {
	uint64_t sig; /* of the set last reported */
	unsigned int passes;
};
int lfsvol_bad_report(struct lfsvol_lib *lib, struct lfs_client *drv, struct agent_bad *ab);

#endif
