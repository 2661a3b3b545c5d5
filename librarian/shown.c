// SPDX-License-Identifier: GPL-2.0
/*
 * A printable excerpt of a client-supplied string, for messages and logs:
 * the one helper the request checks (request.c), the access lists
 * (access.c), the dispatcher and the connections share, below all of them.
 */
#include <ctype.h>
#include <stdio.h>

#include "librarian.h"

const char *lib_shown(const char *v, char *buf, size_t len)
{
	size_t i, j = 0;

	for (i = 0; v[i] && j + 5 < len; i++) {
		unsigned char ch = v[i];

		if (isprint(ch))
			buf[j++] = ch;
		else
			j += snprintf(buf + j, len - j, "\\x%02x", ch);
	}
	if (v[i] && j + 4 < len)
		j += snprintf(buf + j, len - j, "...");
	buf[j] = 0;
	return buf;
}
