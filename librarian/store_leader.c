// SPDX-License-Identifier: GPL-2.0
/*
 * The leader row of a PostgreSQL catalogue (docs/HA.md, "The leader row"):
 * one active librarian, any number of standbys. Every time in it is the
 * database's clock (clock_timestamp()), never a librarian's.
 *
 * A librarian takes the lead only when the row has expired (or, at its own
 * start, when the row names it and the process that held it is dead: a
 * restart; leader.c decides), and taking it bumps the epoch.
 * The leader renews the expiry every leader_refresh_ms while its epoch is
 * still the row's. Every commit of the leader's writing connection runs
 * lfs_leader_check(epoch, true) in the same round trip as the COMMIT: the
 * row is share-locked there, so a takeover's UPDATE comes wholly before (the
 * check fails, nothing commits) or after the commit. The lease thread's
 * reads start with lfs_leader_check(epoch, false). A failed check is
 * SQLSTATE LF001, which lib_pg_fail() reports as EREMOTE.
 *
 * SQLite has no leader row: one librarian per catalogue file (its .lock).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store_leader.h"

const char lib_pg_leader_sql[] =
	"CREATE TABLE IF NOT EXISTS leader(one int PRIMARY KEY CHECK (one = 1),"
	" epoch bigint NOT NULL, holder text COLLATE \"C\" NOT NULL,"
	" addresses text COLLATE \"C\" NOT NULL, expiry timestamptz NOT NULL);"
	"INSERT INTO leader VALUES (1, 0, '', '', '-infinity') ON CONFLICT DO NOTHING;"
	/* the holder's process (leader.c), added to catalogues made before it */
	"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'leader'::regclass"
	" AND attname = 'instance') THEN ALTER TABLE leader ADD COLUMN"
	" instance text COLLATE \"C\" NOT NULL DEFAULT ''; END IF; END $$;"
	"CREATE OR REPLACE FUNCTION lfs_leader_check(e bigint, lock boolean) RETURNS void"
	" LANGUAGE plpgsql AS $$ DECLARE r record; BEGIN"
	" IF lock THEN SELECT epoch, holder, expiry > clock_timestamp() AS live INTO r"
	"  FROM leader WHERE one = 1 FOR SHARE;"
	" ELSE SELECT epoch, holder, expiry > clock_timestamp() AS live INTO r"
	"  FROM leader WHERE one = 1; END IF;"
	" IF r.epoch IS DISTINCT FROM e OR NOT r.live THEN"
	"  RAISE EXCEPTION USING ERRCODE = 'LF001', MESSAGE = format("
	"  'not the leader: epoch %s is not the current one (the leader row holds epoch %s of %L%s)',"
	"  e, r.epoch, r.holder, CASE WHEN r.live THEN '' ELSE ', expired' END);"
	" END IF; END $$;";

/* The one-row answer of st into *row (the holder's columns); 1 if there was a row. */
static int leader_row(struct lib_store *s, lib_st *st, struct lib_leader_row *row,
		      struct lib_err *e)
{
	int rc = lib_step(st);

	if (rc != LIB_ROW) {
		int r = rc == LIB_DONE ? 0 : lib_sql_fail(s, e);

		lib_reset(st);
		return r;
	}
	row->epoch = lib_col_int64(st, 0);
	snprintf(row->holder, sizeof(row->holder), "%s", lib_col_text(st, 1) ?: "");
	snprintf(row->addresses, sizeof(row->addresses), "%s", lib_col_text(st, 2) ?: "");
	row->live_ms = lib_col_int64(st, 3);
	snprintf(row->instance, sizeof(row->instance), "%s", lib_col_text(st, 4) ?: "");
	lib_reset(st);
	return 1;
}

#define LEADER_COLS                                                       \
	" epoch, holder, addresses, greatest(0, floor(extract(epoch FROM" \
	" greatest(expiry, clock_timestamp()) - clock_timestamp()) * 1000))::bigint, instance"

int lib_store_leader_take(struct lib_store *s, const char *name, const char *addresses,
			  const char *instance, int ttl_ms, const char *restart_of,
			  struct lib_leader_row *row, struct lib_err *e)
{
	lib_st *st = lib_stmt(
		s,
		"UPDATE leader SET epoch = epoch + 1, holder = ?1, addresses = ?2, instance = ?5,"
		" expiry = clock_timestamp() + ?3 * interval '1 millisecond'"
		" WHERE one = 1 AND (expiry <= clock_timestamp() OR (?4 = 1 AND holder = ?1"
		" AND instance = ?6)) RETURNING" LEADER_COLS);
	int r;

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_text(st, 1, name);
	lib_bind_text(st, 2, addresses);
	lib_bind_int64(st, 3, ttl_ms);
	lib_bind_int64(st, 4, restart_of != NULL);
	lib_bind_text(st, 5, instance);
	lib_bind_text(st, 6, restart_of ? restart_of : "");
	r = leader_row(s, st, row, e);
	if (r == 1)
		s->epoch = row->epoch;
	lib_store_forget(s); /* another librarian may have written since */
	return r;
}

int lib_store_leader_renew(struct lib_store *s, int ttl_ms, struct lib_err *e)
{
	struct lib_leader_row row;
	lib_st *st = lib_stmt(s, "UPDATE leader SET expiry = clock_timestamp() + ?2 *"
				 " interval '1 millisecond' WHERE one = 1 AND epoch = ?1"
				 " RETURNING" LEADER_COLS);

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, s->epoch);
	lib_bind_int64(st, 2, ttl_ms);
	return leader_row(s, st, &row, e);
}

int lib_store_leader_read(struct lib_store *s, struct lib_leader_row *row, struct lib_err *e)
{
	lib_st *st = lib_stmt(s, "SELECT" LEADER_COLS " FROM leader WHERE one = 1");

	return st ? leader_row(s, st, row, e) : lib_sql_fail(s, e);
}

/* A clean stop: a standby (or a restart) takes over at once. */
int lib_store_leader_release(struct lib_store *s, struct lib_err *e)
{
	lib_st *st =
		lib_stmt(s, "UPDATE leader SET expiry = '-infinity' WHERE one = 1 AND epoch = ?1");

	if (!st)
		return lib_sql_fail(s, e);
	lib_bind_int64(st, 1, s->epoch);
	return lib_stmt_run(s, st, e);
}
