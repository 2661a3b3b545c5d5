// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue in PostgreSQL (docs/HA.md): the connection, the schema and
 * the statement calls of store.h (lib_bind_*, lib_step, lib_col_*) over
 * libpq. A statement's SQL is the one the SQLite store runs, with book
 * state names expanded and ?N written $N; it is prepared on the server the
 * first time it runs, with the types of the values bound then (bigint or
 * text; a parameter never bound is text), and runs as a prepared statement
 * after that: one round trip a statement.
 *
 * The catalogue is chosen by `database`: a libpq URI (postgresql://... or
 * postgres://...) is this store, anything else a SQLite file.
 *
 * A connection that breaks (the server died, a failover of the database:
 * docs/HA.md, "PostgreSQL with pg_auto_failover") is made again, from the
 * same URI, at the start of the next transaction or of the next statement
 * outside one, never in the middle of a transaction: the statements of a
 * transaction whose connection broke all fail, the caller rolls it back and
 * answers an error, so nothing is acknowledged that the server did not
 * commit. With several hosts and target_session_attrs=read-write in the URI,
 * libpq tries each and keeps the primary. Statements are prepared again on
 * the new connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#include "server.h"
#include "store.h"

#define PG_MAX_PARAMS 16
#define PG_MAX_PENDING 32
#define PG_PIPE_CHUNK 256 /* statements per pipeline: their replies fit the socket buffers */
#define PG_INT8 20
#define PG_TEXT 25
#define PG_UNREPLICATED "01000" /* a COMMIT that warned: see pg_commit_warned() */

struct lib_pg {
	PGconn *conn;
	char *conninfo;
	const char *session; /* SET ... run on every new connection */
	char sqlstate[6]; /* of the last failed lib_pg_exec() */
	int changes; /* rows of the last INSERT, UPDATE or DELETE */
	int nprepared; /* names of prepared statements: s0, s1, ... */
	int gen; /* the connection's number: 1, then one more at each reconnect */
	bool in_tx; /* a transaction began on this connection and has not ended */
	bool warned; /* the server sent a WARNING since the last statement began */
	/*
	 * Transaction control not sent yet (BEGIN, SAVEPOINT req, RELEASE
	 * SAVEPOINT req): it goes in the same round trip as the next statement
	 * (pg_pipe_*), or is dropped when nothing came between a SAVEPOINT and
	 * its RELEASE or undo. begin_pending: the BEGIN is among them, nothing
	 * of the transaction reached the server yet.
	 */
	const char *pending[PG_MAX_PENDING]; /* NULL: a statement (below) */
	struct lib_pgst *pend_st[PG_MAX_PENDING]; /* a write whose result nobody reads */
	char **pend_vals[PG_MAX_PENDING]; /* its values (copied) */
	int npending;
	bool begin_pending;
	char pipe_msg[512]; /* the first error of the last pipeline, "" if none */
	/*
	 * A pipeline failed that carried an earlier request's RELEASE (its
	 * writes waited for the commit): that request cannot be told apart
	 * from the failing one, so the round's COMMIT is refused (every
	 * request of the round fails; none is acknowledged).
	 */
	bool pipe_released, poisoned;
	int64_t round_trips; /* since the connection was opened (stats: db.round_trips) */
};

struct lib_pgst {
	struct lib_pg *pg;
	char name[16];
	char *sql;
	int nparams;
	int prepared; /* the connection (lib_pg.gen) it was prepared on, 0 if none */
	unsigned int types[PG_MAX_PARAMS];
	const char *vals[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
	char *text[PG_MAX_PARAMS];
	PGresult *res;
	int row, nrows;
};

/*
 * The schema (version 3 of the SQLite store's): integers are bigint, text
 * compares bytewise (COLLATE "C") as in SQLite, and total() and
 * group_concat() are aggregates of their SQLite meaning.
 */
static const char pg_schema_sql[] =
	"CREATE AGGREGATE total(bigint) (SFUNC = int8pl, STYPE = bigint, INITCOND = '0');"
	"CREATE FUNCTION lfs_concat(a text, v anyelement, sep text) RETURNS text LANGUAGE sql"
	" IMMUTABLE AS $$SELECT CASE WHEN v IS NULL THEN a WHEN a IS NULL THEN v::text"
	" ELSE a || sep || v::text END$$;"
	"CREATE FUNCTION lfs_concat(a text, v anyelement) RETURNS text LANGUAGE sql IMMUTABLE AS"
	" $$SELECT lfs_concat(a, v, ',')$$;"
	"CREATE AGGREGATE group_concat(anyelement) (SFUNC = lfs_concat, STYPE = text);"
	"CREATE AGGREGATE group_concat(anyelement, text) (SFUNC = lfs_concat, STYPE = text);"
	"CREATE TABLE meta(key text COLLATE \"C\" PRIMARY KEY, value text);"
	"CREATE TABLE nodes(name text COLLATE \"C\" PRIMARY KEY,"
	" state text NOT NULL DEFAULT 'online');"
	"CREATE TABLE igs(ig bigint PRIMARY KEY, node text COLLATE \"C\" NOT NULL,"
	" books bigint NOT NULL, free bigint NOT NULL, zero bigint NOT NULL DEFAULT 0);"
	"CREATE TABLE books(id bigint PRIMARY KEY, state bigint NOT NULL, shelf bigint,"
	" seq bigint, zeroed bigint NOT NULL DEFAULT 0);"
	"CREATE INDEX books_free ON books(id) WHERE state = BOOK_FREE;"
	"CREATE INDEX books_zombie ON books(id) WHERE state = BOOK_ZOMBIE;"
	"CREATE INDEX books_zero ON books(id) WHERE state = BOOK_FREE AND zeroed = 1;"
	"CREATE UNIQUE INDEX books_shelf ON books(shelf, seq) WHERE shelf IS NOT NULL;"
	"CREATE TABLE shelves(id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" name text COLLATE \"C\" NOT NULL UNIQUE, uuid text COLLATE \"C\" NOT NULL UNIQUE,"
	" owner text COLLATE \"C\" NOT NULL, ctime bigint NOT NULL, mtime bigint NOT NULL,"
	" books bigint NOT NULL DEFAULT 0, gen bigint NOT NULL DEFAULT 0,"
	" tenant text COLLATE \"C\" NOT NULL DEFAULT '');"
	"CREATE INDEX shelves_tenant ON shelves(tenant, name, books);"
	"CREATE INDEX shelves_owner ON shelves(owner, books);"
	"CREATE TABLE attrs(shelf bigint NOT NULL, key text COLLATE \"C\" NOT NULL,"
	" value text NOT NULL, PRIMARY KEY(shelf, key));"
	"CREATE TABLE activations(shelf bigint NOT NULL, node text COLLATE \"C\" NOT NULL,"
	" mode text NOT NULL, since bigint NOT NULL, PRIMARY KEY(shelf, node));"
	"CREATE INDEX activations_node ON activations(node);"
	"CREATE TABLE access(shelf bigint NOT NULL, who text COLLATE \"C\" NOT NULL,"
	" level bigint NOT NULL, PRIMARY KEY(shelf, who));"
	"CREATE INDEX access_who ON access(who, shelf);"
	"INSERT INTO meta(key, value) VALUES ('schema_version', '3');";

bool lib_store_is_pg(const char *path)
{
	return path && (!strncmp(path, "postgresql://", 13) || !strncmp(path, "postgres://", 11));
}

const char *lib_pg_conninfo(struct lib_store *s)
{
	return s->pg ? s->pg->conninfo : NULL;
}

/* The server's last message, without its newline. */
static const char *pg_message(struct lib_pg *pg)
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

/* A failed check of the leader row (store_leader.c) is EREMOTE: another librarian leads. */
int lib_pg_fail(struct lib_store *s, struct lib_err *e)
{
	const char *m = pg_message(s->pg), *p;

	if (!strcmp(s->pg->sqlstate, PG_UNREPLICATED))
		return lib_fail(
			e, EIO,
			"database error: the commit's wait for the synchronous standby was cancelled (it may be on the primary only): not acknowledged");
	if (!strcmp(s->pg->sqlstate, LIB_PG_NOT_LEADER)) {
		p = strstr(m, "not the leader");
		return lib_fail(e, EREMOTE, "this librarian is %s", p ? p : m);
	}
	return lib_fail(e, EIO, "database error: %s", m);
}

static bool pg_broken(struct lib_pg *pg)
{
	return PQstatus(pg->conn) != CONNECTION_OK;
}

/*
 * A new connection for a broken one: PQreset() connects again with the
 * same conninfo (every host of it in turn); one attempt, bounded by the
 * URI's connect_timeout. 0, or -EIO if no server took it.
 */
static int pg_reconnect(struct lib_pg *pg)
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
static int pg_ready(struct lib_pg *pg, bool begins)
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

/* The server's notices: a plain WARNING (01000) is remembered (pg_commit_warned()). */
static void pg_notice(void *arg, const PGresult *r)
{
	struct lib_pg *pg = arg;
	const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	if (sev && !strcmp(sev, "WARNING") && state && !strcmp(state, PG_UNREPLICATED))
		pg->warned = true;
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
static bool pg_commit_warned(struct lib_pg *pg, const char *sql, int r)
{
	if (r < 0 || !pg->warned || !strstr(sql, "COMMIT"))
		return false;
	snprintf(pg->sqlstate, sizeof(pg->sqlstate), PG_UNREPLICATED);
	return true;
}

static int pg_exec_once(struct lib_pg *pg, const char *sql)
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

/* The control statements that wait for the next round trip (their text, kept by address). */
static const char *const pg_deferrable[] = { "BEGIN", "SAVEPOINT req", "RELEASE SAVEPOINT req" };
#define PG_UNDO "ROLLBACK TO SAVEPOINT req; RELEASE SAVEPOINT req"

static const char *pg_deferred(const char *sql)
{
	for (size_t i = 0; i < sizeof(pg_deferrable) / sizeof(pg_deferrable[0]); i++)
		if (!strcmp(sql, pg_deferrable[i]))
			return pg_deferrable[i];
	return NULL;
}

static bool pg_last_pending(struct lib_pg *pg, const char *sql)
{
	return pg->npending && pg->pending[pg->npending - 1] == sql; /* pg_deferrable[] */
}

/* Forget the waiting entries from index from on (their copied values freed). */
static void pg_pending_drop(struct lib_pg *pg, int from)
{
	for (int i = from; i < pg->npending; i++) {
		for (int k = 0; pg->pend_vals[i] && k < PG_MAX_PARAMS; k++)
			free(pg->pend_vals[i][k]);
		free(pg->pend_vals[i]);
		pg->pend_vals[i] = NULL;
	}
	if (from < pg->npending)
		pg->npending = from;
	if (!from)
		pg->begin_pending = false;
}

/* Waiting writes (not control statements). */
static int pg_pending_writes(struct lib_pg *pg)
{
	int n = 0;

	for (int i = 0; i < pg->npending; i++)
		n += !pg->pending[i];
	return n;
}

static int pg_flush(struct lib_pg *pg);
static int pg_pipe_text(struct lib_pg *pg, const char *sql, bool ends);

/*
 * Keep a control statement for the next round trip. A RELEASE right after
 * its SAVEPOINT (a request that ran no statement) cancels it: neither is
 * sent. A full queue (never, with the loop's pattern) is sent on its own.
 */
static int pg_defer(struct lib_store *s, const char *sql)
{
	struct lib_pg *pg = s->pg;
	int r;

	if (sql == pg_deferrable[2] && pg_last_pending(pg, pg_deferrable[1])) {
		pg->npending--;
		return 0;
	}
	if (sql == pg_deferrable[0]) {
		pg->poisoned = false;
		r = pg_ready(pg, true);
		if (r < 0)
			return r;
		/* the transaction a failed BEGIN ...; SELECT left (its error was the caller's) */
		if (PQtransactionStatus(pg->conn) == PQTRANS_INERROR)
			pg_exec_once(pg, "ROLLBACK");
		pg->begin_pending = true;
		pg->in_tx = true;
	}
	if (pg->npending == PG_MAX_PENDING && (r = pg_flush(pg)) < 0)
		return r;
	pg->pending[pg->npending++] = sql;
	return 0;
}

/* sql after the control statements not sent yet, in one text (malloc'd). */
static char *pg_with_pending(struct lib_pg *pg, const char *sql)
{
	size_t len = strlen(sql) + 1;
	char *t;

	for (int i = 0; i < pg->npending; i++)
		len += strlen(pg->pending[i]) + 2;
	t = malloc(len);
	if (!t)
		return NULL;
	t[0] = 0;
	for (int i = 0; i < pg->npending; i++) {
		strcat(t, pg->pending[i]);
		strcat(t, "; ");
	}
	strcat(t, sql);
	return t;
}

/* After a round trip: whether a transaction is open (unknown on a broken connection: kept). */
static void pg_track(struct lib_pg *pg, bool begins, bool ends, int r)
{
	if (r < 0 && pg->pipe_released)
		pg->poisoned = true;
	pg->pipe_released = false;
	if (ends)
		pg->poisoned = false;
	if (begins && r == 0)
		pg->in_tx = true;
	else if (!pg_broken(pg))
		pg->in_tx = PQtransactionStatus(pg->conn) != PQTRANS_IDLE;
	if (ends)
		pg->in_tx = false;
}

/*
 * A transaction's control (BEGIN, SAVEPOINT, COMMIT, ROLLBACK) or other SQL.
 * BEGIN, SAVEPOINT req and RELEASE SAVEPOINT req wait for the next round
 * trip (pg_defer()); anything else is sent with them in one text. A
 * transaction whose first round trip finds the connection broken (the
 * server went away since the last transaction) connects again and runs
 * once more: it changed nothing. A COMMIT or ROLLBACK ends the transaction
 * whatever its outcome.
 */
int lib_pg_exec(struct lib_store *s, const char *sql)
{
	struct lib_pg *pg = s->pg;
	const char *d = pg_deferred(sql);
	bool begins = !strncmp(sql, "BEGIN", 5) || pg->begin_pending;
	bool ends = strstr(sql, "COMMIT") || !strcmp(sql, "ROLLBACK");
	char *text;
	int r;

	if (d)
		return pg_defer(s, d);
	if (!strcmp(sql, PG_UNDO)) {
		/* the request's waiting writes were never run; nor its savepoint, if it waits too */
		int i = pg->npending;

		while (i > 0 && !pg->pending[i - 1])
			i--;
		pg_pending_drop(pg, i);
		if (pg_last_pending(pg, pg_deferrable[1])) {
			pg->npending--;
			return 0;
		}
	}
	if (!strcmp(sql, "ROLLBACK")) {
		bool unsent = pg->begin_pending;

		pg_pending_drop(pg, 0);
		if (unsent) {
			pg->in_tx = false;
			return 0;
		}
	}
	if (ends && strstr(sql, "COMMIT") && pg->poisoned) {
		pg_pending_drop(pg, 0);
		snprintf(pg->sqlstate, sizeof(pg->sqlstate), "XX000");
		if (!pg->pipe_msg[0])
			snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "a request's writes failed");
		return -EIO; /* the caller rolls back */
	}
	if (pg_pending_writes(pg))
		return pg_pipe_text(pg, sql, ends);
	text = pg_with_pending(pg, sql);
	pg->npending = 0;
	pg->begin_pending = false;
	if (!text)
		return -ENOMEM;
	r = pg_ready(pg, begins);
	if (r == 0) {
		if (begins && PQtransactionStatus(pg->conn) == PQTRANS_INERROR)
			pg_exec_once(pg, "ROLLBACK");
		r = pg_exec_once(pg, text);
		if (r < 0 && begins && pg_broken(pg) && pg_reconnect(pg) == 0)
			r = pg_exec_once(pg, text);
	}
	free(text);
	pg_track(pg, begins, ends, r);
	return r;
}

bool lib_pg_in_transaction(struct lib_store *s)
{
	return s->pg->begin_pending || PQtransactionStatus(s->pg->conn) != PQTRANS_IDLE;
}

int64_t lib_pg_round_trips(struct lib_store *s)
{
	return s->pg ? s->pg->round_trips : 0;
}

int lib_pg_changes(struct lib_store *s)
{
	return s->pg->changes;
}

/* A one-value query's answer as an integer; dflt if it has none (or NULL). */
static int pg_int(struct lib_store *s, const char *sql, int dflt)
{
	PGresult *r = PQexec(s->pg->conn, sql);
	int v = dflt;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		v = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

/* The schema's version, 0 if there is no catalogue yet, -1 on error. */
static int pg_version(struct lib_store *s)
{
	int has = pg_int(s,
			 "SELECT count(*) FROM pg_tables WHERE tablename = 'meta'"
			 " AND schemaname = current_schema()",
			 -1);

	if (has <= 0)
		return has;
	return pg_int(s, "SELECT value FROM meta WHERE key = 'schema_version'", -1);
}

/*
 * The leader row in a catalogue made before it (the same schema version: a
 * table and a function added, nothing changed). Concurrent librarians
 * starting together: the creation is serialised by an advisory lock.
 */
static int pg_leader_table(struct lib_store *s, const char *where, struct lib_err *e)
{
	int r = lib_pg_exec(s, "BEGIN; SELECT pg_advisory_xact_lock(1279677267)");

	if (r == 0)
		r = lib_pg_exec(s, lib_pg_leader_sql);
	if (r == 0)
		r = lib_pg_exec(s, "COMMIT");
	if (r < 0) {
		lib_fail(e, EIO, "%s: cannot create the leader row: %s", where, pg_message(s->pg));
		lib_pg_exec(s, "ROLLBACK");
	}
	return r;
}

static int pg_schema(struct lib_store *s, const char *where, bool create, struct lib_err *e)
{
	char *text;
	int v = pg_version(s), r;

	if (v == LIB_SCHEMA_VERSION)
		return create ? pg_leader_table(s, where, e) : 0;
	if (v < 0)
		return lib_fail(e, EIO, "%s: cannot read the catalogue's schema version: %s", where,
				pg_message(s->pg));
	if (v > 0)
		return lib_fail(
			e, EPROTO,
			"%s: catalogue schema version %d is not supported (this librarian knows version %d)",
			where, v, LIB_SCHEMA_VERSION);
	if (!create)
		return lib_fail(e, ENOENT, "%s: not a librarian catalogue (empty)", where);
	text = lib_sql_expand(pg_schema_sql);
	if (!text)
		return lib_fail(e, ENOMEM, "out of memory");
	r = lib_pg_exec(s, "BEGIN");
	if (r == 0)
		r = lib_pg_exec(s, text);
	if (r == 0)
		r = lib_pg_exec(s, lib_pg_leader_sql);
	if (r == 0)
		r = lib_pg_exec(s, "COMMIT");
	free(text);
	if (r < 0) {
		lib_fail(e, EIO, "%s: cannot create the catalogue: %s", where, pg_message(s->pg));
		lib_pg_exec(s, "ROLLBACK");
	}
	return r;
}

/* Where the errors say the catalogue is: the URI without a password. */
static void pg_where(const char *conninfo, char *buf, size_t len)
{
	const char *at = strchr(conninfo, '@'), *sl = strstr(conninfo, "://");

	if (at && sl && at > sl)
		snprintf(buf, len, "%.*s***%s", (int)(sl + 3 - conninfo), conninfo, at);
	else
		snprintf(buf, len, "%s", conninfo);
}

int lib_pg_open(struct lib_store *s, const char *conninfo, bool create, bool reader,
		struct lib_err *e)
{
	char where[256];

	pg_where(conninfo, where, sizeof(where));
	s->pg = calloc(1, sizeof(*s->pg));
	if (!s->pg || !(s->pg->conninfo = strdup(conninfo)))
		return lib_fail(e, ENOMEM, "out of memory");
	s->pg->gen = 1;
	s->pg->session = reader ? "SET default_transaction_read_only = on" :
				  "SET client_min_messages = warning";
	s->pg->conn = PQconnectdb(conninfo);
	if (!s->pg->conn || PQstatus(s->pg->conn) != CONNECTION_OK)
		return lib_fail(e, EIO, "%s: cannot connect: %s", where, pg_message(s->pg));
	PQsetNoticeReceiver(s->pg->conn, pg_notice, s->pg); /* kept by PQreset() */
	if (lib_pg_exec(s, s->pg->session) < 0)
		return lib_fail(e, EIO, "%s: %s", where, pg_message(s->pg));
	if (reader)
		return 0;
	return pg_schema(s, where, create, e);
}

void lib_pg_close(struct lib_store *s)
{
	if (!s->pg)
		return;
	pg_pending_drop(s->pg, 0);
	if (s->pg->conn)
		PQfinish(s->pg->conn);
	free(s->pg->conninfo);
	free(s->pg);
	s->pg = NULL;
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

struct lib_pgst *lib_pg_prepare(struct lib_store *s, const char *sql)
{
	struct lib_pgst *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pg = s->pg;
	p->sql = pg_translate(sql, &p->nparams);
	if (!p->sql || p->nparams > PG_MAX_PARAMS) {
		free(p->sql);
		free(p);
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "s%d", s->pg->nprepared++);
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
static bool pg_prepared(struct lib_pgst *p)
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

/* The end of a pipeline: every reply read, the connection out of pipeline mode. */
static void pg_pipe_drain(struct lib_pg *pg)
{
	PGresult *r;
	int nulls = 0;

	/* bounded: a reply ends with NULL, the pipeline with its SYNC; a broken connection ends it */
	while (nulls < 2 * PG_PIPE_CHUNK + 2 * PG_MAX_PENDING + 4) {
		r = PQgetResult(pg->conn);
		if (!r) {
			if (pg_broken(pg))
				break;
			nulls++;
			continue;
		}
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			break;
		}
		PQclear(r);
	}
	PQexitPipelineMode(pg->conn);
}

/*
 * One reply of a pipeline (its result and the NULL after it): the result,
 * or NULL with pg->pipe_msg and pg->sqlstate naming the first error.
 */
static PGresult *pg_pipe_result(struct lib_pg *pg)
{
	PGresult *r = PQgetResult(pg->conn), *end;
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	const char *state;

	if (r && (end = PQgetResult(pg->conn)))
		PQclear(end); /* never: one result per statement in pipeline mode */
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	if (!pg->pipe_msg[0]) {
		state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
		snprintf(pg->sqlstate, sizeof(pg->sqlstate), "%s", state ? state : "08006");
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s",
			 r ? PQresultErrorMessage(r) : PQerrorMessage(pg->conn));
		if (!pg->pipe_msg[0])
			snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "statement not run");
	}
	PQclear(r);
	return NULL;
}

/* Into pipeline mode, the control statements waiting sent first: 0 or -EIO. */
static int pg_pipe_begin(struct lib_pg *pg)
{
	pg->pipe_msg[0] = 0;
	pg->warned = false;
	if (!PQenterPipelineMode(pg->conn))
		return -EIO;
	for (int i = 0; i < pg->npending; i++) {
		struct lib_pgst *p = pg->pend_st[i];

		if (pg->pending[i] == pg_deferrable[2])
			pg->pipe_released = true;
		if (pg->pending[i] ? !PQsendQueryParams(pg->conn, pg->pending[i], 0, NULL, NULL,
							NULL, NULL, 0) :
				     !PQsendQueryPrepared(pg->conn, p->name, p->nparams,
							  (const char *const *)pg->pend_vals[i],
							  NULL, NULL, 0))
			return -EIO;
	}
	return 0;
}

/* The replies of the control statements sent first: 0 or -EIO (the first error kept). */
static int pg_pipe_controls(struct lib_pg *pg, int n)
{
	int r = 0;

	for (int i = 0; i < n; i++) {
		PGresult *res = pg_pipe_result(pg);

		if (!res)
			r = -EIO;
		PQclear(res);
	}
	return r;
}

static int pg_send(struct lib_pgst *p)
{
	return PQsendQueryPrepared(p->pg->conn, p->name, p->nparams, p->vals, NULL, NULL, 0) ? 0 :
											       -EIO;
}

/* A statement's result taken: its rows, or the rows it changed. */
static void pg_took(struct lib_pgst *p, PGresult *res)
{
	p->res = res;
	if (strncmp(PQcmdStatus(res), "SELECT", 6))
		p->pg->changes = atoi(PQcmdTuples(res));
	p->row = 0;
	p->nrows = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : 0;
}

/*
 * The statement bound in p, after the control statements waiting, in one
 * round trip (pipeline mode); its result in p->res. 0 or -EIO.
 */
static int pg_pipe_step(struct lib_pgst *p)
{
	struct lib_pg *pg = p->pg;
	int n = pg->npending, r;
	bool began = n > 0 && pg->pending[0] == pg_deferrable[0];
	PGresult *res;

	pg->round_trips++;
	r = pg_pipe_begin(pg);
	if (r == 0)
		r = pg_send(p);
	if (r == 0 && !PQpipelineSync(pg->conn))
		r = -EIO;
	pg_pending_drop(pg, 0);
	if (r == 0) {
		r = pg_pipe_controls(pg, n);
		res = pg_pipe_result(pg);
		if (res && r == 0)
			pg_took(p, res);
		else
			PQclear(res);
		r = res && r == 0 ? 0 : -EIO;
	} else {
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s", PQerrorMessage(pg->conn));
		PQpipelineSync(pg->conn);
	}
	pg_pipe_drain(pg);
	pg_track(pg, began, false, r);
	return r;
}

/* Ready to run p: a connection (made again if the transaction sent nothing yet), p prepared. */
static bool pg_stmt_ready(struct lib_pgst *p)
{
	if (pg_ready(p->pg, p->pg->begin_pending) < 0)
		return false;
	if (p->prepared != p->pg->gen)
		p->pg->round_trips++;
	return pg_prepared(p);
}

int lib_pg_step(struct lib_pgst *p)
{
	ExecStatusType st;

	if (p->res)
		return ++p->row < p->nrows ? LIB_ROW : LIB_DONE;
	if (!pg_stmt_ready(p))
		return SQLITE_ERROR;
	if (p->pg->npending) {
		if (pg_pipe_step(p) < 0)
			return SQLITE_ERROR;
		return p->nrows ? LIB_ROW : LIB_DONE;
	}
	p->pg->pipe_msg[0] = 0;
	p->pg->round_trips++;
	p->res = PQexecPrepared(p->pg->conn, p->name, p->nparams, p->vals, NULL, NULL, 0);
	st = PQresultStatus(p->res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		PQclear(p->res);
		p->res = NULL;
		return SQLITE_ERROR;
	}
	pg_took(p, p->res);
	return p->nrows ? LIB_ROW : LIB_DONE;
}

/*
 * Statements [from, to) of a run_many, after the control statements waiting,
 * in one round trip; each one's changed rows in changes[]. 0 or -EIO (the
 * first error in pg->pipe_msg; the statements after it were not run).
 */
static int pg_pipe_chunk(struct lib_pgst *p, lib_st *st, int from, int to, lib_bind_fn *bind,
			 void *arg, int *changes, lib_run_row_fn *row)
{
	struct lib_pg *pg = p->pg;
	int n = pg->npending, r, i;
	bool began = n > 0 && pg->pending[0] == pg_deferrable[0];

	pg->round_trips++;
	r = pg_pipe_begin(pg);
	for (i = from; i < to && r == 0; i++) {
		if (i > from)
			bind(st, i, arg);
		r = pg_send(p);
	}
	if (r == 0 && !PQpipelineSync(pg->conn))
		r = -EIO;
	pg_pending_drop(pg, 0);
	if (r == 0) {
		r = pg_pipe_controls(pg, n);
		for (i = from; i < to; i++) {
			PGresult *res = pg_pipe_result(pg);

			if (changes)
				changes[i] = res ? atoi(PQcmdTuples(res)) : 0;
			for (int k = 0; row && res && k < PQntuples(res) && r == 0; k++)
				r = row(arg, i, strtoll(PQgetvalue(res, k, 0), NULL, 10));
			if (!res)
				r = -EIO;
			PQclear(res);
		}
	} else {
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s", PQerrorMessage(pg->conn));
		PQpipelineSync(pg->conn);
	}
	pg_pipe_drain(pg);
	pg_track(pg, began, false, r);
	return r;
}

/*
 * sql (statements without parameters, separated by ";") after the waiting
 * entries, in one round trip: how a COMMIT goes with the last request's
 * writes and RELEASE. 0 or -EIO (the first error in pipe_msg).
 */
static int pg_pipe_text(struct lib_pg *pg, const char *sql, bool ends)
{
	char *text = strdup(sql), *part, *save = NULL;
	int n = pg->npending, r;
	bool began = n > 0 && pg->pending[0] == pg_deferrable[0];

	if (!text)
		return -ENOMEM;
	pg->round_trips++;
	r = pg_pipe_begin(pg);
	for (part = strtok_r(text, ";", &save); part && r == 0; part = strtok_r(NULL, ";", &save)) {
		while (*part == ' ')
			part++;
		if (!*part)
			continue;
		r = PQsendQueryParams(pg->conn, part, 0, NULL, NULL, NULL, NULL, 0) ? 0 : -EIO;
		n++;
	}
	if (r == 0 && !PQpipelineSync(pg->conn))
		r = -EIO;
	pg_pending_drop(pg, 0);
	if (r == 0) {
		r = pg_pipe_controls(pg, n);
	} else {
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s", PQerrorMessage(pg->conn));
		PQpipelineSync(pg->conn);
	}
	pg_pipe_drain(pg);
	free(text);
	if (pg_commit_warned(pg, sql, r))
		r = -EIO;
	pg_track(pg, began, ends, r);
	return r;
}

/* The waiting entries alone, in one round trip: 0 or -EIO (the first error in pipe_msg). */
static int pg_flush(struct lib_pg *pg)
{
	int n = pg->npending, r;
	bool began = n > 0 && pg->pending[0] == pg_deferrable[0];

	if (!n)
		return 0;
	if (pg_ready(pg, pg->begin_pending) < 0) {
		pg_pending_drop(pg, 0);
		return -EIO;
	}
	pg->round_trips++;
	r = pg_pipe_begin(pg);
	if (r == 0 && !PQpipelineSync(pg->conn))
		r = -EIO;
	pg_pending_drop(pg, 0);
	if (r == 0) {
		r = pg_pipe_controls(pg, n);
	} else {
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s", PQerrorMessage(pg->conn));
		PQpipelineSync(pg->conn);
	}
	pg_pipe_drain(pg);
	pg_track(pg, began, false, r);
	return r;
}

int lib_pg_defer(lib_st *st)
{
	struct lib_pgst *p = st->pg;
	struct lib_pg *pg = p->pg;
	char **vals;

	if (!pg_stmt_ready(p))
		return -EIO;
	if (pg->npending == PG_MAX_PENDING && pg_flush(pg) < 0)
		return -EIO;
	vals = calloc(PG_MAX_PARAMS, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (int i = 0; i < p->nparams; i++)
		if (p->vals[i] && !(vals[i] = strdup(p->vals[i]))) {
			for (int k = 0; k < i; k++)
				free(vals[k]);
			free(vals);
			return -ENOMEM;
		}
	pg->pending[pg->npending] = NULL;
	pg->pend_st[pg->npending] = p;
	pg->pend_vals[pg->npending++] = vals;
	lib_pg_reset(p);
	return 0;
}

int lib_pg_run_many(lib_st *st, int n, lib_bind_fn *bind, void *arg, int *changes,
		    lib_run_row_fn *row)
{
	struct lib_pgst *p = st->pg;
	int r = 0;

	for (int from = 0; from < n && r == 0; from += PG_PIPE_CHUNK) {
		lib_pg_reset(p);
		bind(st, from, arg); /* the first binding gives the types to prepare with */
		if (!pg_stmt_ready(p))
			return -EIO;
		r = pg_pipe_chunk(p, st, from, from + PG_PIPE_CHUNK < n ? from + PG_PIPE_CHUNK : n,
				  bind, arg, changes, row);
	}
	lib_pg_reset(p);
	return r;
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
