// SPDX-License-Identifier: GPL-2.0
/*
 * The command's side of the agent's copy (copy.h): the agent moves the
 * bytes in a process of its own; `lfsvol copy' (and `copy --wait') asks
 * for the copy's record on agent.sock until it ends, more and more rarely
 * up to every FOLLOW_MAX_MS, and draws the progress line on a terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "copy_io.h"
#include "msg.h"
#include "session.h"

#define FOLLOW_FIRST_MS 10
#define FOLLOW_MAX_MS 250

static json_int_t num(json_t *rec, const char *key)
{
	return json_integer_value(json_object_get(rec, key));
}

static void line(json_t *rec, bool last)
{
	lfsvol_copy_line(json_string_value(json_object_get(rec, "source")) ?: "?",
			 (uint64_t)num(rec, "bytes"), (uint64_t)num(rec, "total"),
			 (int64_t)(json_real_value(json_object_get(rec, "seconds")) * 1000), last);
}

/* A wait that a signal cuts short (the handlers are installed without SA_RESTART). */
static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int lfsvol_copy_ask(struct lfsvol_lib *lib, const char *what, const char *op, const char *dst,
		    json_t **rec)
{
	int r = lfsvol_lib_call(lib, op, json_pack("{s:s}", "dst", dst), rec);

	if (r)
		return lfsvol_fail(r == -ENOENT ? LFSVOL_ENOENT : LFSVOL_EFAIL, r,
				   "%s: node agent: %s", what, lfsvol_lib_errmsg(lib));
	return 0;
}

/* The copy ended other than done: why, from its record. */
static int ended(const char *what, json_t *rec)
{
	const char *state = json_string_value(json_object_get(rec, "state")) ?: "?";
	const char *err = json_string_value(json_object_get(rec, "error"));

	if (!strcmp(state, "done"))
		return 0;
	return lfsvol_fail(LFSVOL_EFAIL, -EIO, "%s: the node agent's copy %s%s%s", what, state,
			   err ? ": " : "", err ?: "");
}

int lfsvol_copy_follow(struct lfsvol_lib *lib, const char *what, const char *dst,
		       volatile sig_atomic_t *stop, bool cancel, json_t **rec)
{
	bool tty = isatty(STDERR_FILENO), drawn = false;
	int ms = FOLLOW_FIRST_MS, r;

	*rec = NULL;
	for (;;) {
		json_decref(*rec);
		*rec = NULL;
		if (*stop) {
			if (cancel && !lfsvol_copy_ask(lib, what, LFSVOL_COPY_OP_CANCEL, dst, rec))
				lfsvol_err("%s: stopped the node agent's copy", what);
			if (drawn)
				fputc('\n', stderr);
			return lfsvol_fail(LFSVOL_EFAIL, -EINTR, "%s: interrupted by a signal",
					   what);
		}
		r = lfsvol_copy_ask(lib, what, LFSVOL_COPY_OP_GET, dst, rec);
		if (r)
			return r;
		if (strcmp(json_string_value(json_object_get(*rec, "state")) ?: "", "running"))
			break;
		if (tty) {
			line(*rec, false);
			drawn = true;
		}
		nap(ms);
		ms = ms * 2 > FOLLOW_MAX_MS ? FOLLOW_MAX_MS : ms * 2;
	}
	if (tty && (drawn || num(*rec, "bytes")))
		line(*rec, true);
	return ended(what, *rec);
}
