// SPDX-License-Identifier: MIT
/*
 * tlsphase MODE HOST PORT NODE KEYFILE: where the time of a librarian TLS
 * session of lfsvol's own goes (bench/lvmish/bench-lfsvol.sh runs it in the
 * VM). Prints "PHASE MILLISECONDS" lines. MODE:
 *   lib        liblibrarian as lfsvol uses it: OpenSSL's initialisation
 *              (without openssl.cnf), lfs_lib_connect() (context, TCP,
 *              TLS 1.3 PSK handshake, auth), a first and a second request
 *   raw        the same session made step by step with OpenSSL: init with
 *              openssl.cnf, the SSL_CTX, TCP connect, handshake, auth and a
 *              request, each waited for
 *   pipelined  as raw, but auth and the first request sent together (what
 *              sending the first request without waiting for the auth reply
 *              would save)
 *   tcp        the network path alone: connect, send a malformed TLS record
 *              and wait for the librarian's alert: one round trip, without
 *              crypto (in the test VMs the connection also starts a relay)
 * The TLS set-up copies librarian/tlspsk.c's (TLS 1.3 only, external PSK,
 * psk_dhe_ke, no tickets).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"

static double last;
static uint8_t key[64];
static size_t keylen;
static const char *node;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void phase(const char *what)
{
	double t = now_ms();

	printf("%s %.3f\n", what, t - last);
	last = t;
}

static int use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		   SSL_SESSION **sess)
{
	static const unsigned char aes128gcm[] = { 0x13, 0x01 };
	SSL_SESSION *s = SSL_SESSION_new();

	(void)md;
	if (!s || !SSL_SESSION_set1_master_key(s, key, keylen) ||
	    !SSL_SESSION_set_cipher(s, SSL_CIPHER_find(ssl, aes128gcm)) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return 0;
	}
	*sess = s;
	*id = (const unsigned char *)node;
	*idlen = strlen(node);
	return 1;
}

/* Append one framed request {"v":1,"id":ID,"op":OP[,"node":NODE]} to buf. */
static size_t frame(char *buf, int id, const char *op)
{
	char json[256];
	uint32_t len;

	if (!strcmp(op, "auth"))
		snprintf(json, sizeof(json), "{\"v\":1,\"id\":%d,\"op\":\"auth\",\"node\":\"%s\"}", id,
			 node);
	else
		snprintf(json, sizeof(json), "{\"v\":1,\"id\":%d,\"op\":\"%s\"}", id, op);
	len = htonl((uint32_t)strlen(json));
	memcpy(buf, &len, 4);
	memcpy(buf + 4, json, strlen(json));
	return 4 + strlen(json);
}

static int reply(SSL *ssl)
{
	char buf[65536];
	uint32_t len;
	size_t got = 0;

	if (SSL_read(ssl, &len, 4) != 4)
		return -1;
	len = ntohl(len);
	while (got < len && got < sizeof(buf)) {
		int n = SSL_read(ssl, buf + got, (int)(len - got));

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static SSL *raw_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1;
	SSL_CTX *ctx;
	SSL *ssl;

	OPENSSL_init_ssl(0, NULL);
	phase("openssl_init_with_config");
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"))
		return NULL;
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	ssl = SSL_new(ctx);
	phase("ssl_ctx");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	inet_pton(AF_INET, host, &sa.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!ssl || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return NULL;
	phase("tcp_connect");
	SSL_set_psk_use_session_callback(ssl, use_psk);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1)
		return NULL;
	phase("handshake");
	return ssl;
}

static int raw(const char *host, int port, int pipelined)
{
	SSL *ssl = raw_connect(host, port);
	char buf[1024];
	size_t n;

	if (!ssl)
		return 1;
	n = frame(buf, 1, "auth");
	if (pipelined) {
		n += frame(buf + n, 2, "heartbeat");
		if (SSL_write(ssl, buf, (int)n) <= 0 || reply(ssl))
			return 1;
		phase("auth");
		if (reply(ssl))
			return 1;
		phase("first_request");
	} else {
		if (SSL_write(ssl, buf, (int)n) <= 0 || reply(ssl))
			return 1;
		phase("auth");
		n = frame(buf, 2, "heartbeat");
		if (SSL_write(ssl, buf, (int)n) <= 0 || reply(ssl))
			return 1;
		phase("first_request");
	}
	n = frame(buf, 3, "heartbeat");
	if (SSL_write(ssl, buf, (int)n) <= 0 || reply(ssl))
		return 1;
	phase("second_request");
	return 0;
}

static int tcp(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	/* a handshake record holding no handshake: the librarian's TLS layer answers an alert */
	static const char bogus[] = "\x16\x03\x01\x00\x05hello";
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	char buf[256];

	inet_pton(AF_INET, host, &sa.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return 1;
	phase("tcp_connect");
	if (write(fd, bogus, sizeof(bogus) - 1) != sizeof(bogus) - 1)
		return 1;
	if (read(fd, buf, sizeof(buf)) <= 0)
		return 1;
	phase("alert");
	close(fd);
	return 0;
}

static int lib(const char *host, const char *port, const char *keyfile)
{
	char addr[300], *msg = NULL;
	struct lfs_lib_opts o = { .addr = addr, .node = node, .key_file = keyfile };
	struct lfs_lib *l;

	snprintf(addr, sizeof(addr), "%s:%s", host, port);
	OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL);
	phase("openssl_init");
	if (lfs_lib_connect(&o, &l, &msg)) {
		fprintf(stderr, "tlsphase: %s\n", msg ? msg : "cannot connect");
		return 1;
	}
	phase("lfs_lib_connect");
	if (lfs_lib_call(l, "heartbeat", NULL, NULL))
		return 1;
	phase("first_request");
	if (lfs_lib_call(l, "heartbeat", NULL, NULL))
		return 1;
	phase("second_request");
	return 0;
}

int main(int argc, char **argv)
{
	char msg[256];
	int r;

	if (argc != 6) {
		fprintf(stderr, "usage: tlsphase lib|raw|pipelined|tcp HOST PORT NODE KEYFILE\n");
		return 2;
	}
	node = argv[4];
	last = now_ms();
	r = lfs_lib_read_key(argv[5], key, sizeof(key), msg, sizeof(msg));
	if (r < 0) {
		fprintf(stderr, "tlsphase: %s\n", msg);
		return 2;
	}
	keylen = (size_t)r;
	if (!strcmp(argv[1], "lib"))
		r = lib(argv[2], argv[3], argv[5]);
	else if (!strcmp(argv[1], "tcp"))
		r = tcp(argv[2], atoi(argv[3]));
	else
		r = raw(argv[2], atoi(argv[3]), !strcmp(argv[1], "pipelined"));
	if (r)
		ERR_print_errors_fp(stderr);
	return r;
}
