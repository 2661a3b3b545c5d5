#!/bin/bash
# The database's own failover (docs/HA.md, "PostgreSQL with
# pg_auto_failover"): a formation of the test's own (a monitor and two data
# nodes, synchronous replication, tuned timeouts; tests/librarian/lib-pgaf.sh),
# one librarian on its multi-host URI. A client creates and destroys shelves
# and logs every acknowledged change; node n1 heartbeats. kill -9 of the
# primary's keeper and postmaster (its host crashed): the librarian connects
# again to the promoted standby and serves; the gaps in the acknowledgements
# and in n1's heartbeats are shown (not asserted, but the heartbeat gap must
# stay under lease_time - heartbeat_interval); no acknowledged change is
# lost, no unacknowledged one half done, every book in one place at most,
# librarian check clean. Every wait is a bounded poll.
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
if ! command -v pg_autoctl >/dev/null || [ ! -x "$PGBIN/initdb" ]; then
	echo "1..0 # SKIP no pg_autoctl or PostgreSQL 15 (apt-get install postgresql-15-auto-failover pg-auto-failover-cli)"
	exit 77
fi
. tests/lib/tap.sh
. tests/librarian/lib.sh
. tests/librarian/lib-pgaf.sh

LEASE=30 HB=2
LBPID=
NFT= # the partition's nft table while it exists
PART_GID=$((60000 + $$ % 5000)) # lb runs with this group: the partition matches its sockets by it
trap '[ -n "$NFT" ] && nft delete table inet "$NFT"; [ -n "$LBPID" ] && kill -9 "$LBPID" 2>/dev/null; lt_cleanup; paf_stop' EXIT
trap 'exit 1' INT TERM # the EXIT trap cleans up after a timeout too
ms() { date +%s%3N; }

