// SPDX-License-Identifier: MIT
/*
 * lfsctl --json: one JSON document on stdout. The listings (list, fabric,
 * lease, check) print their own on success; a command that changes
 * something prints {"command": NAME, ...what it did} on success; every
 * command prints {"command": NAME, "error": {"code": EXIT, "errno": NAME
 * or null, "message": LINE}} on failure, with the exit status unchanged.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfsctl.h"

bool lfsctl_json;
static json_t *result;
static char *last_err;
static int last_errno;

void lfsctl_err(const char *fmt, ...)
{
	va_list ap, keep;
	char *line;
	size_t n;

	va_start(ap, fmt);
	if (lfsctl_json) {
		va_copy(keep, ap);
		if (vasprintf(&line, fmt, keep) >= 0) {
			n = strlen(line);
			if (n && line[n - 1] == '\n')
				line[n - 1] = '\0';
			free(last_err);
			last_err = line;
		}
		va_end(keep);
	}
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void lfsctl_errno_is(int err)
{
	last_errno = err < 0 ? -err : err;
}

void lfsctl_result(const char *key, json_t *v)
{
	if (!lfsctl_json) {
		json_decref(v);
		return;
	}
	if (!result)
		result = json_object();
	json_object_set_new(result, key, v ? v : json_null());
}

void lfsctl_print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

void lfsctl_json_done(const char *cmd, int status, bool listing)
{
	const char *en = last_errno ? strerrorname_np(last_errno) : NULL;
	json_t *doc;

	if (!lfsctl_json || (listing && !status))
		return;
	doc = json_pack("{s:s}", "command", cmd);
	if (result)
		json_object_update(doc, result);
	if (status)
		json_object_set_new(doc, "error",
				    json_pack("{s:i,s:o,s:s}", "code", status, "errno",
					      en ? json_string(en) : json_null(), "message",
					      last_err		   ? last_err :
					      status == EXIT_USAGE ? "invalid arguments" :
								     "failed"));
	lfsctl_print_json(doc);
	json_decref(doc);
	json_decref(result);
	result = NULL;
}
