#!/bin/bash
# Side-by-side comparison of two librarian builds: each round starts A, then
# B, on a fresh catalogue, warms up 2 s and runs the single-client cycle
# (create 8 books + destroy + report zeroed) for SECONDS, printing cycles/s
# and the WAL write counters of `stats`. Alternating the builds spreads a
# changing host load over both.
#   bench/librarian/ab.sh A-BINARY B-BINARY [BOOKS] [SECONDS] [ROUNDS] [SYNC]
#   e.g. bench/librarian/ab.sh /tmp/librarian.old librarian/librarian 1000000 8 3 normal
# AB_CONF_A and AB_CONF_B add settings to A's and B's librarian group;
# default new_books = "zero" (librarians allocate only known-zero books,
# and the fresh catalogue's are taken as such); set one empty for a build
# before that setting, which refuses it. AB_WARMUP: seconds of warm-up
# (default 2). Smallest (tests/bench/smoke.t):
#   AB_WARMUP=1 bench/librarian/ab.sh librarian/librarian librarian/librarian 40000 1 1 normal
set -u
[ $# -ge 2 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
A=$1 B=$2 BOOKS=${3:-1000000} SECS=${4:-8} ROUNDS=${5:-3} SYNC=${6:-normal}
cd "$(dirname "$0")/../.." || exit 1
{ make -s -C librarian librarian client/liblibrarian.a && make -s -C bench/librarian; } >/dev/null || exit 1
LIB=librarian/librarian
BENCH=build/bench/lib-bench
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-ab.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
mkdir -m 700 "$T/keys"
$LIB genkey "$T/keys/admin.key"
PORT=$(shuf -i 20000-32000 -n 1)
echo "# A = $A, B = $B; $BOOKS books, synchronous = $SYNC, $SECS s per run; load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
	for which in A B; do
		bin=$A
		[ "$which" = B ] && bin=$B
		rm -f "$T"/cat.db*
		cat >"$T/lib.conf" <<EOC
librarian = {
	database = "$T/cat.db";
	listen = [ "127.0.0.1:$PORT", "unix:$T/sock" ];
	book_size = "8G";
	synchronous = "$SYNC";
	$([ "$which" = A ] && echo "${AB_CONF_A-new_books = \"zero\";}" || echo "${AB_CONF_B-new_books = \"zero\";}")
	admin = { key_file = "keys/admin.key"; };
};
fabric = { compact = { racks = 1; enclosures = 4; nodes = 10; books = $((BOOKS / 40)); power_domain = "enclosure"; }; };
EOC
		"$bin" -c "$T/lib.conf" 2>"$T/log" &
		pid=$!
		until $LIB client --connect "unix:$T/sock" stats >/dev/null 2>&1; do
			kill -0 $pid 2>/dev/null || { cat "$T/log"; exit 1; }
			sleep 0.05
		done
		$BENCH "127.0.0.1:$PORT" admin "$T/keys/admin.key" cycle 1 "${AB_WARMUP:-2}" 8 >/dev/null || exit 1
		a=$($LIB client --connect "unix:$T/sock" stats | jq -c .db)
		out=$($BENCH "127.0.0.1:$PORT" admin "$T/keys/admin.key" cycle 1 "$SECS" 8) || exit 1
		b=$($LIB client --connect "unix:$T/sock" stats | jq -c .db)
		n=$(printf '%s\n' "$out" | awk 'NR == 1 { print $6 }')
		printf 'round %d %s: %s cycles/s' "$round" "$which" "$(printf '%s\n' "$out" | awk 'NR == 1 { print $(NF - 1) }')"
		jq -rn --argjson a "$a" --argjson b "$b" --argjson n "$n" \
			'if $b.wal_writes then ", per cycle \(($b.wal_writes - $a.wal_writes) / $n * 10 | floor / 10) WAL writes in \(($b.wal_write_calls - $a.wal_write_calls) / $n * 10 | floor / 10) calls" else "" end'
		kill -TERM $pid
		wait $pid
		pid=
	done
done
