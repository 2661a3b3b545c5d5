#!/bin/bash
# LFS-TEST: host alone
# The librarian's side of fencing (docs/FENCING.md): a holder is live until
# lease_time + fence_grace after the librarian last read a request of it, on
# a service clock that does not count the librarian's own stalls. A takeover,
# a forced destroy and the release of an offline node's activations wait for
# that; a stopped or restarted librarian declares nobody dead; probes and an
# offline node's requests do not count. Lease 2 s, grace 2 s: live for 4 s.
. tests/lib/tap.sh
LT_GRACE=2
. tests/librarian/lib.sh

LIVE_MS=4000
now_ms() { date +%s%3N; }
lmsg() { "$@" 2>&1 >/dev/null; }
# poll_ok SECONDS CMD...: run CMD every 0.1 s until it succeeds; its output on stdout
poll_ok() {
	local d=$((SECONDS + $1)) out
	shift
	while :; do
		out=$("$@" 2>/dev/null) && { printf '%s\n' "$out"; return 0; }
		[ $SECONDS -lt $d ] || return 1
		sleep 0.1
	done
}
# session NAME NODE: a client connected and authenticated (its auth counts as a
# request), fed one request per line through the FIFO $T/NAME.in; one compact
# reply per line in $T/NAME.out
SESSIONS=
session() {
	mkfifo "$T/$1.in"
	"$CLI" client --connect "127.0.0.1:$PORT" --node "$2" --key "$T/keys/$2.key" --stdin <"$T/$1.in" >"$T/$1.out" 2>/dev/null &
	SESSIONS="$SESSIONS $!"
}
# replies NAME N: wait until NAME has N replies
replies() { local d=$((SECONDS + 20)); while [ "$(wc -l <"$T/$1.out")" -lt "$2" ] && [ $SECONDS -lt $d ]; do sleep 0.05; done; }
node_field() { lc geometry | jq -r --arg n "$1" ".racks[].enclosures[].nodes[] | select(.name == \$n) | .$2"; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'share = "rw";' # the nodes use each other's shelves
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"

# what the nodes are told
a=$(ltls n1 auth)
t_like "$(jq -r .fabric_uuid <<<"$a")" '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "auth returns the fabric's UUID"
uuid=$(jq -r .fabric_uuid <<<"$a")
t_is "$(jq -c '[.lease_time, .fence_grace, .heartbeat_interval]' <<<"$a")" "[2,2,1]" "auth returns lease_time and fence_grace"
t_is "$(ltls n1 heartbeat | jq -c '[.lease_time, .fence_grace, .activations]')" "[2,2,[]]" "so does the heartbeat, with the node's activations"

# (1) takeover refused until lease + grace since the holder's last request
lc shelf.create '{"name":"s1","books":1}' >/dev/null
ltls n1 shelf.activate '{"name":"s1"}' >/dev/null
last=$(now_ms)
ltls n1 heartbeat >/dev/null
e=$(lmsg ltls n2 shelf.activate '{"name":"s1","takeover":true}')
t_like "$e" "EBUSY: cannot take over shelf 's1': it is active on node 'n1' \(rw\), which is live \(last heard [0-9.]+ s ago; lease_time 2 s \+ fence_grace 2 s\): [0-9.]+ s left" \
	"a takeover of a live holder is refused, naming it and the time left"
# n1 only probes from now on, on a session opened before: a probe renews nothing
session p n1; exec 4>"$T/p.in"
echo '{"op":"heartbeat","lease":false}' >&4
replies p 1
t_is "$(jq -c '[.ok, .result.lease_time]' "$T/p.out")" "[true,2]" "a probe (\"lease\": false) is answered like a heartbeat"
probe() { echo '{"op":"heartbeat","lease":false}' >&4; }
took() { probe; ltls n2 shelf.activate '{"name":"s1","takeover":true}'; }
r=$(poll_ok 15 took)
got=$(now_ms)
t_is "$(jq -c '[.activations[].node]' <<<"$r")" '["n2"]' "the takeover is granted once the holder is silent"
t_ok "$([ $((got - last)) -ge $LIVE_MS ]; echo $?)" "not before lease_time + fence_grace after n1's last request ($((got - last)) ms >= $LIVE_MS ms; n1's probes did not count)"
t_is "$(ltls n1 heartbeat | jq -c .activations)" "[]" "n1's heartbeat no longer lists the shelf (its agent fences it)"
exec 4>&-
ltls n2 shelf.deactivate '{"name":"s1"}' >/dev/null

# (2) a forced destroy of a live holder's shelf is refused
lc shelf.create '{"name":"s2","books":1}' >/dev/null
# before the request: the librarian hears it after this
last=$(now_ms)
ltls n3 shelf.activate '{"name":"s2"}' >/dev/null
t_like "$(lmsg lc shelf.destroy '{"name":"s2","force":true}')" "EBUSY: cannot destroy shelf 's2': it is active on node 'n3' \(rw\), which is live .*s left" \
	"a forced destroy of a shelf active on a live node is refused, naming the holder and the time left"
t_is "$(lc shelf.get '{"name":"s2"}' | jq -r .books)" "1" "the shelf and its books stay"
r=$(poll_ok 15 lc shelf.destroy '{"name":"s2","force":true}')
got=$(now_ms)
t_is "$(jq -r .zombies <<<"$r")" "1" "once n3 is no longer live the forced destroy goes ahead"
t_ok "$([ $((got - last)) -ge $LIVE_MS ]; echo $?)" "not before lease_time + fence_grace ($((got - last)) ms)"

# (3) set offline: fencing until the node's lease ends, then offline and released
lc shelf.create '{"name":"s3","books":1}' >/dev/null
ltls n4 shelf.activate '{"name":"s3"}' >/dev/null
last=$(now_ms)
ltls n4 heartbeat >/dev/null
r=$(lc node.set_state '{"node":"n4","state":"offline"}')
t_is "$(jq -r .state <<<"$r")" "fencing" "setting a live node offline is accepted at once: fencing"
t_is "$(node_field n4 state) $(node_field n4 alive)" "fencing true" "geometry shows it fencing (and live)"
t_like "$(lmsg ltls n4 heartbeat)" "EACCES: node 'n4' is offline" "its heartbeats are refused (EACCES)"
t_like "$(lmsg ltls n4 heartbeat '{"lease":false}')" "EACCES: node 'n4' is offline" "probes too"
t_like "$(lmsg ltls n4 shelf.deactivate '{"name":"s3"}')" "EBUSY: cannot deactivate shelf 's3' of node 'n4': the node is being taken offline" "its activations end with its lease, not by its own deactivate"
t_is "$(lc shelf.get '{"name":"s3"}' | jq -c '[.activations[].node]')" '["n4"]' "its activation stays meanwhile"
t_like "$(lmsg ltls n5 shelf.activate '{"name":"s3","takeover":true}')" "EBUSY: .*which is live .*being taken offline" "no takeover meanwhile"
t_like "$(lmsg lc node.set_state '{"node":"n4","state":"online"}')" "EBUSY: node 'n4' is being taken offline: its lease ends in" "and it cannot be set online before the fence"
# n4 keeps sending heartbeats: refused, they do not count
gone() { ltls n4 heartbeat >/dev/null 2>&1; [ "$(node_field n4 state)" = offline ]; }
poll_ok 15 gone >/dev/null
got=$(now_ms)
t_is "$(node_field n4 state) $(node_field n4 alive)" "offline false" "once its lease ends the node is offline"
t_ok "$([ $((got - last)) -ge $LIVE_MS ]; echo $?)" "not before lease_time + fence_grace after its last accepted request ($((got - last)) ms)"
t_is "$(lc shelf.get '{"name":"s3"}' | jq -c .activations)" "[]" "its activations are released"
t_is "$(ltls n5 shelf.activate '{"name":"s3"}' | jq -c '[.activations[].node]')" '["n5"]' "and another node activates the shelf"
t_is "$(lc node.set_state '{"node":"n4","state":"online"}' | jq -r .state)" "online" "n4 is set online again"
t_is "$(ltls n4 heartbeat | jq -c .activations)" "[]" "its heartbeats are accepted again"
t_is "$(lc node.set_state '{"node":"n6","state":"offline"}' | jq -r .state)" "offline" "a node that is not live is offline at once"
lc node.set_state '{"node":"n6","state":"online"}' >/dev/null
ltls n5 shelf.deactivate '{"name":"s3"}' >/dev/null

# (3b) the admin ends another node's activation only once that node is not live
lc shelf.create '{"name":"s5","books":1}' >/dev/null
# before the request: the librarian hears it after this
last=$(now_ms)
ltls n6 shelf.activate '{"name":"s5"}' >/dev/null
t_like "$(lmsg lc shelf.deactivate '{"name":"s5","node":"n6"}')" \
	"EBUSY: cannot deactivate for another node shelf 's5': it is active on node 'n6' \(rw\), which is live .*s left" \
	"the admin's deactivate of a live holder's activation is refused, naming it and the time left"
t_is "$(lc shelf.get '{"name":"s5"}' | jq -c '[.activations[].node]')" '["n6"]' "  the activation stays"
t_like "$(lmsg ltls n5 shelf.activate '{"name":"s5"}')" "EBUSY" "  and no other node activates the shelf meanwhile"
r=$(poll_ok 15 lc shelf.deactivate '{"name":"s5","node":"n6"}')
got=$(now_ms)
t_is "$(jq -c . <<<"$r")" '{"name":"s5","node":"n6"}' "once n6 is no longer live the admin's deactivate goes ahead"
t_ok "$([ $((got - last)) -ge $LIVE_MS ]; echo $?)" "  not before lease_time + fence_grace ($((got - last)) ms)"
t_is "$(ltls n6 shelf.activate '{"name":"s5"}' | jq -c '[.activations[].node]')" '["n6"]' "a holder's own deactivate needs no wait:"
t_is "$(ltls n6 shelf.deactivate '{"name":"s5"}' | jq -c .)" '{"name":"s5","node":"n6"}' "  it is answered at once"

# (4) a stopped librarian: heartbeats queued meanwhile count from when they are read,
# the stop itself counts against nobody
lc shelf.create '{"name":"s4","books":1}' >/dev/null
session a n1; exec 5>"$T/a.in"
session b n2; exec 6>"$T/b.in"
session c n3; exec 7>"$T/c.in"
echo '{"op":"shelf.activate","name":"s4"}' >&5
echo '{"op":"heartbeat"}' >&6
echo '{"op":"heartbeat"}' >&7
replies a 1; replies b 1; replies c 1
t_is "$(jq -c '.result.activations | map(.node)' "$T/a.out")" '["n1"]' "n1 holds s4 (through its session)"
kill -STOP "$LPID"
echo '{"op":"shelf.activate","name":"s4","takeover":true}' >&6
sleep 0.3
echo '{"op":"heartbeat"}' >&5
sleep 5 # the librarian is stopped: nothing to poll
kill -CONT "$LPID"
replies b 2
replies a 2
t_like "$(sed -n 2p "$T/b.out")" '"ok":false.*EBUSY.*active on node .n1. \(rw\), which is live' \
	"after a 5 s stop (lease + grace 4 s) the takeover queued meanwhile is refused: n1's heartbeat counts from when it was read"
t_is "$(sed -n 2p "$T/a.out" | jq -c '.result.activations | map(.name)')" '["s4"]' "n1's queued heartbeat is answered, listing s4"
t_is "$(sed -n 2p "$T/a.out" | jq -r '.result.activations[0].uuid')" "$(jq -r '.result.uuid' "$T/a.out" | head -n 1)" \
	"  with s4's UUID (the agent matches a file renamed while open by it)"
t_is "$(node_field n3 alive)" "true" "n3, heard just before the stop and silent since, is still live: the stop is not counted"
t_like "$(cat "$T/server.log")" "the event loop did not run for [0-9.]+ s \(stopped or starved\): not counted" "the librarian logs the stall"
exec 5>&- 6>&- 7>&-
wait $SESSIONS

# (5) after a restart no takeover before lease + grace
ltls n1 heartbeat >/dev/null
lt_stop
start=$(now_ms)
lt_start
e=$(lmsg ltls n2 shelf.activate '{"name":"s4","takeover":true}')
t_like "$e" "EBUSY: .*which is live" "right after a restart the holder is live: every node counts as heard at start"
r=$(poll_ok 15 ltls n2 shelf.activate '{"name":"s4","takeover":true}')
got=$(now_ms)
t_is "$(jq -c '[.activations[].node]' <<<"$r")" '["n2"]' "the takeover is granted later"
t_ok "$([ $((got - start)) -ge $LIVE_MS ]; echo $?)" "not before lease_time + fence_grace after the start ($((got - start)) ms)"
t_is "$(ltls n1 auth | jq -r .fabric_uuid)" "$uuid" "the fabric's UUID is the catalogue's: the same after a restart"
t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_done
