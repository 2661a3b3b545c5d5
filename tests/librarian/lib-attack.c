// SPDX-License-Identifier: GPL-2.0
/*
 * lib-attack: hostile and well-behaved clients for attack.t and the
 * benchmark (bench/librarian/attack.sh). Loopback only. Test helper.
 *
 *   lib-attack ADDR idle N SECONDS
 *	open N TCP connections and send nothing for SECONDS; print how many the
 *	librarian still held open at the end
 *   lib-attack ADDR halfopen N SECONDS
 *	the same, each having sent the first bytes of a TLS ClientHello
 *   lib-attack ADDR flood NODE KEY SECONDS DEPTH [REQUEST]
 *	as NODE, send DEPTH pipelined requests (default a shelf.list of 100),
 *	read their replies, again, for SECONDS; print how many were answered
 *   lib-attack ADDR heartbeat NODE KEY SECONDS INTERVAL_MS
 *	as NODE, a heartbeat every INTERVAL_MS for SECONDS over one session;
 *	print "n N p50 P p99 P max M" (round trips in ms); exit 1 if one failed
 *   lib-attack ADDR calls NODE KEY
 *	as NODE, over one session, for each line "OP [JSON-ARGS]" of stdin send
 *	that request, wait for its reply and print "ok RESULT" or "error CODE"
 *   lib-attack ADDR replay FILE N SECONDS
 *	the first TLS record of FILE (a ClientHello lib-raw recorded), sent
 *	byte for byte on N connections from 127.0.0.2-9 in turn; once the
 *	librarian answered each, "replaying N" on stderr; for SECONDS a
 *	connection the librarian closes is opened again (at most 4 N times);
 *	print "reopened R open O" (O: connections still open at the end)
 *   lib-attack ADDR sessions NODE KEY N
 *	as NODE, open N sessions one after the other, print "opened K"; then
 *	for each line of stdin, a ping on each: print "alive I..." (the
 *	indexes of the sessions that answered, from 0)
 * NODE and KEY are ignored on unix: addresses.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lfs_librarian.h"
#include "tlspsk.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dial(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	char host[256], *port;
	int fd;

	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(host, sizeof(host), "%s", addr);
	port = strrchr(host, ':');
	if (!port)
		return -1;
	*port++ = 0;
	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* N connections that say nothing (or half a ClientHello); how many are still open after. */
static int hold(const char *addr, int n, int secs, bool half)
{
	static const unsigned char hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01 };
	int *fds = calloc(n, sizeof(int)), opened = 0, open_ok = 0;
	struct timespec ts = { .tv_sec = secs };

	for (int i = 0; i < n; i++) {
		fds[i] = dial(addr);
		opened += fds[i] >= 0;
		if (fds[i] >= 0 && half && send(fds[i], hello, sizeof(hello), MSG_NOSIGNAL) < 0)
			perror("send");
	}
	fprintf(stderr, "lib-attack: %d of %d connections opened\n", opened, n);
	nanosleep(&ts, NULL);
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

/* The first TLS record of a recorded session (the ClientHello). */
static size_t first_record(const char *file, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(file, "rb");
	size_t n = f ? fread(buf, 1, cap, f) : 0, len;

	if (f)
		fclose(f);
	if (n < 5 || buf[0] != 0x16)
		return 0;
	len = 5 + ((size_t)buf[3] << 8 | buf[4]);
	return len <= n ? len : 0;
}

