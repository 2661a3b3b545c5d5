/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bottom of lfsvol: messages, exit codes and tracing. Every other unit
 * may use it; it uses none of them.
 *
 * The return convention (systemd's): helpers return 0 or a negative errno.
 * A helper that reports a failure does it once, with context, through
 * lfsvol_fail(), which also records the failure's exit code; a command
 * turns its result into the exit status with lfsvol_exit_code().
 */
#ifndef LFSVOL_MSG_H
#define LFSVOL_MSG_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes (documented in lfsvol(8)). */
enum lfsvol_exit {
	LFSVOL_OK = 0,
	LFSVOL_EFAIL = 1, /* anything not listed below */
	LFSVOL_EUSAGE = 2, /* bad option, SIZE, policy or name */
	LFSVOL_ECONFIG = 3, /* lfs.conf unreadable or invalid */
	LFSVOL_ELIBRARIAN = 4, /* librarian unreachable, timed out or refused */
	LFSVOL_EDRIVER = 5, /* lfs.ko not loaded or the kernel refused */
	LFSVOL_ENOENT = 6, /* no such shelf */
	LFSVOL_EREFUSED = 7, /* guard: filesystem signature, mounted, busy */
	LFSVOL_EPERM = 8, /* needs root (CAP_SYS_ADMIN) */
};

#define __printf(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

extern const char *lfsvol_prog;

/*
 * "lfsvol: ..." on stderr, and a line on stdout (on stderr under --json:
 * stdout carries one JSON document then, result.h).
 */
void lfsvol_err(const char *fmt, ...) __printf(1, 2);
void lfsvol_info(const char *fmt, ...) __printf(1, 2);
/*
 * --json (result.h): on, every error line is kept for the error object.
 * The lines kept, oldest first, NULL-terminated; NULL if none.
 */
extern bool lfsvol_json;
void lfsvol_json_on(void);
const char *const *lfsvol_err_lines(void);
/* The line of the failure reported last (lfsvol_fail, lfsvol_usage); NULL if none. */
const char *lfsvol_fail_line(void);
/*
 * Report a failure: print "lfsvol: ...", remember code as the exit code of
 * the command, and return -|err| for the caller to pass up.
 */
int lfsvol_fail(enum lfsvol_exit code, int err, const char *fmt, ...) __printf(3, 4);
/* A usage error (exit code 2): -EINVAL. */
int lfsvol_usage(const char *fmt, ...) __printf(1, 2);
/* Record code for a failure reported already (a summary of several); returns -|err|. */
int lfsvol_exit_as(enum lfsvol_exit code, int err);
/* A command's result as its exit status: 0, or the code of the failure reported last. */
int lfsvol_exit_code(int r);

int64_t lfsvol_now_ms(void);
/* LFSVOL_TRACE=1: timestamped phases on stderr. */
extern bool lfsvol_tracing;
void lfsvol_trace_init(void);
void lfsvol_trace(const char *fmt, ...) __printf(1, 2);

#endif /* LFSVOL_MSG_H */
