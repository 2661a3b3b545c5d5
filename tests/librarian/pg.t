#!/bin/bash
# The librarian on a PostgreSQL catalogue (docs/HA.md): a cluster of the
# test's own (initdb and pg_ctl in a temporary directory, a unix socket
# there only; tests/librarian/lib-pg.sh). The store's own checks (grow,
# release, destroy, zeroing, restart, kill -9, librarian check finding a
# damaged row, backup pointing to pg_dump), then every store-neutral host
# test file of tests/librarian runs against the same cluster, each in a
# database of its own (docs/TESTING.md, "The librarian on both stores").
[ -x "${PGBIN:-/usr/lib/postgresql/15/bin}/initdb" ] || { echo "1..0 # SKIP no PostgreSQL 15 (apt-get install postgresql-15)"; exit 77; }
export LFS_TEST_STORE=pg
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2
lt_conf "$LT_FABRIC" 'share = "rw";'
lt_start || { t_ok 1 "librarian starts on PostgreSQL"; lt_done; }
t_ok 0 "librarian starts on an empty PostgreSQL database and creates the catalogue"
t_is "$(lt_sql "SELECT value FROM meta WHERE key = 'schema_version'")" 4 "schema version 4"
t_is "$(lt_sql "SELECT count(*) FROM books")" 140 "every book of the fabric is a row"
books() { lc stats | jq -c '[.books.free, .books.inuse, .books.zombie]'; }

# create, grow, shrink, destroy, zero: the book state machine
t_is "$(ltls n1 shelf.create '{"name":"a","books":8}' | jq '.map | length')" 8 "create: 8 books"
t_is "$(ltls n1 shelf.resize '{"name":"a","books":12}' | jq '.added | length')" 4 "grow to 12: 4 books added"
t_is "$(lt_sql "SELECT count(*), min(seq), max(seq) FROM books WHERE shelf = (SELECT id FROM shelves WHERE name = 'a')")" "12|0|11" "the shelf's books are positions 0-11"
t_is "$(books)" "[128,12,0]" "stats: 12 in use"
t_is "$(ltls n1 shelf.resize '{"name":"a","books":3}' | jq -r .books)" 3 "shrink to 3"
t_is "$(books)" "[128,3,9]" "the 9 released books are zombies"
t_is "$(ltls n1 shelf.activate '{"name":"a"}' | jq -c '[.activations[].node]')" '["n1"]' "activate"
t_is "$(ltls n1 heartbeat | jq -c '[.activations[].name]')" '["a"]' "heartbeat lists the activation"
t_is "$(lerr ltls n1 shelf.destroy '{"name":"a"}')" EBUSY "an active shelf is not destroyed"
t_is "$(ltls n1 shelf.deactivate '{"name":"a"}' | jq -c .)" '{"name":"a","node":"n1"}' "deactivate"
t_is "$(ltls n1 shelf.destroy '{"name":"a"}' | jq -r .zombies)" 3 "destroy: its 3 books become zombies"
z=$(lc zombie.list | jq -c .books)
t_is "$(jq length <<<"$z")" 12 "zombie.list: 12 books to zero"
lc zombie.zeroed "{\"books\":$z}" >/dev/null
t_is "$(books)" "[140,0,0]" "zeroed: every book is free again"
t_is "$(lc stats | jq .free_known_zero)" 140 "and known zero"
t_is "$(lt_sql "SELECT count(*) FROM books WHERE state = 0 AND zeroed = 1")" 140 "the rows say so"

# a failed request changes nothing (its savepoint is undone)
t_is "$(lerr ltls n1 shelf.create '{"name":"big","books":41,"policy":"LocalNode"}')" ENOSPC "a shelf larger than the node's memory is refused (LocalNode)"
t_is "$(lc shelf.list | jq '.shelves | length') $(books)" "0 [140,0,0]" "and left nothing behind"

