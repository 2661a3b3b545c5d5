#!/bin/bash
# Heartbeat round trips of a well-behaved node, without and with an attack on
# the same librarian, in one run (issue 15): the attack is 1,000 idle and
# 1,000 half-open TCP connections and one node flooding pipelined requests
# (256 at a time, shelf.list of 100 shelves). The node sends a heartbeat
# every INTERVAL ms over one TLS session for SECONDS; the phases alternate
# ROUNDS times. Optimised builds; loopback. The attackers run at nice 19:
# on a fabric they are other machines, and the node's CPU is its own; here
# the librarian, the node and the attackers share the host's cores, and the
# figure to watch is the librarian's, not the scheduler's.
# Results: docs/bench-librarian.md.
#
#   [PIN=1] bench/librarian/attack.sh [SECONDS] [ROUNDS] [INTERVAL_MS] [SYNC]
#   e.g. PIN=1 bench/librarian/attack.sh 20 2 10 full
# Smallest (tests/bench/smoke.t): bench/librarian/attack.sh 1 1 10 normal
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-20} ROUNDS=${2:-2} INTERVAL=${3:-10} SYNC=${4:-full}
# PIN=1: the librarian on the last core, the clients on the others
PIN_LIB= PIN_CLI=
if [ "${PIN:-0}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	PIN_LIB="taskset -c $(($(nproc) - 1))"
	PIN_CLI="taskset -c 0-$(($(nproc) - 2))"
fi
{ make -s -C librarian librarian client/liblibrarian.a && make -s -C bench/librarian; } >/dev/null || exit 1
LIB=librarian/librarian
ATTACK=build/bench/lib-attack
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-attack.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
mkdir -m 700 "$T/keys"
for n in admin node01 node02; do $LIB genkey "$T/keys/$n.key"; done
PORT=$(shuf -i 20000-32000 -n 1)
ADDR=127.0.0.1:$PORT
cat >"$T/lib.conf" <<EOC
librarian = {
	database = "$T/cat.db";
	listen = [ "$ADDR", "unix:$T/sock" ];
	book_size = "8G";
	synchronous = "$SYNC";
	new_books = "zero";
	share = "rw";
	keys_dir = "keys";
	admin = { key_file = "keys/admin.key"; };
};
fabric = { compact = { racks = 1; enclosures = 4; nodes = 10; books = 1000; power_domain = "enclosure"; }; };
EOC
$PIN_LIB $LIB -c "$T/lib.conf" 2>"$T/log" &
pid=$!
until $LIB client --connect "unix:$T/sock" stats >/dev/null 2>&1; do
	kill -0 $pid 2>/dev/null || { cat "$T/log"; exit 1; }
	sleep 0.05
done
for i in $(seq 1 1000); do echo "{\"op\":\"shelf.create\",\"name\":\"s$i\",\"books\":1}"; done |
	$LIB client --connect "unix:$T/sock" --stdin >/dev/null

echo "# librarian heartbeat under attack $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(uname -r)"
echo "# command: PIN=${PIN:-0} bench/librarian/attack.sh $SECS $ROUNDS $INTERVAL $SYNC"
echo "# load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
beat() { $PIN_CLI $ATTACK "$ADDR" heartbeat node02 "$T/keys/node02.key" "$SECS" "$INTERVAL"; }
for r in $(seq 1 "$ROUNDS"); do
	printf 'round %d, quiet:  %s\n' "$r" "$(beat)"
	$PIN_CLI nice -n 19 $ATTACK "$ADDR" flood node01 "$T/keys/node01.key" $((SECS + 4)) 256 >"$T/flood" 2>"$T/flood.err" &
	f=$!
	until grep -qs flooding "$T/flood.err" || ! kill -0 $f 2>/dev/null; do sleep 0.05; done
	$PIN_CLI nice -n 19 $ATTACK "$ADDR" idle 1000 $((SECS + 4)) >/dev/null 2>&1 &
	i=$!
	$PIN_CLI nice -n 19 $ATTACK "$ADDR" halfopen 1000 $((SECS + 4)) >/dev/null 2>&1 &
	h=$!
	sleep 2
	printf 'round %d, attack: %s' "$r" "$(beat)"
	wait $f $i $h
	printf ' (flood: %s requests answered%s)\n' "$(cat "$T/flood")" "$(grep -v flooding "$T/flood.err" | sed "s/^/; /" | tr -d "\n")"
done
$LIB client --connect "unix:$T/sock" stats | jq -c '{requests, loop}'
echo "# load average at end: $(cut -d" " -f1-3 /proc/loadavg)"
kill -TERM $pid
wait $pid
pid=
