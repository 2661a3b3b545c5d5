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

bool lfsvol_json;

/* The exit code of the failure reported last; 0: none was. */
static enum lfsvol_exit failed_with;

/* Under --json, the error lines for the error object (a bounded number: the last ones). */
#define ERR_LINES 16
static char *err_lines[ERR_LINES + 1];
static int n_err_lines;
static char *fail_line; /* the failure reported last (a hint may follow it) */

void lfsvol_json_on(void)
{
	lfsvol_json = true;
}

const char *const *lfsvol_err_lines(void)
{
	return n_err_lines ? (const char *const *)err_lines : NULL;
}

const char *lfsvol_fail_line(void)
{
	return fail_line;
}

static void keep_fail_line(void)
{
	if (!lfsvol_json || !n_err_lines)
		return;
	free(fail_line);
	fail_line = strdup(err_lines[n_err_lines - 1]);
}

static void keep_line(const char *fmt, va_list ap)
{
	char *line;

	if (vasprintf(&line, fmt, ap) < 0)
		return;
	if (n_err_lines == ERR_LINES) {
		free(err_lines[0]);
		memmove(err_lines, err_lines + 1, (ERR_LINES - 1) * sizeof(*err_lines));
		n_err_lines--;
	}
	err_lines[n_err_lines++] = line;
}

static void vsay(const char *fmt, va_list ap)
{
	va_list keep;

	if (lfsvol_json) {
		va_copy(keep, ap);
		keep_line(fmt, keep);
		va_end(keep);
	}
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
	FILE *f = lfsvol_json ? stderr : stdout;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

int lfsvol_fail(enum lfsvol_exit code, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	keep_fail_line();
	failed_with = code;
	return err < 0 ? err : -err;
}

int lfsvol_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	keep_fail_line();
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
