// SPDX-License-Identifier: GPL-2.0
/*
 * How the PostgreSQL store's statements reach the server (docs/HA.md):
 * transaction control deferred to the next round trip, writes whose
 * results nobody reads kept until then, and pipelines that send them with
 * the next statement, so that a request costs as few round trips as it can.
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

#include "store_pg_io.h"

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
void pg_pending_drop(struct lib_pg *pg, int from)
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

static int pg_pipe_text(struct lib_pg *pg, const char *sql, bool ends);

/*
 * Keep a control statement for the next round trip. A RELEASE right after
 * its SAVEPOINT (a request that ran no statement) cancels it: neither is
 * sent. A full queue (never, with the loop's pattern) is sent on its own.
 */
static int pg_defer(struct lib_pg *pg, const char *sql)
{
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
	if (pg->npending == PG_MAX_PENDING && (r = lib_pg_flush(pg)) < 0)
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
	/* a write that changed other rows than it had to aborted nothing: only its request fails */
	if (r < 0 && pg->pipe_released && (pg->pipe_error || !pg->pipe_mismatch))
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
int lib_pg_exec(struct lib_pg *pg, const char *sql)
{
	const char *d = pg_deferred(sql);
	bool begins = !strncmp(sql, "BEGIN", 5) || pg->begin_pending;
	bool ends = strstr(sql, "COMMIT") || !strcmp(sql, "ROLLBACK");
	char *text;
	int r;

	if (d)
		return pg_defer(pg, d);
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

bool lib_pg_in_transaction(struct lib_pg *pg)
{
	return pg->begin_pending || PQtransactionStatus(pg->conn) != PQTRANS_IDLE;
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
	pg->pipe_error = true;
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
	pg->round_trips++;
	pg->pipe_msg[0] = 0;
	pg->pipe_error = false;
	pg->pipe_mismatch = false;
	pg->warned = false;
	pg->nsent = pg->npending;
	for (int i = 0; i < pg->npending; i++)
		pg->sent_want[i] = pg->pending[i] ? -1 : pg->pend_want[i];
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

/* A waiting write that changed other rows than it had to: the pipeline fails as if it had. */
static int pg_pipe_expected(struct lib_pg *pg, int i, PGresult *res)
{
	int got;

	if (!res || i >= pg->nsent || pg->sent_want[i] < 0)
		return 0;
	got = atoi(PQcmdTuples(res));
	if (got == pg->sent_want[i])
		return 0;
	pg->mismatch = true;
	pg->pipe_mismatch = true;
	if (!pg->pipe_msg[0])
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg),
			 "a write changed %d rows where it had to change %d", got,
			 pg->sent_want[i]);
	return -EIO;
}

/*
 * The replies of the control statements and waiting writes sent first: 0
 * or -EIO (the first error kept; a write that changed other rows than it
 * had to is one).
 */
static int pg_pipe_controls(struct lib_pg *pg, int n)
{
	int r = 0;

	for (int i = 0; i < n; i++) {
		PGresult *res = pg_pipe_result(pg);

		if (!res || pg_pipe_expected(pg, i, res) < 0)
			r = -EIO;
		PQclear(res);
	}
	return r;
}

/* Whether the waiting entries begin a transaction (a pipeline that sends them does). */
static bool pg_pipe_begins(struct lib_pg *pg)
{
	return pg->npending > 0 && pg->pending[0] == pg_deferrable[0];
}

/*
 * The pipeline's SYNC after all was sent (r: 0 if it was), the waiting
 * entries forgotten: 0, or -EIO with libpq's message in pipe_msg (the
 * pipeline ends with a SYNC all the same, for pg_pipe_drain()).
 */
static int pg_pipe_sync(struct lib_pg *pg, int r)
{
	if (r == 0 && !PQpipelineSync(pg->conn))
		r = -EIO;
	pg_pending_drop(pg, 0);
	if (r < 0) {
		snprintf(pg->pipe_msg, sizeof(pg->pipe_msg), "%s", PQerrorMessage(pg->conn));
		PQpipelineSync(pg->conn);
	}
	return r;
}

/*
 * The pipeline's end: every reply read, a COMMIT among sql (NULL: none)
 * that warned made a failure, the transaction's state tracked. r, or -EIO.
 */
static int pg_pipe_end(struct lib_pg *pg, bool began, bool ends, const char *sql, int r)
{
	pg_pipe_drain(pg);
	if (sql && pg_commit_warned(pg, sql, r))
		r = -EIO;
	pg_track(pg, began, ends, r);
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
	bool began = pg_pipe_begins(pg);
	PGresult *res;

	r = pg_pipe_begin(pg);
	if (r == 0)
		r = pg_send(p);
	r = pg_pipe_sync(pg, r);
	if (r == 0) {
		r = pg_pipe_controls(pg, n);
		res = pg_pipe_result(pg);
		if (res && r == 0)
			pg_took(p, res);
		else
			PQclear(res);
		r = res && r == 0 ? 0 : -EIO;
	}
	return pg_pipe_end(pg, began, false, NULL, r);
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
		return LIB_STEP_ERROR;
	if (p->pg->npending) {
		if (pg_pipe_step(p) < 0)
			return LIB_STEP_ERROR;
		return p->nrows ? LIB_ROW : LIB_DONE;
	}
	p->pg->pipe_msg[0] = 0;
	p->pg->round_trips++;
	p->res = PQexecPrepared(p->pg->conn, p->name, p->nparams, p->vals, NULL, NULL, 0);
	st = PQresultStatus(p->res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		PQclear(p->res);
		p->res = NULL;
		return LIB_STEP_ERROR;
	}
	pg_took(p, p->res);
	return p->nrows ? LIB_ROW : LIB_DONE;
}

/*
 * Statements [from, to) of a run_many, after the control statements waiting,
 * in one round trip; each one's changed rows in changes[]. 0 or -EIO (the
 * first error in pg->pipe_msg; the statements after it were not run).
 */
static int pg_pipe_chunk(struct lib_pgst *p, struct lib_st *st, int from, int to, lib_bind_fn *bind,
			 void *arg, int *changes, lib_run_row_fn *row)
{
	struct lib_pg *pg = p->pg;
	int n = pg->npending, r, i;
	bool began = pg_pipe_begins(pg);

	r = pg_pipe_begin(pg);
	for (i = from; i < to && r == 0; i++) {
		if (i > from)
			bind(st, i, arg);
		r = pg_send(p);
	}
	r = pg_pipe_sync(pg, r);
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
	}
	return pg_pipe_end(pg, began, false, NULL, r);
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
	bool began = pg_pipe_begins(pg);

	if (!text)
		return -ENOMEM;
	r = pg_pipe_begin(pg);
	for (part = strtok_r(text, ";", &save); part && r == 0; part = strtok_r(NULL, ";", &save)) {
		while (*part == ' ')
			part++;
		if (!*part)
			continue;
		r = PQsendQueryParams(pg->conn, part, 0, NULL, NULL, NULL, NULL, 0) ? 0 : -EIO;
		n++;
	}
	free(text);
	r = pg_pipe_sync(pg, r);
	if (r == 0)
		r = pg_pipe_controls(pg, n);
	return pg_pipe_end(pg, began, ends, sql, r);
}

