// SPDX-License-Identifier: GPL-2.0
/*
 * The librarian's framing on the agent's socket: a 4-byte big-endian length
 * and one JSON object, each way, every wait bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "session.h"

static int wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r = poll(&p, 1, ms);

	if (r == 0)
		return -ETIMEDOUT;
	return r < 0 ? -errno : 0;
}

static int io_all(int fd, void *buf, size_t len, bool wr, int ms)
{
	char *p = buf;

	while (len) {
		ssize_t n;
		int r = wait_fd(fd, wr ? POLLOUT : POLLIN, ms);

		if (r == -EINTR)
			continue;
		if (r)
			return r;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int lfsvol_frame_send(int fd, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len;
	char *buf;
	uint32_t be;
	int r;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	/* one write: one segment, nothing for the peer to wait for */
	buf = malloc(4 + len);
	if (!buf) {
		free(s);
		return -ENOMEM;
	}
	be = htonl((uint32_t)len);
	memcpy(buf, &be, 4);
	memcpy(buf + 4, s, len);
	r = io_all(fd, buf, 4 + len, true, LFSVOL_SOCK_TIMEOUT_MS);
	free(buf);
	free(s);
	return r;
}

int lfsvol_frame_recv(int fd, json_t **msg, int ms)
{
	uint32_t len;
	char *buf;
	int r;

	*msg = NULL;
	r = io_all(fd, &len, sizeof(len), false, ms);
	if (r)
		return r;
	len = ntohl(len);
	if (len > LFSVOL_FRAME_MAX)
		return -EMSGSIZE;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	r = io_all(fd, buf, len, false, LFSVOL_SOCK_TIMEOUT_MS);
	if (!r) {
		*msg = json_loadb(buf, len, 0, NULL);
		if (!json_is_object(*msg)) {
			json_decref(*msg);
			*msg = NULL;
			r = -EBADMSG;
		}
	}
	free(buf);
	return r;
}
