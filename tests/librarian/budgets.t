#!/bin/bash
# LFS-TEST: host alone
# Who gets a place among the connections (a replayed ClientHello, one node holding every connection).
# (1) A ClientHello of n1 recorded on the wire and replayed byte for byte
# from 127.0.0.2-9 up to the handshake budget: its PSK binder checks out,
# but only a finished handshake proves a key, so the replays hold at most
# max_connections_per_node places and n2 still logs in and heartbeats.
# (2) max_connections 16: n1 opening 16 sessions does not keep n2 from
# pinging and heartbeating, nor n3's renewal session from renewing; n1's
# least recently used sessions are the ones closed.
# (3) max_connections_per_node 4: n1's fifth connection closes its least
# recently used one, never its renewal session.
. tests/lib/tap.sh
. tests/librarian/lib.sh

ATTACK=${LIBRARIAN_ATTACK:-build/tests/lib-attack}
[ -x "$ATTACK" ] || { echo "Bail out! $ATTACK not built (run make)"; exit 1; }
now_ms() { date +%s%3N; }
# wait_for FILE REGEX SECONDS: until FILE matches (bounded)
wait_for() {
	local d=$((SECONDS + $3))
	until grep -Eq "$2" "$1" 2>/dev/null || [ $SECONDS -ge $d ]; do sleep 0.05; done
	grep -Eq "$2" "$1" 2>/dev/null
}
# hb NODE SECONDS OUT: heartbeats every 250 ms for SECONDS, in the background
hb() { "$ATTACK" "127.0.0.1:$PORT" heartbeat "$1" "$T/keys/$1.key" "$2" 250 >"$3" 2>&1; }
hb_max() { awk '/^n / { print int($8) }' "$1"; }
lt_keys admin n1 n2 n3 n4 n5 n6

# (1) replayed ClientHellos
lt_conf "$LT_FABRIC" 'max_unauthenticated = 64; max_unauthenticated_per_address = 8; handshake_timeout = 30;'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_run "record a session of n1 (its ClientHello)" "$RAW" "127.0.0.1:$PORT" record n1 "$T/keys/n1.key" "$T/n1.bin" '{"v":1,"id":2,"op":"ping"}'
"$ATTACK" "127.0.0.1:$PORT" replay "$T/n1.bin" 64 12 >"$T/replay.out" 2>"$T/replay.err" &
rp=$!
wait_for "$T/replay.err" "replaying" 30
t_ok $? "n1's ClientHello replayed on 64 connections from 127.0.0.2-9 (max_unauthenticated 64, 8 per address)"
s=$(lc stats)
t_diag "connections $(jq -c .connections_by_kind <<<"$s")"
t_ok "$([ "$(jq .connections_by_kind.unauthenticated <<<"$s")" -le 36 ]; echo $?)" \
	"the replays hold about max_connections_per_node (32) places, not the budget ($(jq .connections_by_kind.unauthenticated <<<"$s"))"
t0=$(now_ms)
a=$(timeout 20 "$CLI" client --connect "127.0.0.1:$PORT" --node n2 --key "$T/keys/n2.key" auth 2>&1)
t_is "$(jq -r .node <<<"$a" 2>/dev/null)" "n2" "n2 logs in during the replay ($(($(now_ms) - t0)) ms)$([ -n "$a" ] && [[ "$a" != "{"* ]] && echo ": $a")"
hb n2 3 "$T/hb2.out"
t_ok $? "n2's heartbeats over 3 s are all answered: $(cat "$T/hb2.out")"
max=$(hb_max "$T/hb2.out")
t_ok "$([ -n "$max" ] && [ "$max" -lt 1000 ]; echo $?)" "  promptly (longest ${max} ms)"
t_is "$(lc geometry | jq -r '.racks[0].enclosures[0].nodes[1].alive')" "true" "the librarian sees n2 live"
wait $rp
t_diag "replay: $(cat "$T/replay.out")"
t_like "$(cat "$T/server.log")" "handshakes of the same identity under way \(max_connections_per_node\)" \
	"the librarian closed replays beyond max_connections_per_node"
lt_stop

# (2) one node's sessions against max_connections
lt_conf "$LT_FABRIC" 'max_connections = 16;'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
hb n3 8 "$T/hb3.out" &
hb3=$!
d=$((SECONDS + 20))
until [ "$(lc stats | jq .lease_thread.connections)" = 1 ] || [ $SECONDS -ge $d ]; do sleep 0.05; done
t_is "$(lc stats | jq .lease_thread.connections)" "1" "n3's renewal session is served by the lease thread"
coproc S1 { "$ATTACK" "127.0.0.1:$PORT" sessions n1 "$T/keys/n1.key" 16; }
read -r -t 60 line <&"${S1[0]}"
t_is "$line" "opened 16" "n1 opens 16 sessions (max_connections 16; n3 holds one)"
t_run "n2's ping is answered" ltls n2 ping
hb n2 2 "$T/hb2b.out"
t_ok $? "n2's heartbeats are answered: $(cat "$T/hb2b.out")"
echo check >&"${S1[1]}"
read -r -t 60 line <&"${S1[0]}"
# one closed for n1's 16th, one for each of n2's two connections (or one, if
# the first was gone by then): the oldest ones
first=$(awk '{ print $2 }' <<<"$line")
t_ok "$([ -n "$first" ] && [ "$first" -ge 1 ] && [ "$first" -le 3 ]; echo $?)" "n1's sessions 0 to $((first - 1)) are closed, one for each connection beyond max_connections ($line)"
t_is "$line" "alive $(seq -s ' ' "${first:-1}" 15)" "  its least recently used ones: every later one answers"
exec {S1[1]}>&-
wait $S1_PID 2>/dev/null
wait $hb3
t_ok $? "n3's heartbeats over 8 s were all answered: $(cat "$T/hb3.out")"
max=$(hb_max "$T/hb3.out")
t_ok "$([ -n "$max" ] && [ "$max" -lt 1000 ]; echo $?)" "  promptly (longest ${max} ms)"
t_like "$(cat "$T/server.log")" "\(n1\): closed, its least recently used connection: [0-9]+ open \(max_connections 16\)" "the librarian says why it closed them"
lt_stop

# (3) max_connections_per_node
lt_conf "$LT_FABRIC" 'max_connections_per_node = 4;'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
hb n1 6 "$T/hb1.out" &
hb1=$!
d=$((SECONDS + 20))
until [ "$(lc stats | jq .lease_thread.connections)" = 1 ] || [ $SECONDS -ge $d ]; do sleep 0.05; done
coproc S2 { "$ATTACK" "127.0.0.1:$PORT" sessions n1 "$T/keys/n1.key" 4; }
read -r -t 60 line <&"${S2[0]}"
t_is "$line" "opened 4" "n1 opens 4 more sessions beside its renewal session (max_connections_per_node 4)"
echo check >&"${S2[1]}"
read -r -t 60 line <&"${S2[0]}"
t_is "$line" "alive 1 2 3" "its least recently used one is closed"
exec {S2[1]}>&-
wait $S2_PID 2>/dev/null
wait $hb1
t_ok $? "its renewal session is not: heartbeats over 6 s all answered: $(cat "$T/hb1.out")"
t_like "$(cat "$T/server.log")" "\(n1\): closed, its least recently used connection: 5 open \(max_connections_per_node 4\)" "the librarian says why"
t_run "n2 is not limited by n1's connections" ltls n2 ping
lt_stop
lt_done