/* A TCP connection from 127.0.0.(2 + i % 8) that sent the record. */
static int replay_one(const struct sockaddr_in *to, int i, const uint8_t *rec, size_t len)
{
	struct sockaddr_in from = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	from.sin_addr.s_addr = htonl(0x7f000002 + i % 8);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0 ||
	    connect(fd, (const struct sockaddr *)to, sizeof(*to)) < 0 ||
	    send(fd, rec, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read what came; 0 if the connection is closed (or broken). */
static int drain_open(int fd)
{
	char b[4096];

	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return 0;
		if (n < 0)
			return 1;
	}
	return 1;
}

static int replay_setup(const char *addr, const char *file, struct sockaddr_in *to,
			uint8_t *rec, size_t *len)
{
	char host[64], *port;

	*len = first_record(file, rec, 16384);
	snprintf(host, sizeof(host), "%s", addr);
	port = strrchr(host, ':');
	if (!*len || !port) {
		fprintf(stderr, "lib-attack: replay: no ClientHello in %s, or bad address\n", file);
		return -1;
	}
	*port++ = 0;
	to->sin_family = AF_INET;
	to->sin_port = htons(atoi(port));
	if (inet_pton(AF_INET, host, &to->sin_addr) != 1)
		return -1;
	return 0;
}

/* N connections replaying one ClientHello; the ones closed are opened again. */
static int replay(const char *addr, const char *file, int n, int secs)
{
	struct pollfd *p = calloc(n, sizeof(*p));
	struct sockaddr_in to = { 0 };
	uint8_t rec[16384];
	size_t len;
	double end = now_s() + secs;
	int reopened = 0, open_n = 0;

	if (!p || replay_setup(addr, file, &to, rec, &len) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		p[i].fd = replay_one(&to, i, rec, len);
		p[i].events = POLLIN;
	}
	/* each answered (or closed): the librarian has read its ClientHello */
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0 && poll(&p[i], 1, 10000) <= 0)
			fprintf(stderr, "lib-attack: replay: connection %d not answered\n", i);
	fprintf(stderr, "lib-attack: replaying %d\n", n);
	while (now_s() < end) {
		if (poll(p, n, 100) < 0)
			break;
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents || drain_open(p[i].fd))
				continue;
			close(p[i].fd);
			p[i].fd = reopened < 4 * n ? replay_one(&to, i, rec, len) : -1;
			reopened += p[i].fd >= 0;
		}
	}
	for (int i = 0; i < n; i++) {
		if (p[i].fd >= 0) {
			open_n += drain_open(p[i].fd);
			close(p[i].fd);
		}
	}
	printf("reopened %d open %d\n", reopened, open_n);
	free(p);
	return 0;
}

struct tls {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	uint8_t key[64];
	size_t keylen;
	const char *node;
};

static int use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		       SSL_SESSION **sess)
{
	struct tls *t = SSL_get_app_data(ssl);

	*sess = lfs_psk_session(ssl, t->key, t->keylen);
	*id = (const unsigned char *)t->node;
	*idlen = strlen(t->node);
	return *sess != NULL;
}

static int put(struct tls *t, const void *buf, size_t len)
{
	size_t w;

	return SSL_write_ex(t->ssl, buf, len, &w) == 1 ? 0 : -1;
}

static int get(struct tls *t, void *buf, size_t len)
{
	size_t got;

	for (char *p = buf; len; p += got, len -= got)
		if (SSL_read_ex(t->ssl, p, len, &got) != 1)
			return -1;
	return 0;
}

static int frame(struct tls *t, const char *txt)
{
	uint32_t len = strlen(txt);
	char *b = malloc(4 + len);
	int r;

	b[0] = len >> 24, b[1] = len >> 16, b[2] = len >> 8, b[3] = len;
	memcpy(b + 4, txt, len);
	r = put(t, b, 4 + len);
	free(b);
	return r;
}

