/* SPDX-License-Identifier: GPL-2.0 */
/* TLS 1.3 external-PSK plumbing shared by the client library and the daemon. */
#ifndef LFS_TLSPSK_H
#define LFS_TLSPSK_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

SSL_CTX *lfs_tls_ctx(int server);
SSL_SESSION *lfs_psk_session(SSL *ssl, const uint8_t *key, size_t keylen);

static inline int isxdigit_c(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

#endif
