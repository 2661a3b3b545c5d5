// SPDX-License-Identifier: GPL-2.0
/*
 * TLS 1.3 only, external pre-shared keys (RFC 8446 section 2.2) with (EC)DHE
 * key exchange (psk_dhe_ke): mutual authentication through the PSK binder,
 * forward secrecy, no certificates, no secret on the wire. No session
 * tickets and no early data, so a recorded handshake cannot be replayed.
 */
#include <openssl/ssl.h>

#include "tlspsk.h"

static const unsigned char tls13_aes128gcmsha256_id[] = { 0x13, 0x01 };

SSL_CTX *lfs_tls_ctx(int server)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	if (!ctx)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256")) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_max_early_data(ctx, 0);
	if (server)
		SSL_CTX_set_num_tickets(ctx, 0);
	return ctx;
}

SSL_SESSION *lfs_psk_session(SSL *ssl, const uint8_t *key, size_t keylen)
{
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, tls13_aes128gcmsha256_id);
	SSL_SESSION *s;

	if (!cipher)
		return NULL;
	s = SSL_SESSION_new();
	if (!s)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, key, keylen) || !SSL_SESSION_set_cipher(s, cipher) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}
