// SPDX-License-Identifier: GPL-2.0
/*
 * The PostgreSQL store's connection and statements (docs/HA.md): the
 * server's messages and notices, a broken connection made again, one text
 * run once, and a prepared statement with its values and columns (store.h's
 * lib_bind_*, lib_col_*). A statement's SQL is the one the SQLite store
 * runs, with book state names expanded and ?N written $N; it is prepared on
 * the server the first time it runs on a connection, with the types of the
 * values bound then (bigint or text; a parameter never bound is text).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg_stmt.h"

/* The server's last message, without its newline. */
const char *pg_message(struct lib_pg *pg)
{
	static __thread char buf[512];
	size_t n;

	if (pg && pg->pipe_msg[0])
		snprintf(buf, sizeof(buf), "%s", pg->pipe_msg);
	else
		snprintf(buf, sizeof(buf), "%s",
			 pg && pg->conn ? PQerrorMessage(pg->conn) : "no connection");
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return buf;
}

/* The server's notices: a plain WARNING (01000) is remembered (pg_commit_warned()). */
void pg_notice(void *arg, const PGresult *r)
{
	struct lib_pg *pg = arg;
	const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	if (sev && !strcmp(sev, "WARNING") && state && !strcmp(state, PG_UNREPLICATED))
		pg->warned = true;
}

bool pg_broken(struct lib_pg *pg)
{
	return PQstatus(pg->conn) != CONNECTION_OK;
}

/*
 * A new connection for a broken one: PQreset() connects again with the
 * same conninfo (every host of it in turn); one attempt, bounded by the
 * URI's connect_timeout. 0, or -EIO if no server took it.
 */
int pg_reconnect(struct lib_pg *pg)
{
	PGresult *r;
	bool ok;

	PQreset(pg->conn);
	if (pg_broken(pg))
		return -EIO;
	r = PQexec(pg->conn, pg->session);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	if (!ok)
		return -EIO;
	pg->gen++;
	pg->in_tx = false;
	lib_log("connected again to the database (connection %d): %s port %s", pg->gen,
		PQhost(pg->conn), PQport(pg->conn));
	return 0;
}

/*
 * Before a statement: a broken connection is made again only outside a
 * transaction (or for the BEGIN of a new one); inside one the statement
 * fails, as the transaction did.
 */
int pg_ready(struct lib_pg *pg, bool begins)
{
	if (!pg_broken(pg))
		return 0;
	if (pg->in_tx && !begins) {
		snprintf(pg->sqlstate, sizeof(pg->sqlstate), "08006");
		return -EIO;
	}
	pg->in_tx = false;
	return pg_reconnect(pg);
}

/*
 * A COMMIT that succeeded with a WARNING: the one PostgreSQL sends when a
 * commit's wait for the synchronous standby is cancelled ("canceling wait
 * for synchronous replication ... The transaction has already committed
 * locally, but might not have been replicated to the standby"; a cancel
 * request or statement_timeout). It must not be acknowledged: the standby
 * may not have it and a failover would lose it. Its outcome is unknown to
 * the client, as for a commit cut off by a crash.
 */
bool pg_commit_warned(struct lib_pg *pg, const char *sql, int r)
{
	if (r < 0 || !pg->warned || !strstr(sql, "COMMIT"))
		return false;
	snprintf(pg->sqlstate, sizeof(pg->sqlstate), PG_UNREPLICATED);
	return true;
}

int pg_exec_once(struct lib_pg *pg, const char *sql)
{
	PGresult *r;
	ExecStatusType st;
	const char *state;
	int rc;

	pg->warned = false;
	pg->pipe_msg[0] = 0;
	pg->round_trips++;
	r = PQexec(pg->conn, sql);
	st = PQresultStatus(r);
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	snprintf(pg->sqlstate, sizeof(pg->sqlstate), "%s", state ? state : "");
	PQclear(r);
	rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : -EIO;
	return pg_commit_warned(pg, sql, rc) ? -EIO : rc;
}

const char *lib_pg_conninfo(struct lib_pg *pg)
{
	return pg ? pg->conninfo : NULL;
}

/* A failed check of the leader row (store_leader.c) is EREMOTE: another librarian leads. */
int lib_pg_fail(struct lib_pg *pg, struct lib_err *e)
{
	const char *m = pg_message(pg), *p;

	if (!strcmp(pg->sqlstate, PG_UNREPLICATED))
		return lib_fail(
			e, EIO,
			"database error: the commit's wait for the synchronous standby was cancelled (it may be on the primary only): not acknowledged");
	if (!strcmp(pg->sqlstate, LIB_PG_NOT_LEADER)) {
		p = strstr(m, "not the leader");
		return lib_fail(e, EREMOTE, "this librarian is %s", p ? p : m);
	}
	return lib_fail(e, EIO, "database error: %s", m);
}

