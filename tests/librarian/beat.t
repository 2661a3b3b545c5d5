#!/bin/bash
# LFS-TEST: host alone
# The lease thread (librarian/beat.c, docs/LIBRARIAN.md): once the event
# loop has answered a heartbeat on a connection with nothing else to do, the
# thread answers that connection's heartbeats beside the loop's work. Here
# the loop is held inside a request (another process holds the catalogue's
# write lock, so the request waits in SQLite's busy handler) and a node's
# heartbeat is still answered; the thread sees node states the loop changes,
# its heartbeats keep the node live, and anything but a heartbeat goes back
# to the loop, answered in order.
. tests/lib/tap.sh
. tests/librarian/lib.sh

ATTACK=${LIBRARIAN_ATTACK:-build/tests/lib-attack}
[ -x "$ATTACK" ] || { echo "Bail out! $ATTACK not built (run make)"; exit 1; }
lmsg() { "$@" 2>&1 >/dev/null; }
thread() { lc stats | jq -c "[.lease_thread.connections, .lease_thread.heartbeats]"; }

lt_keys admin n1 n2
lt_conf "$LT_FABRIC" 'share = "rw";'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"

# n2's session: one request per line, its outcome read back
coproc N2 { "$ATTACK" "127.0.0.1:$PORT" calls n2 "$T/keys/n2.key" 2>&1; }
call() {
	local reply
	echo "$*" >&"${N2[1]}"
	read -r -t 120 reply <&"${N2[0]}" || reply="(no reply)"
	echo "$reply"
}

t_like "$(call heartbeat)" '^ok \{.*"node":"n2"' "n2's first heartbeat is answered (by the loop)"
t_is "$(thread)" "[1,0]" "the connection is then the lease thread's"
t_like "$(call heartbeat)" '^ok \{.*"activations":\[\]' "the next heartbeat is answered"
t_is "$(thread)" "[1,1]" "by the lease thread"

# (1) the loop is stuck in a request: a heartbeat is answered all the same
# On PostgreSQL: a psql session holds a lock on shelves that the create's
# INSERT waits for. There the loop that renews the leader row is stuck too,
# so the heartbeat must come within leader_ttl_ms (666 ms here): a loop
# stuck longer loses the lead by design (docs/HA.md, "Keeping it").
mkfifo "$T/sql.in" "$T/sql.out"
if [ "$LT_STORE" = pg ]; then
	stdbuf -oL "$PGBIN/psql" -X -q -A -t -h "$LT_PG_HOST" -U postgres -d "$LT_PG_DB" <"$T/sql.in" >"$T/sql.out" &
	lockit="BEGIN; LOCK TABLE shelves IN EXCLUSIVE MODE; SELECT 'locked';"
	# the loop's database session waits for the lock
	in_busy() { [ "$("$PGBIN/psql" -X -A -t -h "$LT_PG_HOST" -U postgres -d "$LT_PG_DB" -c "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")" -ge 1 ]; }
else
	stdbuf -oL sqlite3 "$T/cat.db" <"$T/sql.in" >"$T/sql.out" &
	lockit="BEGIN IMMEDIATE; SELECT 'locked';"
	# the loop's thread (the librarian's main thread) sleeps in SQLite's busy handler
	in_busy() {
		local nr
		read -r nr _ <"/proc/$LPID/task/$LPID/syscall" 2>/dev/null
		[ "$nr" = 35 ] || [ "$nr" = 230 ]
	}
fi
sql=$!
exec {sqlin}>"$T/sql.in" {sqlout}<"$T/sql.out"
echo "$lockit" >&$sqlin
read -r -t 60 locked <&$sqlout
t_is "$locked" "locked" "another process holds the catalogue's write lock"
ltls n1 shelf.create '{"name":"held","books":1}' >"$T/create.out" 2>"$T/create.err" &
create=$!
# Seen once is enough: between two sleeps of the busy handler the thread
# runs, so a second look may miss it (it did, once, on a loaded machine).
d=$((SECONDS + 60)) busy=1
until [ $SECONDS -ge $d ]; do
	in_busy && busy=0 && break
	sleep 0.01
