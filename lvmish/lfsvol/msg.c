// SPDX-License-Identifier: GPL-2.0
/* Messages, exit codes and tracing (msg.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"

const char *lfsvol_prog = "lfsvol";
bool lfsvol_tracing;

/* The exit code of the failure reported last; 0: none was. */
static enum lfsvol_exit failed_with;

static void vsay(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", lfsvol_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void lfsvol_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

void lfsvol_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

int lfsvol_fail(enum lfsvol_exit code, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	failed_with = code;
	return err < 0 ? err : -err;
}

int lfsvol_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	failed_with = LFSVOL_EUSAGE;
	return -EINVAL;
}

int lfsvol_exit_as(enum lfsvol_exit code, int err)
{
	failed_with = code;
	return err < 0 ? err : -err;
}

int lfsvol_exit_code(int r)
{
	if (r >= 0)
		return LFSVOL_OK;
	return failed_with ? (int)failed_with : LFSVOL_EFAIL;
}

int64_t lfsvol_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void lfsvol_trace_init(void)
{
	const char *tr = getenv("LFSVOL_TRACE");

	lfsvol_tracing = tr && *tr && strcmp(tr, "0");
}

void lfsvol_trace(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (!lfsvol_tracing)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "lfsvol: trace %lld.%03ld ms [%d] ",
		(long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, (ts.tv_nsec / 1000) % 1000,
		(int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