int64_t lib_pg_round_trips(struct lib_pg *pg)
{
	return pg ? pg->round_trips : 0;
}

int lib_pg_changes(struct lib_pg *pg)
{
	return pg->changes;
}

/* sql with book states expanded and ?N as $N; the highest N in *n. */
static char *pg_translate(const char *sql, int *n)
{
	char *text = lib_sql_expand(sql), *p;
	bool quoted = false;

	*n = 0;
	if (!text)
		return NULL;
	for (p = text; *p; p++) {
		if (*p == '\'')
			quoted = !quoted;
		if (quoted || *p != '?' || p[1] < '1' || p[1] > '9')
			continue;
		*p = '$';
		if (atoi(p + 1) > *n)
			*n = atoi(p + 1);
	}
	return text;
}

struct lib_pgst *lib_pg_prepare(struct lib_pg *pg, const char *sql)
{
	struct lib_pgst *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pg = pg;
	p->sql = pg_translate(sql, &p->nparams);
	if (!p->sql || p->nparams > PG_MAX_PARAMS) {
		free(p->sql);
		free(p);
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "s%d", pg->nprepared++);
	return p;
}

void lib_pg_finalize(struct lib_pgst *p)
{
	if (!p)
		return;
	lib_pg_reset(p);
	for (int i = 0; i < PG_MAX_PARAMS; i++)
		free(p->text[i]);
	free(p->sql);
	free(p);
}

void lib_pg_bind_int64(struct lib_pgst *p, int i, int64_t v)
{
	if (i < 1 || i > p->nparams)
		return;
	snprintf(p->num[i - 1], sizeof(p->num[0]), "%lld", (long long)v);
	p->vals[i - 1] = p->num[i - 1];
	if (!p->types[i - 1])
		p->types[i - 1] = PG_INT8;
}

void lib_pg_bind_text(struct lib_pgst *p, int i, const char *v)
{
	if (i < 1 || i > p->nparams)
		return;
	free(p->text[i - 1]);
	p->text[i - 1] = v ? strdup(v) : NULL;
	p->vals[i - 1] = p->text[i - 1];
	if (!p->types[i - 1])
		p->types[i - 1] = PG_TEXT;
}

/*
 * Prepared on the server the first time on each connection, with the types
 * bound the first time.
 */
bool pg_prepared(struct lib_pgst *p)
{
	PGresult *r;

	if (p->prepared == p->pg->gen)
		return true;
	for (int i = 0; i < p->nparams; i++)
		if (!p->types[i])
			p->types[i] = PG_TEXT;
	r = PQprepare(p->pg->conn, p->name, p->sql, p->nparams, p->types);
	if (PQresultStatus(r) == PGRES_COMMAND_OK)
		p->prepared = p->pg->gen;
	PQclear(r);
	return p->prepared == p->pg->gen;
}

/* Unlike sqlite3_reset(), also forgets the values bound (lib_stmt() clears them anyway). */
void lib_pg_reset(struct lib_pgst *p)
{
	if (!p)
		return;
	PQclear(p->res);
	p->res = NULL;
	p->row = p->nrows = 0;
	for (int i = 0; i < p->nparams; i++)
		p->vals[i] = NULL;
}

static bool pg_has(struct lib_pgst *p, int i)
{
	return p->res && p->row < p->nrows && i >= 0 && i < PQnfields(p->res);
}

int64_t lib_pg_col_int64(struct lib_pgst *p, int i)
{
	const char *v;

	if (!pg_has(p, i) || PQgetisnull(p->res, p->row, i))
		return 0;
	v = PQgetvalue(p->res, p->row, i);
	if (*v == 't' || *v == 'f') /* a boolean, as SQLite's 1 or 0 */
		return *v == 't';
	return strtoll(v, NULL, 10);
}

const char *lib_pg_col_text(struct lib_pgst *p, int i)
{
	if (!pg_has(p, i) || PQgetisnull(p->res, p->row, i))
		return NULL;
	return PQgetvalue(p->res, p->row, i);
}

bool lib_pg_col_null(struct lib_pgst *p, int i)
{
	return !pg_has(p, i) || PQgetisnull(p->res, p->row, i);
}

int lib_pg_col_count(struct lib_pgst *p)
{
	return p->res ? PQnfields(p->res) : 0;
}
