// SPDX-License-Identifier: GPL-2.0
/*
 * lib-raw: send hand-made (often bad) protocol input to the librarian and
 * print whatever comes back, one JSON reply per line. Test helper.
 *
 *   lib-raw ADDR send TEXT...        each TEXT as one frame (no auth first)
 *   lib-raw ADDR auth-send TEXT...   "auth" first, then each TEXT as a frame
 *   lib-raw ADDR lie LEN TEXT        frame header says LEN, body is TEXT, then half-close
 *   lib-raw ADDR bytes HEX           raw bytes, then half-close
 *   lib-raw ADDR hold N SECONDS      open N idle connections, print how many stayed open
 *   lib-raw ADDR record NODE KEY FILE TEXT   TLS session doing auth + TEXT; client bytes -> FILE
 *   lib-raw ADDR replay FILE         send FILE's bytes raw; print replies or "closed"
 *   lib-raw ADDR many N [NODE KEY]   open N client connections at once (TLS with NODE/KEY),
 *                                    then one "stats" on each; print how many were answered
 *   lib-raw ADDR stall SECONDS       send half a frame and stay silent for SECONDS
 *   lib-raw ADDR flood N SECONDS     send N requests, read no reply for SECONDS
 *   lib-raw unix:PATH answer RESULT  be a librarian for one client: listen on PATH,
 *                                    answer its first request ("auth") with RESULT
 *                                    (a JSON object), then close; 20 s at the most
 * ADDR is unix:PATH or HOST:PORT (plain TCP: the bytes go unencrypted).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"
#include "tlspsk.h"

static int dial(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	char host[256], *port;
	int fd;

	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
			return -1;
		return fd;
	}
	snprintf(host, sizeof(host), "%s", addr);
	port = strrchr(host, ':');
	if (!port)
		return -1;
	*port++ = 0;
	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

static void put_frame(int fd, const char *txt, uint32_t len)
{
	uint8_t h[4] = { len >> 24, len >> 16, len >> 8, len };

	if (write(fd, h, 4) != 4 || write(fd, txt, strlen(txt)) != (ssize_t)strlen(txt))
		if (errno != EAGAIN)
			perror("write");
}

/* Print replies until EOF or 20 s of silence (a loaded host may be slow). */
static int print_replies(int fd)
{
	uint8_t buf[1 << 16];
	size_t have = 0;
	int n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, 20000) <= 0) {
			printf("timeout\n");
			return n;
		}
		got = read(fd, buf + have, sizeof(buf) - have);
		if (got <= 0) {
			printf("closed\n");
			return n;
		}
		have += got;
		while (have >= 4) {
			uint32_t len = (uint32_t)buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3];

			if (len > sizeof(buf) - 4) {
				printf("reply too large\n");
				return n;
			}
			if (have < 4 + len)
				break;
			printf("%.*s\n", (int)len, buf + 4);
			fflush(stdout);
			n++;
			memmove(buf, buf + 4 + len, have - 4 - len);
			have -= 4 + len;
		}
	}
}

static int hold(const char *addr, int n, int secs)
{
	int *fds = calloc(n, sizeof(int)), open_ok = 0;
	struct timespec ts = { .tv_sec = secs };

	for (int i = 0; i < n; i++)
		fds[i] = dial(addr);
	nanosleep(&ts, NULL); /* the point of the test: idle clients for a while */
	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };
		char c;

		if (fds[i] < 0)
			continue;
		if (poll(&p, 1, 0) == 0 || recv(fds[i], &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
			open_ok++;
		close(fds[i]);
	}
	printf("%d\n", open_ok);
	free(fds);
	return 0;
}

struct rec {
	uint8_t key[64];
	size_t keylen;
	const char *node;
};

static int use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		       SSL_SESSION **sess)
{
	struct rec *r = SSL_get_app_data(ssl);

	*sess = lfs_psk_session(ssl, r->key, r->keylen);
	*id = (const unsigned char *)r->node;
	*idlen = strlen(r->node);
	return *sess != NULL;
}

/* Shuttle bytes between the TLS engine (memory BIO) and the socket, recording. */
static int pump(int fd, BIO *ext, FILE *out, int wait_ms)
{
	uint8_t buf[16384];
	int n;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while ((n = BIO_read(ext, buf, sizeof(buf))) > 0) {
		if (write(fd, buf, n) != n)
			return -1;
		fwrite(buf, 1, n, out);
	}
	if (poll(&p, 1, wait_ms) > 0) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got <= 0)
			return -1;
		BIO_write(ext, buf, got);
	}
	return 0;
}

