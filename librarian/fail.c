// SPDX-License-Identifier: GPL-2.0
/*
 * lib_fail() and lib_log(): how every module of the librarian tells an
 * error to its caller and a line to the log (librarian.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "librarian.h"

int lib_fail(struct lib_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		e->err = err;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -err;
}

void lib_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	flockfile(stderr); /* one line, also from the lease thread */
	fputs("librarian: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}
