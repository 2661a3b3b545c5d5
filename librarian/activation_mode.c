// SPDX-License-Identifier: GPL-2.0
/*
 * Activation modes, the one place that says which may coexist:
 *
 *   rw      exclusive: no other node holds the shelf in any mode
 *   shared  writable on several nodes at once (their file users share the
 *           shelf's memory); coexists with shared and ro
 *   ro      read-only; coexists with ro and shared
 *
 * rw and shared are writers: they need rw access, and fencing treats both
 * alike (a holder of either is taken over only once it is no longer live).
 */
#include <errno.h>
#include <string.h>

#include "ops.h"

static const char *const modes[] = { "rw", "shared", "ro" };

/* 0 if mode is one of the modes, else EINVAL naming it and arg. */
int lib_mode_check(struct req *rq, const char *arg, const char *mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i]))
			return 0;
	return FAIL(
		rq, EINVAL,
		"%s '%.20s' must be \"rw\" (exclusive), \"shared\" (writable on several nodes) or \"ro\" (read-only, shared)",
		arg, mode);
}

bool lib_modes_compatible(const char *a, const char *b)
{
	return strcmp(a, "rw") && strcmp(b, "rw");
}

bool lib_mode_writes(const char *mode)
{
	return strcmp(mode, "ro") != 0;
}

enum lib_access lib_mode_access(const char *mode)
{
	return lib_mode_writes(mode) ? ACC_RW : ACC_RO;
}
