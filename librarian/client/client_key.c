// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: the node's pre-shared key, read from its key file (one
 * line of 64 to 128 hex digits, mode 0600 or stricter).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lfs_librarian.h"
#include "tlspsk.h"
int lfs_lib_read_key(const char *path, uint8_t *key, size_t max, char *msg, size_t msglen)
{
	char buf[300];
	struct stat sb;
	ssize_t n;
	size_t len, hex = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = errno;
		snprintf(msg, msglen, "key file '%s': %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(msg, msglen, "key file '%s' is not a regular file", path);
		return -EINVAL;
	}
	if (sb.st_mode & 0077) {
		close(fd);
		snprintf(
			msg, msglen,
			"key file '%s' is accessible by group or others (mode %04o); run chmod 600 on it",
			path, (unsigned int)(sb.st_mode & 07777));
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		err = errno;
		snprintf(msg, msglen, "key file '%s': %s", path, strerror(err));
		return -err;
	}
	buf[n] = 0;
	len = strcspn(buf, " \t\r\n");
	if (buf[len + strspn(buf + len, " \t\r\n")]) {
		snprintf(msg, msglen, "key file '%s' must hold one line of hex digits", path);
		return -EINVAL;
	}
	buf[len] = 0;
	if (len < 64 || len > 2 * max || len > 128 || len % 2) {
		snprintf(
			msg, msglen,
			"key file '%s' holds %zu hex digits; a key is 64 to 128 (32-64 bytes, e.g. `librarian genkey`)",
			path, len);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i += 2) {
		unsigned int b;
		char pair[3] = { buf[i], buf[i + 1], 0 };

		if (!isxdigit_c(pair[0]) || !isxdigit_c(pair[1]) || sscanf(pair, "%2x", &b) != 1) {
			snprintf(msg, msglen, "key file '%s': '%s' at position %zu is not hex",
				 path, pair, i + 1);
			return -EINVAL;
		}
		key[hex++] = b;
	}
	return hex;
}
