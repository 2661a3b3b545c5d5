#!/bin/bash
# Crash consistency: four clients create, grow, shrink and destroy shelves while
# the librarian is killed with SIGKILL after a random number of acknowledged
# operations. After each restart: every acknowledged operation is present
# (lib-stress verify) and the catalogue is consistent (librarian check).
. tests/lib/tap.sh
. tests/librarian/lib.sh

ROUNDS=${LT_CRASH_ROUNDS:-50}
CLIENTS=4
lt_keys admin
lt_conf 'compact = { racks = 1; enclosures = 2; nodes = 4; books = 200; power_domain = "enclosure"; };'

acks() { cat "$T"/j-"$1"-* 2>/dev/null | grep -c '^A'; }
bad_verify=0 bad_check=0 total_acks=0 failures=""
lt_start || failures="start"
for round in $(seq 1 "$ROUNDS"); do
	[ -n "$LPID" ] || break
	pids=
	for k in $(seq 1 $CLIENTS); do
		"$STRESS" "unix:$SOCK" run "r$round-c$k" "$T/j-$round-$k" $((round * 100 + k)) 2>>"$T/stress.err" &
		pids="$pids $!"
	done
	target=$(shuf -i 1-100 -n 1)
	deadline=$((SECONDS + 20))
	while [ "$(acks "$round")" -lt "$target" ] && [ $SECONDS -lt $deadline ]; do
		sleep 0.005
	done
	lt_kill9
	wait $pids
	n=$(acks "$round")
	total_acks=$((total_acks + n))
	lt_start || { failures="$failures restart($round)"; break; }
	if ! out=$("$STRESS" "unix:$SOCK" verify "$T"/j-"$round"-*); then
		bad_verify=$((bad_verify + 1))
		failures="$failures verify($round)"
		printf '%s\n' "$out" | sed 's/^/#   /' | head -n 10
	fi
	if ! out=$(lt_check_db); then
		bad_check=$((bad_check + 1))
		failures="$failures check($round)"
		printf '%s\n' "$out" | sed 's/^/#   /' | head -n 10
	fi
	# clear the round's shelves and zero their books, so the next round has room
	{
		lc shelf.list "{\"prefix\":\"r$round-\"}" | jq -c '.shelves[] | {op:"shelf.destroy", name}'
		echo '{"op":"zombie.list","limit":65536}'
	} | "$CLI" client --connect "unix:$SOCK" --stdin | tail -n 1 |
		jq -c '{op:"zombie.zeroed", books:.result.books}' |
		"$CLI" client --connect "unix:$SOCK" --stdin >/dev/null
done
[ -n "$LPID" ] && { lt_stop || failures="$failures stop"; }
t_diag "$ROUNDS rounds, $total_acks acknowledged operations before the kills"
t_is "$failures" "" "every round restarted, verified and stopped cleanly"
t_is "$bad_verify" "0" "every acknowledged operation survived SIGKILL ($ROUNDS rounds)"
t_is "$bad_check" "0" "the catalogue was consistent after every crash"
t_ok $(( total_acks >= ROUNDS * 10 ? 0 : 1 )) "the clients did real work ($total_acks acknowledged operations)"
t_is "$(lt_start && lc stats | jq -c '[.books.inuse, .books.zombie, .shelves]'; lt_stop)" "[0,0,0]" "after cleanup every book is free again"
lt_done
