// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: librarian addresses and lists of them, checked before any
 * connection (lfs.conf's `librarian', docs/HA.md "Nodes follow the
 * leader"). Every error names the bad address.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "lfs_librarian.h"

static int bad(char *msg, size_t len, const char *fmt, const char *what)
{
	snprintf(msg, len, fmt, what);
	return -EINVAL;
}

/* One address: HOST:PORT, [V6]:PORT or unix:/PATH; 0 or -EINVAL with msg. */
static int addr_check(const char *a, char *msg, size_t len)
{
	const char *colon = strrchr(a, ':');
	char *end;
	long port;

	if (!strncmp(a, "unix:", 5)) {
		if (a[5] != '/' || strlen(a + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return bad(
				msg, len,
				"librarian address '%s': a unix socket is unix:/ABSOLUTE/PATH (at most 107 bytes)",
				a);
		return 0;
	}
	if (!colon || colon == a || strpbrk(a, " \t"))
		return bad(msg, len, "librarian address '%s' is not HOST:PORT or unix:/PATH", a);
	if (a[0] == '[' && colon[-1] != ']')
		return bad(msg, len, "librarian address '%s': an IPv6 address is [ADDR]:PORT", a);
	if (a[0] != '[' && memchr(a, ':', (size_t)(colon - a)))
		return bad(msg, len, "librarian address '%s': an IPv6 address is [ADDR]:PORT", a);
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return bad(msg, len, "librarian address '%s': the port must be 1 to 65535", a);
	return 0;
}

int lfs_lib_addr_split(const char *list, char out[][LFS_ADDR_MAX], int max, char *msg,
		       size_t msglen)
{
	const char *p = list ? list : "";
	int n = 0;

	for (;;) {
		size_t k = strcspn(p, ","), b = strspn(p, " \t");
		size_t e = k;

		while (e > b && (p[e - 1] == ' ' || p[e - 1] == '\t'))
			e--;
		if (e == b)
			return bad(msg, msglen, "librarian address list '%s' has an empty address",
				   list ? list : "");
		if (n == max)
			return bad(msg, msglen,
				   "librarian address list '%s' has too many addresses", list);
		if (e - b >= LFS_ADDR_MAX)
			return bad(msg, msglen,
				   "librarian address list '%s': an address is too long", list);
		memcpy(out[n], p + b, e - b);
		out[n][e - b] = 0;
		if (addr_check(out[n], msg, msglen))
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (!strcmp(out[i], out[n]))
				return bad(msg, msglen, "librarian address '%s' is listed twice",
					   out[n]);
		n++;
		if (!p[k])
			return n;
		p += k + 1;
	}
}

int lfs_lib_addr_index(const char *list, const char *addr)
{
	char a[LFS_ADDR_LIST_MAX][LFS_ADDR_MAX], msg[8];
	int n = lfs_lib_addr_split(list, a, LFS_ADDR_LIST_MAX, msg, sizeof(msg));

	for (int i = 0; i < n; i++)
		if (!strcmp(a[i], addr))
			return i;
	return -1;
}
