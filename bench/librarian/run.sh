#!/bin/bash
# Librarian benchmark: create shelf of 8 books + destroy + report zeroed, with
# 1 and 32 clients over TLS; one grow of 1,000 books; list of 1,000 shelves;
# RSS. Catalogues of 40,000 books (40 nodes x 1,000 books of 8 GiB) and
# 1,000,000 books (40 nodes x 25,000), each with synchronous = full and normal.
# Results and the exact command: docs/bench-librarian.md.
#
#   bench/librarian/run.sh [SECONDS-PER-CYCLE-RUN] [SIZES] [SYNC-MODES]
#   e.g. bench/librarian/run.sh 10 "40000 1000000" "full normal"
# ORIG=DIR (tm-librarian's src/, bench/librarian/orig.sh) measures HPE's
# original librarian first, in the same run, and ends with the ratios.
# PG=1 ends with bench/librarian/pgsync.sh SECONDS (the first size):
# PostgreSQL with a synchronous standby against SQLite (synchronous = full),
# 1 and 32 clients, side by side, and the ratios.
# Smallest (tests/bench/smoke.t): bench/librarian/run.sh 2 40000 normal
# (the 32 clients' TLS handshakes count in the seconds: 1 s may see none
# of their cycles complete on a loaded host)
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-10}
SIZES=${2:-"40000 1000000"}
SYNCS=${3:-"full normal"}
{ make -s -C librarian librarian client/liblibrarian.a && make -s -C bench/librarian; } >/dev/null || exit 1
LIB=librarian/librarian
BENCH=build/bench/lib-bench
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-bench.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
mkdir -m 700 "$T/keys"
$LIB genkey "$T/keys/admin.key"
PORT=$(shuf -i 20000-32000 -n 1)
ADDR=127.0.0.1:$PORT

rss() { awk '/^VmRSS|^VmHWM/ { printf "%s %d MiB  ", $1, $2 / 1024 }' "/proc/$pid/status"; echo; }

echo "# librarian benchmark $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(uname -r)"
echo "# command: bench/librarian/run.sh $SECS \"$SIZES\" \"$SYNCS\""
echo "# load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
orig_cycles='' orig_list='' ratios=''
if [ -n "${ORIG:-}" ]; then
	echo
	o=$(bench/librarian/orig.sh "$ORIG" "$SECS") || exit 1
	printf '%s\n' "$o"
	orig_cycles=$(printf '%s\n' "$o" | awk '/cycles\/s$/ { print $(NF - 1) }')
	orig_list=$(printf '%s\n' "$o" | awk '/list of/ { print $7 }')
fi
for size in $SIZES; do
	for sync in $SYNCS; do
		rm -f "$T"/cat.db*
		cat >"$T/lib.conf" <<EOC
librarian = {
	database = "$T/cat.db";
	listen = [ "$ADDR", "unix:$T/sock" ];
	book_size = "8G";
	synchronous = "$sync";
	new_books = "zero";
	admin = { key_file = "keys/admin.key"; };
};
fabric = { compact = { racks = 1; enclosures = 4; nodes = 10; books = $((size / 40)); power_domain = "enclosure"; }; };
EOC
		echo
		echo "## $size books, synchronous = $sync"
		start=$(date +%s%N)
		$LIB -c "$T/lib.conf" 2>"$T/log" &
		pid=$!
		until $LIB client --connect "unix:$T/sock" stats >/dev/null 2>&1; do
			kill -0 $pid 2>/dev/null || { cat "$T/log"; exit 1; }
			sleep 0.05
		done
		printf 'catalogue created and served in %s s; idle: ' "$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
		rss
		for clients in 1 32; do
			before=$($LIB client --connect "unix:$T/sock" stats | jq -c .db)
			out=$($BENCH "$ADDR" admin "$T/keys/admin.key" cycle $clients "$SECS" 8) || exit 1
			after=$($LIB client --connect "unix:$T/sock" stats | jq -c .db)
			printf '%s\n' "$out"
			[ "$clients" = 1 ] && [ -n "$orig_cycles" ] && ratios="$ratios
cycles/s, 1 client, $size books, synchronous = $sync: $(printf '%s\n' "$out" |
				awk -v o="$orig_cycles" 'NR == 1 { printf "%s vs the original'"'"'s %s = %.0fx", $(NF - 1), o, $(NF - 1) / o }')"
			# SQLite's work per cycle: independent of machine load
			n=$(printf '%s\n' "$out" | awk 'NR == 1 { print $6 }')
			# (no cycle: SECONDS too short for the clients' TLS handshakes)
			[ "${n:-0}" -gt 0 ] 2>/dev/null || { echo "  per cycle: no cycle completed"; continue; }
			jq -rn --argjson a "$before" --argjson b "$after" --argjson n "$n" \
				'"  per cycle: \(($b.vm_steps - $a.vm_steps) / $n | floor) SQLite VM steps, \(($b.cache_hit + $b.cache_miss - $a.cache_hit - $a.cache_miss) / $n | floor) page reads (\(($b.cache_miss - $a.cache_miss) / $n * 10 | floor / 10) misses), \(($b.cache_write - $a.cache_write) / $n | floor) page writes"'
		done
		$BENCH "$ADDR" admin "$T/keys/admin.key" grow 1000 5 || exit 1
		lst=$($BENCH "$ADDR" admin "$T/keys/admin.key" list 1000 20) || exit 1
		printf '%s\n' "$lst"
		[ -n "$orig_list" ] && ratios="$ratios
list of 1,000 shelves, $size books, synchronous = $sync: $(printf '%s\n' "$lst" |
			awk -v o="$orig_list" '/^list of/ { printf "%s ms vs the original'"'"'s %s ms = %.1fx faster", $6, o, o / $6 }')"
		printf 'after the runs: '
		rss
		kill -TERM $pid
		wait $pid
		pid=
	done
done
if [ -n "${PG:-}" ]; then
	echo
	bench/librarian/pgsync.sh "$SECS" "${SIZES%% *}" || exit 1
fi
if [ -n "$ratios" ]; then
	echo
	echo "## against the original, same run"
	printf '%s\n' "${ratios#?}"
fi
echo
echo "# load average at end: $(cut -d" " -f1-3 /proc/loadavg)"
