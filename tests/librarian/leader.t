#!/bin/bash
# One leader, standbys (docs/HA.md, "The leader row"): two librarians on one
# PostgreSQL catalogue (a cluster of the test's own, tests/librarian/lib-pg.sh).
# Only the leader serves; the standby refuses with EREMOTE naming the leader.
# SIGSTOP of the leader past its row's expiry: the standby takes over with the
# next epoch; the resumed old leader commits nothing and renews no lease; the
# new leader counts every node as heard at its takeover (no takeover of a
# node's shelf before lease_time + fence_grace). kill -9 of the leader: the
# other takes over after the expiry. Every wait is a bounded poll.
[ -x "${PGBIN:-/usr/lib/postgresql/15/bin}/initdb" ] || { echo "1..0 # SKIP no PostgreSQL 15 (apt-get install postgresql-15)"; exit 77; }
export LFS_TEST_STORE=pg
. tests/lib/tap.sh
. tests/librarian/lib.sh

LEASE=5 GRACE=2 TTL=2500 REFRESH=500
PA= PB= PD=
trap 'for p in $PA $PB $PD; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done; lt_cleanup' EXIT

lt_keys admin n1 n2
# conf NAME: $T/NAME.conf listening on its own port and socket
conf() {
	PORT=$(lt_free_port)
	SOCK=$T/$1.sock
	LT_GRACE=$GRACE lt_conf "$LT_FABRIC" "share = \"rw\"; name = \"$1\"; leader_ttl_ms = $TTL; leader_refresh_ms = $REFRESH; audit_log = \"$1.audit\";"
	sed -i "s/lease_time = 2;/lease_time = $LEASE;/" "$T/lib.conf"
	mv "$T/lib.conf" "$T/$1.conf"
	eval "PORT_$1=$PORT"
}
conf libA
conf libB

# start NAME: in the background, answering ping on its socket (a standby does too)
start() {
	"$LIB" -c "$T/$1.conf" >>"$T/$1.log" 2>&1 &
	eval "P$2=$!"
	for _ in $(seq 1 250); do
		"$CLI" client --connect "unix:$T/$1.sock" ping >/dev/null 2>&1 && return 0
		sleep 0.02
	done
	t_diag "$1 did not come up"; sed 's/^/#   /' "$T/$1.log" | tail -n 20
	return 1
}
# on NAME OP [JSON]: as the admin on NAME's socket; on_tls NAME NODE OP [JSON]: as NODE over TLS
on() { local n=$1; shift; "$CLI" client --connect "unix:$T/$n.sock" "$@" | jq -c .; return "${PIPESTATUS[0]}"; }
on_tls() { local n=$1 p; p=PORT_$1; shift; local node=$1; shift
	"$CLI" client --connect "127.0.0.1:${!p}" --node "$node" --key "$T/keys/$node.key" "$@" | jq -c .; return "${PIPESTATUS[0]}"; }
