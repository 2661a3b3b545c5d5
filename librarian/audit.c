// SPDX-License-Identifier: GPL-2.0
/*
 * The audit trail (docs/AUDIT.md): with `audit_log` set, one JSON line per
 * request that may change the catalogue (the operations marked OP_CHANGES
 * in dispatch.c), refused or not, and per change the librarian makes on its
 * own (taking or losing the lead). A request's line says who sent it, from
 * where, what it asked, which shelf, and the outcome as committed: the
 * lines of a round wait for the round's commit (group commit, server.c) and
 * are written with one write() before any of its replies leave, so every
 * acknowledged change has its line; a round whose commit failed gets its
 * lines with the commit's error. With `synchronous = "full"` the file is
 * also flushed to disk (fdatasync) before the replies leave. A failed write
 * is logged and counted (stats: audit.errors); it does not fail requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops.h"
#include "server.h"

#define AUDIT_ARRAY_MAX 64 /* a longer array argument is written as its count */

struct lib_audit {
	int fd;
	json_t *pending; /* the open round's records, waiting for its commit */
	unsigned long long records, errors;
};

int lib_audit_open(struct lib_server *srv)
{
	const char *path = srv->cfg->audit_path;
	struct lib_audit *a;

	if (!path)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->pending = json_array())) {
		free(a);
		lib_log("audit_log: out of memory");
		return -ENOMEM;
	}
	a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (a->fd < 0) {
		int err = errno;

		lib_log("audit_log '%s': cannot open it: %s", path, strerror(err));
		json_decref(a->pending);
		free(a);
		return -err;
	}
	srv->audit = a;
	return 0;
}

void lib_audit_close(struct lib_server *srv)
{
	struct lib_audit *a = srv->audit;

	if (!a)
		return;
	lib_audit_flush(srv, NULL);
	close(a->fd);
	json_decref(a->pending);
	free(a);
	srv->audit = NULL;
}

/* UTC, milliseconds: 2026-12-07T07:30:01.123Z */
static void audit_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", s, ts.tv_nsec / 1000000);
}

/* A record's common fields: time, librarian, epoch. */
static json_t *audit_record(struct lib_server *srv)
{
	char t[48];

	audit_time(t, sizeof(t));
	return json_pack("{s:s,s:s?,s:I}", "time", t, "librarian", srv->cfg->name, "epoch",
			 (json_int_t)lib_leader_epoch(srv->leader));
}

/* The request's arguments but v, id and op; a long array as its length. */
static json_t *audit_args(json_t *req)
{
	json_t *args = json_object(), *v;
	const char *k;

	json_object_foreach(req, k, v) {
		if (!strcmp(k, "v") || !strcmp(k, "id") || !strcmp(k, "op"))
			continue;
		if (json_is_array(v) && json_array_size(v) > AUDIT_ARRAY_MAX)
			json_object_set_new(args, k,
					    json_pack("{s:I}", "count",
						      (json_int_t)json_array_size(v)));
		else
			json_object_set(args, k, v);
	}
	return args;
}

/* The outcome: "ok", or the error's code and message. */
static void audit_result(json_t *rec, int err, const char *msg)
{
	json_object_set_new(rec, "result", json_string(err ? lfs_errno_name(err) : "ok"));
	if (err)
		json_object_set_new(rec, "message", json_string(msg && *msg ? msg : strerror(err)));
	else
		json_object_del(rec, "message");
}

void lib_audit_request(struct lib_server *srv, const struct req *rq, json_t *req, int r)
{
	const char *shelf = json_string_value(json_object_get(req, "name"));
	json_t *rec;
	int err;

	if (!srv->audit || !rq->changes)
		return;
	rec = audit_record(srv);
	if (!rec)
		return;
	json_object_set_new(rec, "who", json_string(rq->who->name));
	json_object_set_new(rec, "role", json_string(rq->who->admin ? "admin" : "node"));
	json_object_set_new(rec, "from", json_string(rq->who->peer ?: "?"));
	json_object_set_new(rec, "op", json_string(rq->op));
	if (shelf && (!strncmp(rq->op, "shelf.", 6) || !strncmp(rq->op, "attr.", 5)))
		json_object_set_new(rec, "shelf", json_string(shelf));
	json_object_set_new(rec, "args", audit_args(req));
	err = r < 0 ? (rq->err.err ? rq->err.err : -r) : 0;
	audit_result(rec, err, rq->err.msg);
	json_array_append_new(srv->audit->pending, rec);
}

void lib_audit_event(struct lib_server *srv, const char *event, json_t *fields)
{
	json_t *rec;

	if (!srv->audit) {
		json_decref(fields);
		return;
	}
	rec = audit_record(srv);
	if (rec) {
		json_object_set_new(rec, "who", json_string("librarian"));
		json_object_set_new(rec, "op", json_string(event));
		if (fields)
			json_object_update(rec, fields);
		json_object_set_new(rec, "result", json_string("ok"));
		json_array_append_new(srv->audit->pending, rec);
	}
	json_decref(fields);
	lib_audit_flush(srv, NULL);
}

/* All of buf, or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/* The pending records as JSON lines, each ended by a newline; NULL if none. */
static char *audit_lines(json_t *pending, const struct lib_err *failed, size_t *len)
{
	size_t cap = 0, i;
	char *buf = NULL, *line;
	FILE *f;
	json_t *rec;

	if (!json_array_size(pending) || !(f = open_memstream(&buf, &cap)))
		return NULL;
	json_array_foreach(pending, i, rec) {
		if (failed &&
		    !strcmp(json_string_value(json_object_get(rec, "result")) ?: "", "ok"))
			audit_result(rec, failed->err ? failed->err : EIO, failed->msg);
		line = json_dumps(rec, JSON_COMPACT);
		if (line)
			fprintf(f, "%s\n", line);
		free(line);
	}
	fclose(f);
	*len = cap;
	return buf;
}

void lib_audit_flush(struct lib_server *srv, const struct lib_err *failed)
{
	struct lib_audit *a = srv->audit;
	size_t len = 0, n;
	char *buf;
	int r;

	if (!a || !(n = json_array_size(a->pending)))
		return;
	buf = audit_lines(a->pending, failed, &len);
	json_array_clear(a->pending);
	r = buf ? write_all(a->fd, buf, len) : -ENOMEM;
	if (r == 0 && srv->cfg->sync_full && fdatasync(a->fd) < 0)
		r = -errno;
	free(buf);
	if (r < 0) {
		a->errors += n;
		lib_log("audit_log '%s': %zu records not written: %s", srv->cfg->audit_path, n,
			strerror(-r));
		return;
	}
	a->records += n;
}

json_t *lib_audit_stats(struct lib_server *srv)
{
	struct lib_audit *a = srv->audit;

	if (!a)
		return json_null();
	return json_pack("{s:s,s:I,s:I}", "path", srv->cfg->audit_path, "records",
			 (json_int_t)a->records, "errors", (json_int_t)a->errors);
}