static int ssl_frame(SSL *ssl, int fd, BIO *ext, FILE *out, const char *txt)
{
	uint32_t len = strlen(txt);
	uint8_t h[4] = { len >> 24, len >> 16, len >> 8, len }, rbuf[65536];
	size_t got = 0, w;
	int tries = 0;

	if (SSL_write_ex(ssl, h, 4, &w) != 1 || SSL_write_ex(ssl, txt, len, &w) != 1)
		return -1;
	while (tries++ < 100) {
		size_t n = 0;

		if (pump(fd, ext, out, 50) < 0)
			return -1;
		if (SSL_read_ex(ssl, rbuf + got, sizeof(rbuf) - got, &n) == 1) {
			got += n;
			if (got >= 4) {
				uint32_t rl = (uint32_t)rbuf[0] << 24 | rbuf[1] << 16 |
					      rbuf[2] << 8 | rbuf[3];

				if (got >= 4 + rl) {
					printf("%.*s\n", (int)rl, rbuf + 4);
					return 0;
				}
			}
		}
	}
	return -1;
}

static int record(const char *addr, const char *node, const char *keyfile, const char *file,
		  const char *txt)
{
	struct rec r = { .node = node };
	char msg[300], auth[200];
	SSL_CTX *ctx = lfs_tls_ctx(0);
	SSL *ssl = SSL_new(ctx);
	BIO *in, *ext;
	FILE *out = fopen(file, "wb");
	int fd = dial(addr), k, rc = 1;

	k = lfs_lib_read_key(keyfile, r.key, sizeof(r.key), msg, sizeof(msg));
	if (k < 0 || fd < 0 || !out || !ssl) {
		fprintf(stderr, "record: setup failed: %s\n", k < 0 ? msg : strerror(errno));
		return 1;
	}
	r.keylen = k;
	BIO_new_bio_pair(&in, 0, &ext, 0);
	SSL_set_bio(ssl, in, in);
	SSL_set_app_data(ssl, &r);
	SSL_set_psk_use_session_callback(ssl, use_session);
	SSL_set_connect_state(ssl);
	for (k = 0; k < 200; k++) {
		int h = SSL_do_handshake(ssl);

		if (pump(fd, ext, out, 20) < 0)
			break;
		if (h == 1)
			break;
	}
	if (!SSL_is_init_finished(ssl)) {
		fprintf(stderr, "record: handshake failed\n");
		goto out;
	}
	snprintf(auth, sizeof(auth), "{\"v\":1,\"id\":1,\"op\":\"auth\",\"node\":\"%s\"}", node);
	if (ssl_frame(ssl, fd, ext, out, auth) < 0 || ssl_frame(ssl, fd, ext, out, txt) < 0) {
		fprintf(stderr, "record: request failed\n");
		goto out;
	}
	rc = 0;
out:
	fclose(out);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	BIO_free(ext);
	close(fd);
	return rc;
}

static int replay(const char *addr, const char *file)
{
	uint8_t buf[1 << 16];
	FILE *f = fopen(file, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	int fd = dial(addr);

	if (f)
		fclose(f);
	if (!n || fd < 0) {
		fprintf(stderr, "replay: nothing to send\n");
		return 1;
	}
	if (write(fd, buf, n) != (ssize_t)n)
		perror("write");
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, 20000) <= 0) {
			printf("timeout\n");
			break;
		}
		got = read(fd, buf, sizeof(buf));
		if (got <= 0) {
			printf("closed\n");
			break;
		}
		printf("got %zd bytes\n", got);
	}
	close(fd);
	return 0;
}

static int many(const char *addr, int n, const char *node, const char *key)
{
	struct lfs_lib **l = calloc(n, sizeof(*l));
	struct lfs_lib_opts o = { .addr = addr,
				  .node = node,
				  .key_file = key,
				  .connect_timeout_ms = 20000,
				  .reply_timeout_ms = 20000 };
	int ok = 0, open_ok = 0;

	for (int i = 0; i < n; i++) {
		char *err = NULL;

		if (lfs_lib_connect(&o, &l[i], &err) == 0)
			open_ok++;
		else if (open_ok == i)
			fprintf(stderr, "connection %d: %s\n", i, err);
		free(err);
	}
	for (int i = 0; i < n; i++) {
		json_t *res = NULL;

		if (l[i] && lfs_lib_call(l[i], "stats", NULL, &res) == 0 &&
		    json_integer_value(json_object_get(res, "connections")) >= open_ok)
			ok++;
		json_decref(res);
	}
	for (int i = 0; i < n; i++)
		lfs_lib_close(l[i]);
	free(l);
	printf("%d\n", ok);
	return 0;
}

/* One whole frame from fd, NUL-terminated, within 20 s; NULL otherwise. */
static char *get_frame(int fd)
{
	static char buf[1 << 16];
	size_t have = 0, want = 4;

	while (have < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, 20000) <= 0)
			return NULL;
		got = read(fd, buf + have, want - have);
		if (got <= 0)
			return NULL;
		have += got;
		if (have == 4) {
			want = 4 + ((uint32_t)(uint8_t)buf[0] << 24 | (uint8_t)buf[1] << 16 |
				    (uint8_t)buf[2] << 8 | (uint8_t)buf[3]);
			if (want >= sizeof(buf))
				return NULL;
		}
	}
	buf[have] = 0;
	return buf + 4;
}