/* The waiting entries alone, in one round trip: 0 or -EIO (the first error in pipe_msg). */
int lib_pg_flush(struct lib_pg *pg)
{
	int n = pg->npending, r;
	bool began = pg_pipe_begins(pg);

	if (!n)
		return 0;
	if (pg_ready(pg, pg->begin_pending) < 0) {
		pg_pending_drop(pg, 0);
		return -EIO;
	}
	r = pg_pipe_sync(pg, pg_pipe_begin(pg));
	if (r == 0)
		r = pg_pipe_controls(pg, n);
	return pg_pipe_end(pg, began, false, NULL, r);
}

bool lib_pg_expecting(struct lib_pg *pg)
{
	for (int i = 0; i < pg->npending; i++)
		if (!pg->pending[i] && pg->pend_want[i] >= 0)
			return true;
	return false;
}

bool lib_pg_mismatch(struct lib_pg *pg, bool clear)
{
	bool m = pg->mismatch;

	if (clear)
		pg->mismatch = false;
	return m;
}

int lib_pg_defer(struct lib_pgst *p)
{
	return lib_pg_defer_expect(p, -1);
}

int lib_pg_defer_expect(struct lib_pgst *p, int want)
{
	struct lib_pg *pg = p->pg;
	char **vals;

	if (!pg_stmt_ready(p))
		return -EIO;
	if (pg->npending == PG_MAX_PENDING && lib_pg_flush(pg) < 0)
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
	pg->pend_want[pg->npending] = want;
	pg->pend_st[pg->npending] = p;
	pg->pend_vals[pg->npending++] = vals;
	lib_pg_reset(p);
	return 0;
}

int lib_pg_run_many(struct lib_pgst *p, struct lib_st *st, int n, lib_bind_fn *bind, void *arg,
		    int *changes, lib_run_row_fn *row)
{
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