row() { lt_sql "SELECT epoch || ' ' || holder FROM leader"; }
# until_row 'EPOCH NAME': poll the leader row (bounded, 15 s)
until_row() {
	for _ in $(seq 1 300); do [ "$(row)" = "$1" ] && return 0; sleep 0.05; done
	return 1
}
# until_serves NAME: poll until NAME answers shelf.list (bounded, 15 s)
until_serves() {
	for _ in $(seq 1 300); do on "$1" shelf.list >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
ms() { date +%s%3N; }

# the limits of the row's times are checked against the leases
sed "s/leader_ttl_ms = $TTL;/leader_ttl_ms = 4000;/" "$T/libA.conf" >"$T/bad.conf"
out=$(timeout 20 "$LIB" -c "$T/bad.conf" 2>&1)
t_is "$?" 1 "leader_ttl_ms 4000 + leader_refresh_ms + heartbeat_interval over lease_time $LEASE s: refused"
t_like "$out" "must be shorter than lease_time" "  saying why"

start libA A || { t_ok 1 "libA starts"; lt_done; }
t_is "$(row)" "1 libA" "the first librarian takes the lead: epoch 1"
t_is "$(jq -c 'select(.op == "leader.took") | [.who, .librarian, .epoch, .at_start, .result]' "$T/libA.audit")" \
	'["librarian","libA",1,true,"ok"]' "  its audit trail has the lead it took at start"
start libB B || { t_ok 1 "libB starts"; lt_done; }
b_started=$(ms)
t_like "$(cat "$T/libB.log")" "'libB' is a standby: the leader is 'libA'" "the second is a standby"
t_is "$(row)" "1 libA" "the row is unchanged"

t_is "$(on_tls libA n1 shelf.create '{"name":"s1","books":2}' | jq -r .name)" s1 "the leader serves a write"
t_is "$(lerr on libB shelf.list)" EREMOTE "the standby refuses a read: EREMOTE"
t_is "$(lerr on_tls libB n2 shelf.create '{"name":"s2","books":1}')" EREMOTE "  and a write"
t_is "$(lerr on_tls libB n2 heartbeat)" EREMOTE "  and a heartbeat"
t_is "$(lt_sql "SELECT count(*) FROM shelves WHERE name = 's2'")" 0 "  which changed nothing"
reply=$("$RAW" "unix:$T/libB.sock" auth-send '{"v":1,"id":5,"op":"shelf.list"}' | grep '"id":5')
t_is "$(jq -c '.error | [.code, .leader.name, .leader.epoch, .leader.addresses]' <<<"$reply")" \
	"[\"EREMOTE\",\"libA\",1,[\"127.0.0.1:$PORT_libA\"]]" "error.leader names the leader, its epoch and address"
t_like "$(jq -r .error.message <<<"$reply")" "standby: the leader is 'libA' \\(epoch 1\\)" "  and so does the message"
t_like "$(lt_sql "SELECT lfs_leader_check(0, true)" 2>&1)" "not the leader: epoch 0" "the commit check refuses an epoch not the row's"

# nodes follow the leader (docs/HA.md): auth says who serves, a client given a
# list of librarians passes over a standby
t_is "$(on libA auth | jq -c '[.role, .epoch]')" '["leader",1]' "auth: libA is the leader, epoch 1"
t_is "$(on libB auth | jq -c '[.role, .epoch, .leader.name, .leader.epoch, .leader.live]')" \
	'["standby",0,"libA",1,true]' "  libB is a standby and names the leader"
t_is "$(on_tls libA n1 heartbeat | jq .epoch)" 1 "a heartbeat reply carries the epoch its read checked"
t_is "$("$CLI" client --connect " 127.0.0.1:$PORT_libB, 127.0.0.1:$PORT_libA" --node n1 --key "$T/keys/n1.key" \
	shelf.get '{"name":"s1"}' | jq -r .name)" s1 "a client given the list standby first reaches the leader"
dead=$(lt_free_port)
out=$("$CLI" client --connect "127.0.0.1:$PORT_libB,127.0.0.1:$dead" --node n1 --key "$T/keys/n1.key" shelf.list 2>&1)
t_is "$?" 3 "a list with the standby and a dead address: no connection"
t_like "$out" "no librarian serves at 127.0.0.1:$PORT_libB,127.0.0.1:$dead \\(127.0.0.1:$PORT_libB: a standby; the leader is 'libA' \\(epoch 1\\); 127.0.0.1:$dead: cannot connect to 127.0.0.1:$dead" \
	"  the error says what each address answered"
out=$("$CLI" client --connect "127.0.0.1:$PORT_libA,127.0.0.1:99999" shelf.list 2>&1)
t_like "$out" "librarian address '127.0.0.1:99999': the port must be 1 to 65535" "a bad address in a list is named"

# n1 holds s1 and keeps a renewal session on libA (its lease thread answers)
t_is "$(on_tls libA n1 shelf.activate '{"name":"s1"}' | jq -c '[.activations[].node]')" '["n1"]' "n1 activates s1"
coproc NODE { "$CLI" client --connect "127.0.0.1:$PORT_libA" --node n1 --key "$T/keys/n1.key" --stdin 2>>"$T/node.err"; }
beat() { echo '{"op":"heartbeat"}' >&"${NODE[1]}"; read -r -t 15 line <&"${NODE[0]}"; jq -c '[.ok, .code]' <<<"$line"; }
t_is "$(beat)" '[true,null]' "n1's heartbeat renews on libA"
t_is "$(beat)" '[true,null]' "  and again (the lease thread's)"

# the failover must be after libB has been up longer than lease_time + fence_grace,
# so that a takeover right after it would be granted without the service-clock rule
for _ in $(seq 1 200); do
	[ $(($(ms) - b_started)) -gt $(((LEASE + GRACE) * 1000)) ] && break
	sleep 0.1
done

# SIGSTOP of the leader past its row's expiry: libB takes over with epoch 2
stop_ms=$(ms)
kill -STOP "$PA"
until_row "2 libB"
t_ok $? "libA stopped: libB takes the lead (epoch 2)"
took=$(($(ms) - stop_ms))
t_ok "$([ "$took" -ge $((TTL - REFRESH)) ]; echo $?)" "  not before the row expired ($took ms after the stop; ttl $TTL ms)"
until_serves libB
t_ok $? "libB serves ($(($(ms) - stop_ms)) ms after the stop)"
t_is "$(on libB shelf.get '{"name":"s1"}' | jq -r .books)" 2 "  the catalogue libA committed"
t_like "$(cat "$T/libB.log")" "'libB' is the leader \\(epoch 2\\): took over; every node counts as heard now" "  and says it counts every node as heard now"
t_is "$(jq -c 'select(.op == "leader.took") | [.who, .librarian, .epoch, .result]' "$T/libB.audit")" \
	'["librarian","libB",2,"ok"]' "  its audit trail has the takeover"

# the new leader counts n1 as heard at its takeover: n2's takeover of s1 waits lease_time + fence_grace
t_is "$(lerr on_tls libB n2 shelf.activate '{"name":"s1","takeover":true}')" EBUSY "n2 cannot take over s1 right after the failover: n1 is live"
granted=
for _ in $(seq 1 200); do
	on_tls libB n2 shelf.activate '{"name":"s1","takeover":true}' >/dev/null 2>&1 && { granted=$(ms); break; }
	sleep 0.1
done
t_ok "$([ -n "$granted" ]; echo $?)" "n2's takeover is granted in the end"
gap=$((granted - stop_ms))
t_ok "$([ "$gap" -ge $(((LEASE + GRACE) * 1000)) ]; echo $?)" "  no earlier than lease_time + fence_grace after libA stopped ($gap ms; $(((LEASE + GRACE) * 1000)) ms)"

# the resumed old leader: a write and n1's heartbeat, both sent while it was stopped
kill -STOP "$PA" 2>/dev/null
on libA shelf.create '{"name":"ghost","books":1}' >"$T/ghost.out" 2>"$T/ghost.err" &
gpid=$!
echo '{"op":"heartbeat"}' >&"${NODE[1]}"
kill -CONT "$PA"
wait "$gpid"
t_is "$?" 1 "the resumed old leader refuses the write sent while it was stopped"
t_like "$(cat "$T/ghost.err")" "EREMOTE" "  with EREMOTE"
read -r -t 15 line <&"${NODE[0]}"
t_is "$(jq -c '[.ok, .code]' <<<"$line")" '[false,"EREMOTE"]' "  and n1's heartbeat: no renewal"
t_is "$(beat)" '[false,"EREMOTE"]' "  nor the next one"
t_is "$(lerr on libA shelf.create '{"name":"ghost2","books":1}')" EREMOTE "  nor a write sent after"
t_is "$(lt_sql "SELECT count(*) FROM shelves WHERE name LIKE 'ghost%'")" 0 "the catalogue has none of its writes"
t_is "$(row)" "2 libB" "the row still holds libB's epoch"
t_like "$(cat "$T/libA.log")" "'libA' is no longer the leader: the row holds epoch 2 of 'libB'" "libA says it was deposed"
t_is "$(jq -c 'select(.op == "leader.lost") | [.librarian, .epoch, .row_epoch, .row_holder]' "$T/libA.audit")" \
	'["libA",0,2,"libB"]' "  and so does its audit trail"
t_is "$(jq -c 'select(.op == "shelf.create" and .result == "ok") | .shelf' "$T/libA.audit" | tr -d '\n')" '"s1"' \
	"  where, of its creates, only s1 (before the stop) is acknowledged"
t_is "$(lerr on libA shelf.list)" EREMOTE "libA is a standby now"
eval "exec ${NODE[1]}>&-"
wait "$NODE_PID" 2>/dev/null

# kill -9 of the leader: libA takes over after the expiry, epoch 3
kill_ms=$(ms)
kill -9 "$PB"
wait "$PB" 2>/dev/null
PB=
until_row "3 libA"
t_ok $? "libB killed: libA takes the lead again (epoch 3)"
until_serves libA
t_ok $? "libA serves ($(($(ms) - kill_ms)) ms after the kill; ttl $TTL ms, refresh $REFRESH ms)"
t_is "$(on libA shelf.get '{"name":"s1"}' | jq -c '[.books, [.activations[].node]]')" '[2,["n2"]]' "  the catalogue libB committed"
t_is "$(on_tls libA n1 heartbeat | jq -c .activations)" '[]' "n1's heartbeat renews on libA (it holds nothing now)"
t_is "$(on_tls libA n1 heartbeat | jq .epoch)" 3 "  its reply carries epoch 3"

# a clean stop gives the lead up at once: a new librarian takes it without waiting
kill -TERM "$PA"
wait "$PA"
t_is "$?" 0 "libA stops cleanly"
PA=
t_like "$(cat "$T/libA.log")" "'libA' gave up the lead \\(epoch 3\\)" "  giving up the lead"
start libB B || t_diag "libB did not start"
t_is "$(row)" "4 libB" "libB takes it at its start (epoch 4)"
t_like "$("$LIB" check --db "$LT_DB")" "consistent" "librarian check: consistent"

# A second librarian given libB's name while libB lives: a standby, never a
# "restart" that deposes the live leader (it did before the row named its process)
conf dup
sed -i 's/name = "dup";/name = "libB";/' "$T/dup.conf"
start dup D || t_diag "dup did not start"
t_is "$(row)" "4 libB" "a second librarian named libB, while libB lives: the row stays libB's (epoch 4)"
t_like "$(cat "$T/dup.log")" "held by another process .*give every librarian its own name" "  it says why it waits"
t_is "$(on dup auth | jq -r .role)" standby "  it is a standby"
t_is "$(on libB shelf.create '{"name":"dup1","books":1}' | jq -r .name)" dup1 "  libB still serves a write"
kill -TERM "$PD"
wait "$PD"
PD=
# kill -9, then a restart of libB: the row names a dead process of this host,
# taken at once (its expiry pushed an hour away, so only the restart can take it)
kill -9 "$PB"
wait "$PB" 2>/dev/null
PB=
lt_sql "UPDATE leader SET expiry = clock_timestamp() + interval '1 hour'" >/dev/null
start libB B || t_diag "libB did not start again"
t_is "$(row)" "5 libB" "libB restarted after kill -9 takes its row back at once (epoch 5)"
until_serves libB || t_diag "libB does not serve"
t_is "$(on libB shelf.get '{"name":"dup1"}' | jq -r .name)" dup1 "  and serves the catalogue"
# a row of the same name held on another host: not taken before its expiry
kill -9 "$PB"
wait "$PB" 2>/dev/null
PB=
lt_sql "UPDATE leader SET instance = 'otherhost ' || substr(instance, strpos(instance, ' ') + 1), expiry = clock_timestamp() + interval '3 seconds'" >/dev/null
start libB B || t_diag "libB did not start a third time"
t_is "$(grep -c 'held by another process (otherhost ' "$T/libB.log")" 1 "a row of libB's name held on another host: not taken at start"
until_row "6 libB" || t_diag "libB never took the row"
t_is "$(row)" "6 libB" "  taken at its expiry (epoch 6)"
kill -TERM "$PB"
wait "$PB"
PB=
lt_done