# restart and kill -9 keep what was acknowledged
ltls n2 shelf.create '{"name":"keep","books":5}' >/dev/null
lc attr.set '{"name":"keep","key":"user.k","value":"v"}' >/dev/null
lt_stop
lt_start || t_diag "restart failed"
t_is "$(lc shelf.get '{"name":"keep"}' | jq -r '[.books, .owner] | join(" ")') $(lc attr.get '{"name":"keep","key":"user.k"}' | jq -r .value)" "5 n2 v" "a restart keeps shelves and attributes"
lc shelf.create '{"name":"acked","books":2}' >/dev/null
lt_kill9
lt_start || t_diag "restart after kill -9 failed"
t_is "$(lc shelf.get '{"name":"acked"}' | jq -r .books)" 2 "kill -9 loses no acknowledged shelf"
t_is "$(books)" "[133,7,0]" "and no book"

# the database server crashes and restarts: the librarian connects again
lt_pg_as "$PGBIN/pg_ctl" -D "$LT_PG_HOST/data" -l "$LT_PG_HOST/log" -m immediate -w -t 60 restart >/dev/null
for _ in $(seq 1 100); do # bounded: 5 s
	lc shelf.get '{"name":"acked"}' >/dev/null 2>&1 && break
	sleep 0.05
done
t_is "$(lc shelf.get '{"name":"acked"}' | jq -r .books)" 2 "after a restart of the database server the librarian serves again"
t_is "$(lc shelf.create '{"name":"after","books":1}' | jq -r .books)" 1 "  and writes"
t_ok "$(ltls n1 heartbeat >/dev/null; echo $?)" "  and its lease thread answers a heartbeat"
t_like "$(cat "$T/server.log")" "connected again to the database \\(connection 2\\)" "  saying it connected again"
lc shelf.destroy '{"name":"after"}' >/dev/null
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" >/dev/null
# the connection breaks in the middle of a request's transaction (a trigger
# ends the librarian's backend at the shelf's INSERT)
lt_sqlw "CREATE FUNCTION lfs_test_cut() RETURNS trigger LANGUAGE plpgsql AS \$\$BEGIN
	IF NEW.name = 'cut' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END\$\$;
	CREATE TRIGGER cut BEFORE INSERT ON shelves FOR EACH ROW EXECUTE FUNCTION lfs_test_cut()"
t_is "$(lerr lc shelf.create '{"name":"cut","books":3}')" EIO "a request whose connection breaks mid-transaction is answered EIO"
t_is "$(lt_sql "SELECT count(*) FROM shelves WHERE name = 'cut'") $(books)" "0 [133,7,0]" "  and left nothing"
t_is "$(lc shelf.create '{"name":"uncut","books":1}' | jq -r .books)" 1 "  the next request is served on a new connection"
lt_sqlw "DROP TRIGGER cut ON shelves; DROP FUNCTION lfs_test_cut()"
lc shelf.destroy '{"name":"uncut"}' >/dev/null
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" >/dev/null

# a commit whose wait for the synchronous standby is cancelled (a standby
# named that never comes; pg_cancel_backend) is committed on the primary
# only: PostgreSQL says so in a WARNING and the librarian must not
# acknowledge it
# (a longer lease, so that the leader row (ttl lease_time / 3) outlives the blocked renewals)
lt_stop
sed -i 's/lease_time = 2;/lease_time = 30;/' "$T/lib.conf"
lt_start || t_diag "restart with lease_time 30 failed"
sync_names() { lt_sqlw "ALTER SYSTEM SET synchronous_standby_names = '$1'"; lt_sqlw "SELECT pg_reload_conf()"; }
sync_names nobody
for _ in $(seq 1 100); do [ "$(lt_sql "SHOW synchronous_standby_names")" = nobody ] && break; sleep 0.05; done
lc shelf.create '{"name":"unrep","books":1}' >"$T/unrep.out" 2>&1 &
upid=$!
# every commit now waits; each wait is cancelled at once (the leader row's
# renewals' too) until the client has its answer
ncancel=0
for _ in $(seq 1 300); do # bounded: the client answered, or ~10 s
	kill -0 "$upid" 2>/dev/null || break
	ncancel=$((ncancel + $(lt_sql "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")))
	sleep 0.02
