// SPDX-License-Identifier: GPL-2.0
/* lib_fail(), the error helper of every module of the librarian (librarian.h). */
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