/* One reply: 1 if it said ok, 0 if not, -1 if the connection broke. */
static int reply(struct tls *t)
{
	uint8_t h[4];
	uint32_t len;
	char *b;
	int ok;

	if (get(t, h, 4) < 0)
		return -1;
	len = (uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
	b = malloc(len + 1);
	if (!b || get(t, b, len) < 0) {
		free(b);
		return -1;
	}
	b[len] = 0;
	ok = strstr(b, "\"ok\":true") != NULL;
	free(b);
	return ok;
}

static int tls_open(struct tls *t, const char *addr, const char *node, const char *keyfile)
{
	char msg[300], auth[200];
	int k = lfs_lib_read_key(keyfile, t->key, sizeof(t->key), msg, sizeof(msg));

	t->node = node;
	t->ctx = lfs_tls_ctx(0);
	t->ssl = t->ctx ? SSL_new(t->ctx) : NULL;
	t->fd = t->ssl ? dial(addr) : -1; /* the ClientHello follows at once */
	if (k < 0 || t->fd < 0 || !t->ssl) {
		fprintf(stderr, "lib-attack: setup: %s\n", k < 0 ? msg : strerror(errno));
		return -1;
	}
	t->keylen = k;
	SSL_set_app_data(t->ssl, t);
	SSL_set_psk_use_session_callback(t->ssl, use_session);
	SSL_set_fd(t->ssl, t->fd);
	if (SSL_connect(t->ssl) != 1) {
		fprintf(stderr, "lib-attack: TLS handshake failed\n");
		return -1;
	}
	snprintf(auth, sizeof(auth), "{\"v\":1,\"id\":0,\"op\":\"auth\",\"node\":\"%s\"}", node);
	return frame(t, auth) < 0 || reply(t) != 1 ? -1 : 0;
}

/* DEPTH requests written, DEPTH replies read, until SECONDS are up. */
static int flood(const char *addr, const char *node, const char *key, int secs, int depth,
		 const char *req)
{
	struct tls t = { .fd = -1 };
	double end = now_s() + secs;
	long answered = 0;

	if (tls_open(&t, addr, node, key) < 0)
		goto out;
	fprintf(stderr, "lib-attack: flooding\n");
	while (now_s() < end) {
		for (int i = 0; i < depth; i++)
			if (frame(&t, req) < 0)
				goto out;
		for (int i = 0; i < depth; i++) {
			if (reply(&t) < 0)
				goto out;
			answered++;
		}
	}
out:
	printf("%ld\n", answered);
	SSL_free(t.ssl);
	SSL_CTX_free(t.ctx);
	if (t.fd >= 0)
		close(t.fd);
	return !answered;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The well-behaved node: its heartbeat round trips. */
static int heartbeat(const char *addr, const char *node, const char *key, int secs, int ms)
{
	struct lfs_lib_opts o = { .addr = addr,
				  .node = strncmp(addr, "unix:", 5) ? node : NULL,
				  .key_file = key,
				  .reply_timeout_ms = 10000 };
	struct timespec gap = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	double end = now_s() + secs, *rtt = malloc(sizeof(double) * 1000000);
	struct lfs_lib *l;
	char *err = NULL;
	int n = 0, failed = 0;

	if (lfs_lib_connect(&o, &l, &err) < 0) {
		fprintf(stderr, "lib-attack: %s\n", err);
		return 1;
	}
	while (now_s() < end && n < 1000000) {
		double t0 = now_s();

		if (lfs_lib_call(l, "heartbeat", NULL, NULL) < 0) {
			fprintf(stderr, "lib-attack: heartbeat: %s\n", lfs_lib_errmsg(l));
			failed++;
			break;
		}
		rtt[n++] = (now_s() - t0) * 1000;
		nanosleep(&gap, NULL);
	}
	qsort(rtt, n, sizeof(*rtt), cmpd);
	printf("n %d p50 %.3f p99 %.3f max %.3f\n", n, n ? rtt[n / 2] : 0,
	       n ? rtt[(int)(n * 0.99)] : 0, n ? rtt[n - 1] : 0);
	lfs_lib_close(l);
	free(rtt);
	return failed || !n;
}

/* One request of a line "OP [JSON-ARGS]"; its outcome printed. */
static void call_line(struct lfs_lib *l, char *line)
{
	char *sp = strchr(line, ' ');
	json_t *args = NULL, *res = NULL;
	char *txt;
	int r;

	line[strcspn(line, "\n")] = 0;
	if (sp) {
		*sp = 0;
		args = json_loads(sp + 1, 0, NULL);
	}
	r = lfs_lib_call(l, line, args, &res);
	if (r < 0) {
		printf("error %s\n", lfs_errno_name(-r));
	} else {
		txt = json_dumps(res, JSON_COMPACT | JSON_ENCODE_ANY);
		printf("ok %s\n", txt ? txt : "null");
		free(txt);
	}
	fflush(stdout);
	json_decref(args);
	json_decref(res);
}

/* N sessions of NODE; on each line of stdin, which of them answer a ping. */
static int sessions(const char *addr, const char *node, const char *key, int n)
{
	struct tls *t = calloc(n, sizeof(*t));
	struct timeval tv = { .tv_sec = 10 };
	char line[64];
	int opened = 0;

	for (int i = 0; i < n; i++) {
		t[i].fd = -1;
		if (tls_open(&t[i], addr, node, key) < 0)
			break;
		setsockopt(t[i].fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		opened++;
	}
	printf("opened %d\n", opened);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		printf("alive");
		for (int i = 0; i < opened; i++)
			if (frame(&t[i], "{\"v\":1,\"id\":1,\"op\":\"ping\"}") == 0 &&
			    reply(&t[i]) == 1)
				printf(" %d", i);
		printf("\n");
		fflush(stdout);
	}
	for (int i = 0; i < n; i++) {
		SSL_free(t[i].ssl);
		SSL_CTX_free(t[i].ctx);
		if (t[i].fd >= 0)
			close(t[i].fd);
	}
	free(t);
	return 0;
}

/* Requests one at a time as stdin says, on one session (a coprocess's). */
static int calls(const char *addr, const char *node, const char *key)
{
	struct lfs_lib_opts o = { .addr = addr,
				  .node = strncmp(addr, "unix:", 5) ? node : NULL,
				  .key_file = key,
				  .reply_timeout_ms = 60000 };
	struct lfs_lib *l;
	char *err = NULL, line[4096];

	if (lfs_lib_connect(&o, &l, &err) < 0) {
		fprintf(stderr, "lib-attack: %s\n", err);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin))
		call_line(l, line);
	lfs_lib_close(l);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 5 && !strcmp(argv[2], "idle"))
		return hold(argv[1], atoi(argv[3]), atoi(argv[4]), false);
	if (argc >= 5 && !strcmp(argv[2], "halfopen"))
		return hold(argv[1], atoi(argv[3]), atoi(argv[4]), true);
	if (argc >= 7 && !strcmp(argv[2], "flood"))
		return flood(argv[1], argv[3], argv[4], atoi(argv[5]), atoi(argv[6]),
			     argc > 7 ? argv[7] :
					"{\"v\":1,\"id\":1,\"op\":\"shelf.list\",\"limit\":100}");
	if (argc >= 7 && !strcmp(argv[2], "heartbeat"))
		return heartbeat(argv[1], argv[3], argv[4], atoi(argv[5]), atoi(argv[6]));
	if (argc >= 5 && !strcmp(argv[2], "calls"))
		return calls(argv[1], argv[3], argv[4]);
	if (argc >= 6 && !strcmp(argv[2], "replay"))
		return replay(argv[1], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc >= 6 && !strcmp(argv[2], "sessions"))
		return sessions(argv[1], argv[3], argv[4], atoi(argv[5]));
	fprintf(stderr, "usage: lib-attack ADDR idle|halfopen N SECONDS\n"
			"       lib-attack ADDR flood NODE KEY SECONDS DEPTH [REQUEST]\n"
			"       lib-attack ADDR heartbeat NODE KEY SECONDS INTERVAL_MS\n"
			"       lib-attack ADDR calls NODE KEY\n"
			"       lib-attack ADDR replay FILE N SECONDS\n"
			"       lib-attack ADDR sessions NODE KEY N\n");
	return 2;
}