paf_start
t_ok $? "a pg_auto_failover formation: monitor, node1 primary, node2 synchronous standby" || {
	for f in "$PAF_D"/*.log; do t_diag "$f:"; tail -n 5 "$f" | sed 's/^/#   /'; done
	t_done
}
t_is "$(paf_psql node1 "SHOW synchronous_standby_names")" "ANY 1 (pgautofailover_standby_2)" \
	"  the primary waits for the standby at every commit"
t_is "$(paf_psql node1 "SHOW synchronous_commit")" "on" "  synchronous_commit = on"

LT_DB=$PAF_URI
lt_keys admin n1
lt_conf "$LT_FABRIC" 'share = "rw"; name = "la";'
sed -i -e "s/lease_time = 2;/lease_time = $LEASE;/" -e "s/heartbeat_interval = 1;/heartbeat_interval = $HB;/" \
	-e "s/fence_grace = [0-9]*;/fence_grace = 4;/" "$T/lib.conf"
lt_start || { t_ok 1 "the librarian starts on the formation"; t_done; }
t_ok 0 "the librarian starts on the formation's URI (two hosts, target_session_attrs=read-write)"
lt_sql() { paf_psql "$(paf_primary)" "$1"; }

# The client (admin) and node n1: one connection each, one request a line
# through fifos; each reply read with a bound. The librarian closes the
# connections of a round whose commit failed, as a client would then, each
# connects again (a new client process).
NCONN=0
# conn W R ARGS...: a client --stdin on fresh fifos; its ends in the variables W and R
conn() {
	local w=$1 r=$2 f
	shift 2
	[ -n "${!w}" ] && eval "exec ${!w}>&- ${!r}<&-"
	NCONN=$((NCONN + 1))
	f=$T/c$NCONN
	mkfifo "$f.in" "$f.out"
	"$CLI" client "$@" --stdin <"$f.in" >"$f.out" 2>>"$T/client.err" &
	eval "exec {$w}>\"\$f.in\" {$r}<\"\$f.out\""
}
cl() { conn CLW CLR --connect "unix:$SOCK"; }
node() { conn NW NR --connect "127.0.0.1:$PORT" --node n1 --key "$T/keys/n1.key"; }
CLW= CLR= NW= NR=
trap '' PIPE # a write to a client that went away fails (EPIPE) instead
cl
node
LOG=$T/acked # "create NAME" / "destroy NAME" per acknowledged change; "unknown NAME" otherwise
: >"$LOG"
last_ok=0 gap=0 last_beat_ok=0 beat_gap=0 next_beat=0 nops=0 nunknown=0
declare -A DEAD # names with an unknown outcome: no more requests on them
# req JSON: send on the client connection; OK = the reply's ok (true/false/closed)
req() {
	local line
	if ! { echo "$1" >&"$CLW" && read -r -t 30 line <&"$CLR"; } 2>/dev/null; then
		cl
		OK=closed
		return
	fi
	OK=$(jq -r .ok <<<"$line")
}
# beat: n1's heartbeat when due (every heartbeat_interval); its gap kept
beat() {
	local now line
	now=$(ms)
	[ "$now" -ge "$next_beat" ] || return 0
	next_beat=$((now + HB * 1000))
	if ! { echo '{"op":"heartbeat"}' >&"$NW" && read -r -t 30 line <&"$NR"; } 2>/dev/null; then
		node
		return 0
	fi
	[ "$(jq -r .ok <<<"$line")" = true ] || return 0
	now=$(ms)
	[ "$last_beat_ok" -gt 0 ] && [ $((now - last_beat_ok)) -gt "$beat_gap" ] && beat_gap=$((now - last_beat_ok))
	last_beat_ok=$now
}
# step I: create s$I; destroy s$((I-3)); every answer logged
step() {
	local i=$1 d=$((i - 3)) ok now
	req "{\"op\":\"shelf.create\",\"name\":\"s$i\",\"books\":2}"
	ok=$OK
	nops=$((nops + 1))
	if [ "$ok" = true ]; then echo "create s$i" >>"$LOG"; else echo "unknown s$i" >>"$LOG"; DEAD[s$i]=1; nunknown=$((nunknown + 1)); fi
	if [ "$d" -ge 0 ] && [ -z "${DEAD[s$d]:-}" ]; then
		req "{\"op\":\"shelf.destroy\",\"name\":\"s$d\"}"
		ok=$OK
		nops=$((nops + 1))
		if [ "$ok" = true ]; then echo "destroy s$d" >>"$LOG"; else echo "unknown s$d" >>"$LOG"; DEAD[s$d]=1; nunknown=$((nunknown + 1)); fi
	fi
	now=$(ms)
	if [ "$ok" = true ]; then
		[ "$last_ok" -gt 0 ] && [ $((now - last_ok)) -gt "$gap" ] && gap=$((now - last_ok))
		last_ok=$now
	fi
	beat
}

# zero_zombies: the destroyed shelves' books are zombies until zeroed:
# report them zeroed, so that the pool (140 books) has room for more rounds
zero_zombies() {
	echo '{"op":"zombie.list","limit":65536}' | "$CLI" client --connect "unix:$SOCK" --stdin | tail -n 1 |
		jq -c '{op:"zombie.zeroed", books:.result.books}' | "$CLI" client --connect "unix:$SOCK" --stdin |
		jq -e .ok >/dev/null
}

i=0
for _ in $(seq 1 30); do step $i; i=$((i + 1)); done
t_is "$(grep -c '^create' "$LOG") $nunknown" "30 0" "30 shelves created before the failover, every one acknowledged"
pre_gap=$gap gap=0
old=$(paf_primary)
t_is "$old" node1 "node1 is the primary"

# the monitor's host crashes: no failover is possible until it is back, but
# the data nodes keep replicating and the librarian keeps writing, longer
# than the keepers' network_partition_timeout (4 s: a primary that reaches
# neither the monitor nor its standby would demote itself)
paf_kill9 monitor
mon_ms=$(ms) n=0 nbad=0
for _ in $(seq 1 400); do # bounded: 400 steps; stops 8 s after the kill
	[ $(($(ms) - mon_ms)) -gt 8000 ] && [ "$n" -ge 5 ] && break
	before=$(grep -c '^create' "$LOG")
	step $i
	i=$((i + 1))
	if [ "$(grep -c '^create' "$LOG")" -gt "$before" ]; then n=$((n + 1)); else nbad=$((nbad + 1)); fi
	[ $((n % 10)) = 0 ] && { zero_zombies || t_diag "the zombies were not reported zeroed"; } # the pool: 140 books
done
t_is "$nbad" 0 "the monitor killed: the librarian writes on ($n creates acknowledged in $(($(ms) - mon_ms)) ms, none refused)"
t_is "$(paf_psql node1 "SHOW synchronous_standby_names") $(paf_psql node1 "SELECT pg_is_in_recovery()")" \
	"ANY 1 (pgautofailover_standby_2) f" "  node1 is still the primary and still waits for node2 at every commit"
paf_run monitor
paf_wait_states "primary secondary" 60
t_ok $? "the monitor started again: the formation is primary and secondary again"
zero_zombies || t_diag "the zombies were not reported zeroed"

# node1's host crashes: its keeper, postmaster and backends are killed at once
kill_ms=$(ms)
paf_kill9 node1
ok_after=0 first_ok=0
for _ in $(seq 1 ${HA_STEPS:-1200}); do # bounded: 1200 steps; the failover takes ~15 s
	before=$(grep -c '^create' "$LOG")
	step $i
	i=$((i + 1))
	if [ "$(grep -c '^create' "$LOG")" -gt "$before" ]; then
		[ "$first_ok" = 0 ] && first_ok=$(ms)
		ok_after=$((ok_after + 1))
		[ "$ok_after" -ge 20 ] && break
	else
		sleep 0.05 # a paced retry while no database is primary (not a synchronisation)
	fi
done
t_ok "$([ "$ok_after" -ge 20 ]; echo $?)" "the librarian serves again after the primary was killed (20 creates acknowledged after it)"
for _ in $(seq 1 150); do # n1's first acknowledged heartbeat after the kill closes its gap
	[ "$last_beat_ok" -gt "$kill_ms" ] && break
	next_beat=0
	beat
	[ "$last_beat_ok" -gt "$kill_ms" ] || sleep 0.2
done
if [ "$first_ok" -gt 0 ]; then
	t_diag "service gap: $((first_ok - kill_ms)) ms from the kill to the first acknowledged create; longest gap between acknowledgements $gap ms (before the kill: $pre_gap ms)"
else
	t_diag "service gap: no create acknowledged after the kill"
fi
t_diag "n1's longest heartbeat gap: $beat_gap ms (lease_time $LEASE s, heartbeat_interval $HB s); $nops requests, $nunknown answered with an error"
t_ok "$([ "$last_beat_ok" -gt "$kill_ms" ] && [ "$beat_gap" -lt $(((LEASE - HB) * 1000)) ]; echo $?)" \
	"n1's heartbeats are acknowledged again; the longest gap ($beat_gap ms) is under lease_time - heartbeat_interval"
t_like "$(paf_primary)" "^node2$" "node2 was promoted"
t_like "$(cat "$T/server.log")" "connected again to the database \\(connection [0-9]+\\): 127.0.0.1 port ${PAF_PORT[node2]}" \
	"  and the librarian says it connected to it"

# catalogue_check WHEN: the catalogue against the client's log
catalogue_check() {
	have=$(lt_sql "SELECT name || ' ' || books FROM shelves ORDER BY name")
	lost=0 ghost=0 bad=0
	declare -A LAST
	while read -r what name; do LAST[$name]=$what; done <"$LOG"
	for name in "${!LAST[@]}"; do
		row=$(grep -x "$name [0-9]*" <<<"$have")
		case ${LAST[$name]} in
		create) [ "$row" = "$name 2" ] || { lost=$((lost + 1)); t_diag "lost: acknowledged create of $name (catalogue: '$row')"; } ;;
		destroy) [ -z "$row" ] || { ghost=$((ghost + 1)); t_diag "lost: acknowledged destroy of $name (catalogue: '$row')"; } ;;
		unknown) [ -z "$row" ] || [ "$row" = "$name 2" ] || { bad=$((bad + 1)); t_diag "half done: $name (catalogue: '$row')"; } ;;
		esac
	done
	t_is "$lost $ghost" "0 0" "no acknowledged change lost ($(grep -c '^create' "$LOG") creates, $(grep -c '^destroy' "$LOG") destroys acknowledged)"
	t_is "$bad" 0 "a change answered with an error is whole or absent"
	t_is "$(lt_sql "SELECT count(*) FROM shelves WHERE name NOT IN ($(printf "'%s'," "${!LAST[@]}")'')")" 0 \
		"no shelf the client never asked for"
	t_is "$(lt_sql "SELECT (SELECT count(*) FROM books WHERE shelf IS NOT NULL) = (SELECT sum(books) FROM shelves)")" t \
		"every book of a shelf is in one shelf only, and the counts agree"
	t_like "$("$LIB" check --db "$PAF_URI" 2>&1)" "consistent" "librarian check on the new primary: consistent"
}
catalogue_check

# one data node left: it commits alone; the old primary's host comes back
t_is "$(paf_psql node2 "SHOW synchronous_standby_names")" "" \
	"one data node left: the new primary commits alone (wait_primary: synchronous_standby_names empty)"
paf_run node1
paf_wait_states "secondary primary" 120
t_ok $? "node1's keeper started again: node1 rejoins as the standby, node2 stays primary"
t_is "$(paf_psql node2 "SHOW synchronous_standby_names")" "ANY 1 (pgautofailover_standby_1)" \
	"  and every commit waits for node1 again"
req '{"op":"shelf.create","name":"last","books":2}'
t_is "$OK" true "the librarian writes on"
[ "$OK" = true ] && echo "create last" >>"$LOG"
for _ in $(seq 1 100); do # bounded: 10 s (the standby has the commit; replay may lag)
	[ "$(paf_psql node1 "SELECT count(*) FROM shelves WHERE name = 'last'")" = 1 ] && break
	sleep 0.1
done
t_is "$(paf_psql node1 "SELECT count(*) FROM shelves WHERE name = 'last'")" 1 "  and node1 has the write"

# --- the standby's host crashes ------------------------------------------------
# node2 primary, node1 its synchronous standby: node1's keeper and postmaster
# are killed. Commits on node2 wait for node1 until the monitor finds it
# unhealthy (4 s) and sets node2 wait_primary (synchronous_standby_names
# empty); then the librarian commits again. Heartbeats, answered from the
# lease thread's reading connection, do not wait for a commit: a prober of
# their own (n1's heartbeats every second on a connection of its own, each
# answer's time logged) sees them answered throughout. Nothing acknowledged
# is lost.
( for _ in $(seq 1 120); do [ -e "$T/probe.stop" ] && break; echo '{"op":"heartbeat"}'; sleep 1; done ) | # paced, bounded: 120 s
	"$CLI" client --connect "127.0.0.1:$PORT" --node n1 --key "$T/keys/n1.key" --stdin 2>>"$T/probe.err" |
	while read -r line; do echo "$(ms) $(jq -r .ok <<<"$line")"; done >"$T/probe" &
probe_pid=$!
for _ in $(seq 1 100); do grep -q ' true$' "$T/probe" && break; sleep 0.1; done # bounded: 10 s
sb_ms=$(ms)
sl0=$(wc -l <"$T/server.log")
paf_kill9 node1
last_ok=$sb_ms gap=0 # the gap from the kill on
ok_after=0 first_ok=0 nbad=0
for _ in $(seq 1 ${HA_STEPS:-1200}); do # bounded: 1200 steps; the monitor needs ~5 s
	before=$(grep -c '^create' "$LOG")
	step $i
	i=$((i + 1))
	if [ "$(grep -c '^create' "$LOG")" -gt "$before" ]; then
		[ "$first_ok" = 0 ] && first_ok=$(ms)
		ok_after=$((ok_after + 1))
		[ "$ok_after" -ge 10 ] && [ $(($(ms) - sb_ms)) -gt 8000 ] && break
	else
		nbad=$((nbad + 1))
		sleep 0.05 # a paced retry (not a synchronisation)
	fi
	[ $((ok_after % 10)) = 0 ] && { zero_zombies || t_diag "the zombies were not reported zeroed"; }
done
end_ms=$(ms)
touch "$T/probe.stop" # its loop ends within a second, then the client, then the logger
wait "$probe_pid" 2>/dev/null
# the probe's longest gap between acknowledged heartbeats, from the kill on
pgap=$(awk -v from="$sb_ms" -v to="$end_ms" '$2 == "true" { if (last && $1 > from) { g = $1 - last; if (g > max) max = g } last = $1 }
	END { if (last < to - 2000) max = to - last; print max + 0 }' "$T/probe")
t_diag "the standby killed: the longest gap between acknowledgements (from the kill) $gap ms ($nbad not acknowledged); the heartbeat probe's longest gap $pgap ms"
paf_as pg_autoctl show events --pgdata "$PAF_D/monitor" --count 6 2>&1 | cut -c1-200 | sed 's/^/# /'
t_diag "(the kill at $(date -u -d @$((sb_ms / 1000)) +%T)); the librarian's log since:"
tail -n +$((sl0 + 1)) "$T/server.log" | head -n 20 | cut -c1-200 | sed 's/^/#   /'
t_ok "$([ "$ok_after" -ge 10 ]; echo $?)" "the standby killed: the librarian writes again ($ok_after creates acknowledged after the kill)"
t_is "$(paf_psql node2 "SHOW synchronous_standby_names") $(paf_psql node2 "SELECT pg_is_in_recovery()")" " f" \
	"  node2 is still the primary and commits alone (wait_primary)"
t_ok "$([ "$pgap" -gt 0 ] && [ "$pgap" -lt $(((LEASE - HB) * 1000)) ]; echo $?)" \
	"  heartbeats were answered while commits waited: the probe's longest gap ($pgap ms) is under lease_time - heartbeat_interval"
catalogue_check
paf_run node1
paf_wait_states "secondary primary" 120
t_ok $? "node1 rejoins as the standby"
zero_zombies || t_diag "the zombies were not reported zeroed"

# --- a database fault and a librarian fault together -------------------------
# lb, a second librarian on the formation (another port and socket): a
# standby. Then la and the database's primary are killed at once (one host
# held both, say): lb connects to the promoted standby, takes the lead once
# la's row expires (on the database's clock, 10 s) and serves; n1's
# heartbeats go to lb. Nothing acknowledged is lost.
PORTB=$(lt_free_port)
sed -e 's#name = "la";#name = "lb";#' -e "s#listen = .*#listen = [ \"127.0.0.1:$PORTB\", \"unix:$T/sockb\" ];#" \
	"$T/lib.conf" >"$T/libb.conf"
setpriv --regid="$PART_GID" --clear-groups "$LIB" -c "$T/libb.conf" >>"$T/serverb.log" 2>&1 &
LBPID=$!
role_b() { "$CLI" client --connect "unix:$T/sockb" --timeout 2000 auth 2>/dev/null | jq -r '"\(.role) \(.epoch)"' 2>/dev/null; }
for _ in $(seq 1 150); do [ "$(role_b)" = "standby 0" ] && break; sleep 0.2; done
t_is "$(role_b)" "standby 0" "lb, a second librarian on the formation, is a standby"
zero_zombies
t_ok $? "the destroyed shelves' books reported zeroed (free again)"
epoch_a=$(lc auth | jq .epoch)
for _ in $(seq 1 10); do step $i; i=$((i + 1)); done
old=$(paf_primary)
gap=0 beat_gap=0
kill_ms=$(ms)
paf_kill9 "$old"
lt_kill9
PORTA=$PORT SOCKA=$SOCK
SOCK=$T/sockb PORT=$PORTB # the client and n1 go to lb from now on
cl
node
ok_after=0 first_ok=0
for _ in $(seq 1 ${HA_STEPS:-1200}); do # bounded: 1200 steps
	before=$(grep -c '^create' "$LOG")
	step $i
	i=$((i + 1))
	if [ "$(grep -c '^create' "$LOG")" -gt "$before" ]; then
		[ "$first_ok" = 0 ] && first_ok=$(ms)
		ok_after=$((ok_after + 1))
		[ "$ok_after" -ge 20 ] && break
	else
		sleep 0.05 # a paced retry while nothing serves (not a synchronisation)
	fi
done
t_ok "$([ "$ok_after" -ge 20 ]; echo $?)" \
	"la and the primary ($old) killed together: lb serves (20 creates acknowledged after it)"
for _ in $(seq 1 150); do # n1's first acknowledged heartbeat after the kill closes its gap
	[ "$last_beat_ok" -gt "$kill_ms" ] && break
	next_beat=0
	beat
	[ "$last_beat_ok" -gt "$kill_ms" ] || sleep 0.2
done
[ "$first_ok" -gt 0 ] && t_diag "service gap: $((first_ok - kill_ms)) ms from the double kill to the first create acknowledged by lb"
t_diag "n1's longest heartbeat gap: $beat_gap ms"
t_ok "$([ "$last_beat_ok" -gt "$kill_ms" ] && [ "$beat_gap" -lt $(((LEASE - HB) * 1000)) ]; echo $?)" \
	"  n1's heartbeats are acknowledged by lb; the longest gap ($beat_gap ms) is under lease_time - heartbeat_interval"
b=$(role_b)
t_ok "$([ "${b% *}" = leader ] && [ "${b#* }" -gt "$epoch_a" ]; echo $?)" \
	"  lb leads with a newer epoch ($b, la had $epoch_a)"
t_like "$(cat "$T/serverb.log")" "'lb' is the leader \\(epoch [0-9]+\\): took over; every node counts as heard now" \
	"  and its log says it took over, every node counted as heard"
catalogue_check

# --- a partition of the active librarian -------------------------------------
# lb (leading now) loses the network: nft drops every packet its sockets send
# (matched by the group it runs as) and every packet to its TCP port. A
# create sent to it then on its unix socket (no partition cuts that; its
# statements to the database are lost) must not be acknowledged. la, started
# again, a standby, takes over once lb's row expires; the client and n1 go
# to it. The partition heals: lb finds the row moved on and refuses; its
# create was not committed.
"$LIB" -c "$T/lib.conf" >>"$T/server.log" 2>&1 &
LPID=$!
role_a() { "$CLI" client --connect "unix:$SOCKA" --timeout 2000 auth 2>/dev/null | jq -r '"\(.role) \(.epoch)"' 2>/dev/null; }
for _ in $(seq 1 150); do [ "$(role_a)" = "standby 0" ] && break; sleep 0.2; done
t_is "$(role_a)" "standby 0" "la, started again, is a standby"
b=$(role_b)
epoch_b=${b#* }
for _ in $(seq 1 5); do step $i; i=$((i + 1)); done
NFT=lfs_ha_$$
nft -f - <<EON
table inet $NFT {
	chain out { type filter hook output priority 0; meta skgid $PART_GID drop; }
	chain in { type filter hook input priority 0; tcp dport $PORTB drop; }
}
EON
t_ok $? "lb partitioned (nft drops what its sockets send and what comes to its port $PORTB)"
kill_ms=$(ms)
"$CLI" client --connect "unix:$T/sockb" --timeout 120000 shelf.create '{"name":"ghostp","books":2}' \
	>"$T/ghostp.out" 2>&1 &
gpid=$!
SOCK=$SOCKA PORT=$PORTA
cl
node
gap=0 beat_gap=0 ok_after=0 first_ok=0
for _ in $(seq 1 ${HA_STEPS:-1200}); do # bounded: 1200 steps
	before=$(grep -c '^create' "$LOG")
	step $i
	i=$((i + 1))
	if [ "$(grep -c '^create' "$LOG")" -gt "$before" ]; then
		[ "$first_ok" = 0 ] && first_ok=$(ms)
		ok_after=$((ok_after + 1))
		[ "$ok_after" -ge 20 ] && break
	else
		sleep 0.05 # a paced retry while nothing serves (not a synchronisation)
	fi
done
t_ok "$([ "$ok_after" -ge 20 ]; echo $?)" "lb partitioned: la serves (20 creates acknowledged after it)"
for _ in $(seq 1 150); do # n1's first acknowledged heartbeat after the partition closes its gap
	[ "$last_beat_ok" -gt "$kill_ms" ] && break
	next_beat=0
	beat
	[ "$last_beat_ok" -gt "$kill_ms" ] || sleep 0.2
done
[ "$first_ok" -gt 0 ] && t_diag "service gap: $((first_ok - kill_ms)) ms from the partition to the first create acknowledged by la"
t_ok "$([ "$last_beat_ok" -gt "$kill_ms" ] && [ "$beat_gap" -lt $(((LEASE - HB) * 1000)) ]; echo $?)" \
	"  n1's heartbeats are acknowledged by la; the longest gap ($beat_gap ms) is under lease_time - heartbeat_interval"
a=$(role_a)
t_ok "$([ "${a% *}" = leader ] && [ "${a#* }" -gt "$epoch_b" ]; echo $?)" "  la leads with a newer epoch ($a, lb had $epoch_b)"
nft delete table inet "$NFT"
t_ok $? "the partition heals"
NFT=
wait "$gpid"
t_ok "$([ $? != 0 ]; echo $?)" "the create sent to lb during the partition was not acknowledged ($(tail -n 1 "$T/ghostp.out"))"
t_is "$(lt_sql "SELECT count(*) FROM shelves WHERE name = 'ghostp'")" 0 "  nor committed"
for _ in $(seq 1 150); do [ "$(role_b)" = "standby 0" ] && break; sleep 0.2; done
t_is "$(role_b)" "standby 0" "lb, back on the network, is a standby"
t_like "$(cat "$T/serverb.log")" "'lb' is no longer the leader: the row holds epoch ${a#* } of 'la'" "  and says it was deposed"
catalogue_check

exec {CLW}>&- {NW}>&-
kill -TERM "$LBPID"
wait "$LBPID"
t_is "$?" 0 "lb stops cleanly"
LBPID=
lt_done