done
t_ok "$busy" "the event loop waits for the lock inside n1's shelf.create"
t_like "$(call heartbeat)" '^ok \{.*"node":"n2"' "n2's heartbeat is answered while the loop is stuck"
t_ok "$(kill -0 $create 2>/dev/null; echo $?)" "... before n1's request is (it still waits for the lock we hold)"
echo "ROLLBACK;" >&$sqlin
exec {sqlin}>&- {sqlout}<&-
wait $sql
wait $create
rc=$?
n=$(lc shelf.list '{"prefix":"held"}' | jq .total)
if [ $rc = 0 ]; then
	t_is "$n" "1" "n1's create completes once the lock is released"
else
	t_is "$n" "0" "n1's create failed and changed nothing ($(cat "$T/create.err"))"
fi

# (2) anything but a heartbeat goes back to the loop, answered in order
t_like "$(call shelf.list)" '^ok \{"shelves":\[' "a shelf.list on the thread's connection is answered (by the loop)"
t_is "$(thread | jq -c '.[0]')" "0" "the connection went back to the loop"
t_like "$(call heartbeat)" '^ok ' "the next heartbeat is answered"
t_is "$(thread | jq -c '.[0]')" "1" "and the connection is the thread's again"

# a node pipelining heartbeats: the thread reads at most 16 records and
# answers at most 16 heartbeats of a connection before it serves the others
# (more than that buffered at once, and the connection goes back to the
# loop's turns); every one is answered, in order
b0=$(thread | jq '.[1]')
"$ATTACK" "127.0.0.1:$PORT" flood n1 "$T/keys/n1.key" 2 64 '{"v":1,"id":1,"op":"heartbeat"}' >"$T/hbflood.out" 2>"$T/hbflood.err"
rc=$?
got=$(cat "$T/hbflood.out")
t_ok "$([ $rc = 0 ] && [ "${got:-0}" -gt 0 ] && [ $((got % 64)) = 0 ]; echo $?)" \
	"n1 pipelines heartbeats 64 at a time for 2 s: all $got answered (exit $rc)"
t_ok "$([ "$(thread | jq '.[1]')" -gt "$b0" ]; echo $?)" "  the thread answered some of them ($(($(thread | jq '.[1]') - b0)))"

# (3) its heartbeats keep the node live: n2 holds a shelf, and heartbeats
# only through the thread for longer than lease_time + fence_grace (3 s)
lc shelf.create '{"name":"s1","books":1}' >/dev/null
t_like "$(call shelf.activate '{"name":"s1"}')" '^ok ' "n2 activates s1 on that connection"
call heartbeat >/dev/null
before=$(thread | jq '.[1]')
for i in 1 2 3 4 5 6 7 8; do
	sleep 0.5 # the lease's time passing: what is tested
	call heartbeat >/dev/null
done
t_is "$(thread | jq -c "[.[0], .[1] - $before]")" "[1,8]" "8 heartbeats in 4 s, all answered by the thread"
t_like "$(lmsg ltls n1 shelf.activate '{"name":"s1","takeover":true}')" "EBUSY: cannot take over shelf 's1': it is active on node 'n2' \(rw\), which is live" \
	"n2 is live: the thread's heartbeats count (a takeover is refused)"

# (4) the thread sees a node state the loop changes
t_is "$(lc node.set_state '{"node":"n2","state":"offline"}' | jq -r .state)" "fencing" "the admin sets n2 offline"
t_like "$(call heartbeat)" '^error EACCES' "n2's next heartbeat on the thread's connection is refused (EACCES)"

# (5) the end of the connection goes back to the loop, which closes it
exec {N2[1]}>&-
wait "$N2_PID" 2>/dev/null
d=$((SECONDS + 60))
until [ "$(lc stats | jq .lease_thread.connections)" = 0 ] || [ $SECONDS -ge $d ]; do sleep 0.05; done
t_is "$(lc stats | jq -c '[.lease_thread.connections, .connections_by_kind.nodes]')" "[0,0]" "n2's closed connection is given back and closed"
lt_stop
t_is "$?" "0" "the librarian stops cleanly (the lease thread with it)"
lt_done
