// SPDX-License-Identifier: GPL-2.0
/*
 * librarian client: send requests to a librarian and print the replies.
 *
 *   librarian client [--connect ADDR] [--node N] [--key F] [--timeout MS] OP [JSON-ARGS]
 *   librarian client ... '{"op":...}'
 *   librarian client ... --stdin      one request object per line, one reply per line
 *
 * Exit status: 0, 1 if the librarian refused a request, 2 for usage errors,
 * 3 if it could not connect.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librarian.h"

/* Print a failed call: on stderr, and as a compact JSON line if compact. */
static int print_error(struct lfs_lib *l, const char *op, int r, bool compact)
{
	if (compact) {
		json_t *e = json_pack("{s:b,s:s,s:i,s:s}", "ok", 0, "code", lfs_lib_errcode(l),
				      "errno", -r, "message", lfs_lib_errmsg(l));
		char *t = json_dumps(e, JSON_COMPACT);

		printf("%s\n", t ? t : "{}");
		free(t);
		json_decref(e);
	}
	fprintf(stderr, "librarian: %s: %s: %s\n", op, lfs_lib_errcode(l), lfs_lib_errmsg(l));
	return 1;
}

/* Print one reply; returns 0 or the exit status for an error. */
static int print_reply(struct lfs_lib *l, const char *op, int r, json_t *res, bool compact)
{
	char *t;

	if (r < 0)
		return print_error(l, op, r, compact);
	if (compact) {
		json_t *o = json_pack("{s:b,s:O}", "ok", 1, "result", res);

		t = json_dumps(o, JSON_COMPACT);
		json_decref(o);
	} else {
		t = json_dumps(res, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	}
	printf("%s\n", t ? t : "null");
	free(t);
	return 0;
}

static int call_one(struct lfs_lib *l, json_t *req, bool compact)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *res = NULL;
	char *opdup;
	int r, rc;

	if (!op) {
		fprintf(stderr, "librarian client: the request needs \"op\"\n");
		return 2;
	}
	opdup = strdup(op);
	json_object_del(req, "op");
	r = lfs_lib_call(l, opdup, req, &res);
	rc = print_reply(l, opdup, r, res, compact);
	fflush(stdout);
	free(opdup);
	json_decref(res);
	return rc;
}

/* One request object per line, one compact reply per line, over one connection. */
static int call_stdin(struct lfs_lib *l)
{
	char *line = NULL;
	size_t cap = 0;
	json_error_t je;
	int rc = 0;

	while (getline(&line, &cap, stdin) > 0) {
		json_t *req;

		if (line[strspn(line, " \t\r\n")] == 0)
			continue;
		req = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		if (!req || !json_is_object(req)) {
			printf("{\"ok\":false,\"code\":\"EINVAL\",\"message\":\"bad input line: %s\"}\n",
			       req ? "not an object" : "not JSON");
			json_decref(req);
			rc = 1;
			continue;
		}
		if (call_one(l, req, true))
			rc = 1;
		json_decref(req);
		if (!lfs_lib_connected(l))
			break;
	}
	free(line);
	return rc;
}

/* The request of the command line: OP [JSON-ARGS], or one object with "op" in it. */
static json_t *command_line_request(int argc, char **argv)
{
	json_error_t je;
	json_t *req;

	if (argc < 1 || argc > 2) {
		fprintf(stderr,
			"librarian client: give OP [JSON-ARGS], a request object, or --stdin\n");
		return NULL;
	}
	if (argv[0][0] == '{') {
		req = json_loads(argv[0], JSON_REJECT_DUPLICATES, &je);
	} else {
		req = argc == 2 ? json_loads(argv[1], JSON_REJECT_DUPLICATES, &je) : json_object();
		if (req && json_is_object(req))
			json_object_set_new(req, "op", json_string(argv[0]));
	}
	if (!req || !json_is_object(req)) {
		fprintf(stderr, "librarian client: arguments are not a JSON object: %s\n",
			req ? "not an object" : je.text);
		json_decref(req);
		return NULL;
	}
	return req;
}

/* Options into o; returns optind, or -1 (usage error) or 0 (--help, done). */
static int client_options(int argc, char **argv, struct lfs_lib_opts *o, bool *from_stdin)
{
	static const struct option lo[] = { { "connect", required_argument, NULL, 'C' },
					    { "node", required_argument, NULL, 'n' },
					    { "key", required_argument, NULL, 'k' },
					    { "timeout", required_argument, NULL, 't' },
					    { "stdin", no_argument, NULL, 's' },
					    { "help", no_argument, NULL, 'h' },
					    { 0 } };
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+C:n:k:t:sh", lo, NULL)) != -1) {
		switch (ch) {
		case 'C':
			o->addr = optarg;
			break;
		case 'n':
			o->node = optarg;
			break;
		case 'k':
			o->key_file = optarg;
			break;
		case 't':
			o->reply_timeout_ms = o->connect_timeout_ms = atoi(optarg);
			break;
		case 's':
			*from_stdin = true;
			break;
		case 'h':
			lib_usage(stdout);
			return 0;
		default:
			lib_usage(stderr);
			return -1;
		}
	}
	return optind;
}

int lib_cmd_client(int argc, char **argv)
{
	struct lfs_lib_opts o = { .addr = getenv("LFS_LIBRARIAN") };
	struct lfs_lib *l = NULL;
	json_t *req = NULL;
	char *err = NULL;
	bool from_stdin = false;
	int i, r, rc;

	if (!o.addr)
		o.addr = LFS_DEFAULT_ADDR;
	i = client_options(argc, argv, &o, &from_stdin);
	if (i <= 0)
		return i < 0 ? 2 : 0;
	if (!from_stdin && !(req = command_line_request(argc - i, argv + i)))
		return 2;
	r = lfs_lib_connect(&o, &l, &err);
	if (r < 0) {
		fprintf(stderr, "librarian client: %s\n", err ? err : strerror(-r));
		free(err);
		json_decref(req);
		return 3;
	}
	rc = from_stdin ? call_stdin(l) : call_one(l, req, false);
	json_decref(req);
	lfs_lib_close(l);
	return rc;
}