/* A fake librarian: one client's first request answered with result. */
static int answer(const char *addr, const char *result)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd p = { .events = POLLIN };
	json_t *req = NULL, *res = json_loads(result, 0, NULL), *rep;
	char *txt, *frame;
	int ls, fd = -1, ret;

	if (strncmp(addr, "unix:", 5) || !json_is_object(res)) {
		fprintf(stderr, "lib-raw: answer needs unix:PATH and a JSON object\n");
		return 2;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", addr + 5);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(ls, 1) < 0) {
		perror("lib-raw: listen");
		return 1;
	}
	p.fd = ls;
	if (poll(&p, 1, 20000) > 0)
		fd = accept(ls, NULL, NULL);
	frame = fd >= 0 ? get_frame(fd) : NULL;
	req = frame ? json_loads(frame, 0, NULL) : NULL;
	rep = json_pack("{s:i,s:O,s:b,s:O}", "v", LFS_PROTOCOL_VERSION, "id",
			json_object_get(req, "id") ?: json_null(), "ok", 1, "result", res);
	txt = req && rep ? json_dumps(rep, JSON_COMPACT) : NULL;
	if (txt)
		put_frame(fd, txt, strlen(txt));
	printf("%s\n", txt ? "answered" : "no request");
	ret = txt ? 0 : 1;
	free(txt);
	json_decref(rep);
	json_decref(req);
	json_decref(res);
	if (fd >= 0)
		close(fd);
	close(ls);
	unlink(sun.sun_path);
	return ret;
}

int main(int argc, char **argv)
{
	const char *addr, *mode;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: lib-raw ADDR MODE ARGS...\n");
		return 2;
	}
	addr = argv[1];
	mode = argv[2];
	/*
	 * The server may answer and close before all of a bad message is
	 * written: the write then fails, and the replies are still to be read.
	 */
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "answer") && argc == 4)
		return answer(addr, argv[3]);
	if (!strcmp(mode, "hold") && argc == 5)
		return hold(addr, atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(mode, "record") && argc == 7)
		return record(addr, argv[3], argv[4], argv[5], argv[6]);
	if (!strcmp(mode, "replay") && argc == 4)
		return replay(addr, argv[3]);
	if (!strcmp(mode, "many") && (argc == 4 || argc == 6))
		return many(addr, atoi(argv[3]), argc == 6 ? argv[4] : NULL,
			    argc == 6 ? argv[5] : NULL);
	fd = dial(addr);
	if (fd < 0) {
		fprintf(stderr, "lib-raw: cannot connect to %s\n", addr);
		return 1;
	}
	if (!strcmp(mode, "send") || !strcmp(mode, "auth-send")) {
		int i = 3;

		if (!strcmp(mode, "auth-send")) {
			const char *a = "{\"v\":1,\"id\":0,\"op\":\"auth\"}";

			put_frame(fd, a, strlen(a));
		}
		for (; i < argc; i++)
			put_frame(fd, argv[i], strlen(argv[i]));
		shutdown(fd, SHUT_WR);
	} else if (!strcmp(mode, "lie") && argc == 5) {
		const char *a = "{\"v\":1,\"id\":0,\"op\":\"auth\"}";

		put_frame(fd, a, strlen(a));
		put_frame(fd, argv[4], strtoul(argv[3], NULL, 0));
		shutdown(fd, SHUT_WR);
	} else if (!strcmp(mode, "stall") && argc == 4) {
		struct timespec ts = { .tv_sec = atoi(argv[3]) };

		put_frame(fd, "{\"v\":1,\"op\"", 100);
		nanosleep(&ts, NULL);
		close(fd);
		return 0;
	} else if (!strcmp(mode, "flood") && argc == 5) {
		const char *a = "{\"v\":1,\"id\":0,\"op\":\"auth\"}";
		const char *q = "{\"v\":1,\"id\":1,\"op\":\"geometry\"}";
		struct timespec ts = { .tv_sec = atoi(argv[4]) };
		int n = atoi(argv[3]);

		fcntl(fd, F_SETFL, O_NONBLOCK);
		put_frame(fd, a, strlen(a));
		for (int i = 0; i < n; i++)
			put_frame(fd, q, strlen(q)); /* stops when the socket is full */
		nanosleep(&ts, NULL);
		close(fd);
		return 0;
	} else if (!strcmp(mode, "bytes") && argc == 4) {
		size_t n = strlen(argv[3]) / 2;
		uint8_t *b = malloc(n + 1);

		for (size_t i = 0; i < n; i++)
			sscanf(argv[3] + 2 * i, "%2hhx", &b[i]);
		if (write(fd, b, n) != (ssize_t)n)
			perror("write");
		free(b);
		shutdown(fd, SHUT_WR);
	} else {
		fprintf(stderr, "lib-raw: bad mode '%s'\n", mode);
		return 2;
	}
	print_replies(fd);
	close(fd);
	return 0;
}
