/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Commands run by the node agent for the lfsvol front end (front.c, run.c).
 * Kept free of any library: front.c includes it and links only libc.
 */
#ifndef LFSVOL_RUN_H
#define LFSVOL_RUN_H

#include <stdint.h>

#define LFSVOL_RUN_SOCKET "/run/lfs/run.sock"
#define LFSVOL_RUN_MAGIC "LFSRUN1"	/* 8 bytes with its NUL */
#define LFSVOL_RUN_MAX (1U << 20)	/* working directory, arguments, environment */
#define LFSVOL_RUN_MAX_ARGS 4096

#ifndef LFSVOL_CORE_PATH
#define LFSVOL_CORE_PATH "/usr/local/libexec/lfs/lfsvol-core"
#endif

/* All counts big-endian; followed by len bytes: cwd, argv[], envp[], each NUL-ended. */
struct lfsvol_run_hdr {
	char magic[8];
	uint32_t argc;
	uint32_t envc;
	uint32_t len;
};

/*
 * The exit status word: a command that returned sends its code; one the
 * agent reaps after a signal ended it sends LFSVOL_RUN_SIGNALED | signal,
 * so that the front end can say so (the shell's 128 + N alone does not).
 */
#define LFSVOL_RUN_SIGNALED 0x10000U

#endif