done
t_ok "$([ "$ncancel" -ge 1 ]; echo $?)" "commits wait for a synchronous standby that is not there; their waits are cancelled ($ncancel)"
sync_names ""
wait "$upid"
t_ok "$([ $? -ne 0 ]; echo $?)" "  the request is answered with an error, not acknowledged"
t_like "$(cat "$T/unrep.out")" "synchronous standby was cancelled.*not acknowledged" "  saying why"
for _ in $(seq 1 100); do lc shelf.get '{"name":"unrep"}' >/dev/null 2>&1 && break; sleep 0.05; done
lc shelf.destroy '{"name":"unrep"}' >/dev/null 2>&1 # if it was committed after all
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" >/dev/null

# librarian check on the server's catalogue
t_like "$("$LIB" check --db "$LT_DB")" "consistent" "librarian check: consistent"
lt_stop
lt_sqlw "UPDATE books SET state = 2 WHERE id = (SELECT min(id) FROM books WHERE state = 1)"
out=$("$LIB" check --db "$LT_DB" 2>&1)
t_is "$?" 1 "a book flipped from INUSE to ZOMBIE: check exits 1"
t_like "$out" "INUSE book not on exactly one shelf" "  naming the violation"
"$LIB" -c "$T/lib.conf" >"$T/refused.log" 2>&1
t_is "$?" 1 "the librarian refuses to serve it"
t_like "$(cat "$T/refused.log")" "failed its check at start" "  and says why"
lt_sqlw "UPDATE books SET state = 1 WHERE state = 2 AND shelf IS NOT NULL"
t_like "$("$LIB" check --db "$LT_DB")" "consistent" "repaired: consistent again"

# backup is pg_dump's
t_like "$("$LIB" backup --db "$LT_DB" "$T/copy.db" 2>&1)" "pg_dump" "librarian backup points to pg_dump"
t_ok "$([ ! -e "$T/copy.db" ]; echo $?)" "  and writes nothing"

# every store-neutral host file against the same cluster, but for
# - the files about PostgreSQL itself (this one, leader.t, roundtrip.t,
#   ha.t: they make their own cluster or formation);
# - those marked "alone" (attack, beat, budgets, fence, security: their
#   checks measure time against bounds that work beside them could break;
#   tests/run runs them with nothing beside, and pg.t is not alone);
# - tsan.t (beat.t and fence.t again, under ThreadSanitizer: alone's);
# - wal.t (its checks are SQLite's WAL; its PostgreSQL part, writes that
#   survive kill -9, is crash.t's, here with 10 rounds of kill -9 not 50).
# A file's checks of SQLite's own are TAP skips naming why (lt_sqlite_only).
# They run the optimised librarian, not the ASan/UBSan build: the same
# files run under the sanitizers on SQLite, and the PostgreSQL store's own
# code under them in this file's checks above, leader.t and roundtrip.t
# (188 -> 150 s for this file, side by side on a quiet host).
export LT_PG_HOST
skip=" pg leader roundtrip ha tsan wal "
for path in tests/librarian/*.t; do
	f=$(basename "$path" .t)
	[[ $skip == *" $f "* ]] && continue
	head -n 5 "$path" | grep -qE '^# LFS-TEST: .*\<alone\>' && continue
	t0=$SECONDS
	LIBRARIAN_BIN=librarian/librarian LFS_TEST_STORE=pg LT_CRASH_ROUNDS=10 bash "$path" >"$T/$f.log" 2>&1
	rc=$?
	t_ok "$rc" "$f.t against PostgreSQL: $(grep -c '^ok [0-9]* -' "$T/$f.log") passed," \
		"$(grep -c '^ok [0-9]* # SKIP' "$T/$f.log") skipped (SQLite's own)," \
		"$(grep -c '^not ok' "$T/$f.log") failed ($((SECONDS - t0)) s)"
	[ "$rc" -eq 0 ] || grep -B12 -A4 '^not ok\|^Bail' "$T/$f.log" | head -n 60 | sed 's/^/#   /'
done
lt_done
