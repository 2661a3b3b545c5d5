#!/bin/bash
# The PostgreSQL store against SQLite in one run (issue 34): cycles per
# second (create a shelf of 8 books, destroy it, report its books zeroed)
# with 1 and 32 clients over TLS, each store served by a librarian of its
# own, the runs alternating. PostgreSQL 15 with a SYNCHRONOUS standby: two
# clusters made here (initdb, pg_basebackup) in a temporary directory,
# unix sockets there only, the standby streaming and named in
# synchronous_standby_names, fsync on; SQLite with synchronous = full.
# Prints both, the ratios against the goals (0.4x with 1 client, 0.8x
# with 32) and PostgreSQL's round trips a cycle (stats db.round_trips).
# Results and the exact command: docs/bench-librarian.md.
#
#   bench/librarian/pgsync.sh [SECONDS] [BOOKS]      (default 10 40000)
# bench/librarian/run.sh calls it with PG=1.
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-10}
SIZE=${2:-40000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/initdb" ] || { echo "pgsync.sh: $PGBIN/initdb missing (apt-get install postgresql-15)" >&2; exit 1; }
{ make -s -C librarian librarian client/liblibrarian.a && make -s -C bench/librarian; } >/dev/null || exit 1
LIB=librarian/librarian
BENCH=build/bench/lib-bench
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-pgbench.XXXXXX")
chmod 755 "$T"
pids=''
as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop() {
	local p
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for d in s p; do
		[ -f "$T/$d/postmaster.pid" ] && as "$PGBIN/pg_ctl" -D "$T/$d" -m fast -w -t 60 stop >/dev/null 2>&1
	done
	rm -rf "$T"
}
trap stop EXIT
[ "$(id -u)" = 0 ] && chown postgres: "$T"

# the primary (port 5433) and its synchronous standby (5434), sockets in $T
as "$PGBIN/initdb" -D "$T/p" -A trust -U postgres -E UTF8 --locale=C >"$T/initdb.log" 2>&1 ||
	{ cat "$T/initdb.log"; exit 1; }
cat >>"$T/p/postgresql.conf" <<EOC
listen_addresses = ''
unix_socket_directories = '$T'
port = 5433
fsync = on
synchronous_commit = on
synchronous_standby_names = 'standby'
wal_level = replica
max_wal_senders = 4
max_connections = 60
EOC
as "$PGBIN/pg_ctl" -D "$T/p" -l "$T/p.log" -w -t 60 start >/dev/null || { cat "$T/p.log"; exit 1; }
as "$PGBIN/pg_basebackup" -h "$T" -p 5433 -U postgres -D "$T/s" -R -X stream >/dev/null 2>&1 ||
	{ echo "pg_basebackup failed" >&2; exit 1; }
echo "port = 5434" >>"$T/s/postgresql.conf"
# after pg_basebackup -R's own line (postgresql.auto.conf: the last one counts)
echo "primary_conninfo = 'host=$T port=5433 user=postgres application_name=standby'" >>"$T/s/postgresql.auto.conf"
as "$PGBIN/pg_ctl" -D "$T/s" -l "$T/s.log" -w -t 60 start >/dev/null || { cat "$T/s.log"; exit 1; }
psql() { as "$PGBIN/psql" -X -q -A -t -h "$T" -p 5433 -U postgres "$@"; }
for _ in $(seq 1 100); do
	[ "$(psql -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")" = sync ] && break
	sleep 0.1
done
repl=$(psql -c "SELECT application_name || ' ' || sync_state FROM pg_stat_replication")
[ "$repl" = "standby sync" ] || { echo "pgsync.sh: no synchronous standby ($repl)" >&2; exit 1; }
as "$PGBIN/createdb" -h "$T" -p 5433 -U postgres lfs || exit 1

mkdir -m 700 "$T/keys"
chmod 777 "$T" # the librarians write their catalogue and sockets here
$LIB genkey "$T/keys/admin.key"
declare -A ADDR LPID
# CPU time (ms) of processes: the librarians, or both clusters' postmasters and children
ticks=$(getconf CLK_TCK)
cpu_ms() {
	local p t=0
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] && t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo $((t * 1000 / ticks))
}
pg_pids() {
	local d m
	for d in p s; do
		m=$(head -n 1 "$T/$d/postmaster.pid")
		# shellcheck disable=SC2046 # a list of pids
		echo "$m" $(ps --ppid "$m" -o pid=)
	done
}
for store in sqlite pg; do
	port=$(shuf -i 20000-32000 -n 1)
	ADDR[$store]=127.0.0.1:$port
	db=$T/cat.db
	[ $store = pg ] && db="postgresql:///lfs?host=$T&port=5433&user=postgres"
	cat >"$T/$store.conf" <<EOC
librarian = {
	database = "$db";
	listen = [ "127.0.0.1:$port", "unix:$T/$store.sock" ];
	book_size = "8G";
	synchronous = "full";
	new_books = "zero";
	admin = { key_file = "keys/admin.key"; };
};
fabric = { compact = { racks = 1; enclosures = 4; nodes = 10; books = $((SIZE / 40)); power_domain = "enclosure"; }; };
EOC
	$LIB -c "$T/$store.conf" 2>"$T/$store.log" &
	pids="$pids $!"
	LPID[$store]=$!
	for _ in $(seq 1 600); do
		$LIB client --connect "unix:$T/$store.sock" stats >/dev/null 2>&1 && break
		kill -0 $! 2>/dev/null || { cat "$T/$store.log"; exit 1; }
		sleep 0.05
	done
done

echo "# PostgreSQL (synchronous standby) against SQLite (synchronous = full), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r)"
echo "# command: bench/librarian/pgsync.sh $SECS $SIZE"
echo "# $SIZE books; PostgreSQL $(psql -c 'SHOW server_version'), fsync $(psql -c 'SHOW fsync'), synchronous_commit $(psql -c 'SHOW synchronous_commit'), standby: $repl"
echo "# load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
declare -A CPS
for clients in 1 32; do
	for store in sqlite pg; do
		before=$($LIB client --connect "unix:$T/$store.sock" stats | jq .db.round_trips)
		x0=$(psql -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'lfs'" lfs)
		c0=$(cpu_ms "${LPID[$store]}")
		# shellcheck disable=SC2046 # a list of pids
		d0=$(cpu_ms $(pg_pids))
		out=$($BENCH "${ADDR[$store]}" admin "$T/keys/admin.key" cycle $clients "$SECS" 8) || exit 1
		c1=$(cpu_ms "${LPID[$store]}")
		# shellcheck disable=SC2046
		d1=$(cpu_ms $(pg_pids))
		after=$($LIB client --connect "unix:$T/$store.sock" stats | jq .db.round_trips)
		x1=$(psql -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'lfs'" lfs)
		n=$(printf '%s\n' "$out" | awk 'NR == 1 { print $6 }')
		CPS[$store$clients]=$(printf '%s\n' "$out" | awk 'NR == 1 { print $(NF - 1) }')
		printf '%-6s %s\n' "$store" "$(printf '%s\n' "$out" | head -n 1)"
		printf '%s\n' "$out" | tail -n +2 | sed 's/^/       /'
		[ "${n:-0}" -gt 0 ] 2>/dev/null &&
			echo "       CPU a cycle: librarian $(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }') ms$([ $store = pg ] && awk -v a="$d0" -v b="$d1" -v n="$n" 'BEGIN { printf ", PostgreSQL (primary and standby) %.2f ms", (b - a) / n }')"
		[ $store = pg ] && [ "${n:-0}" -gt 0 ] 2>/dev/null &&
			echo "       PostgreSQL round trips a cycle: $(awk -v a="$before" -v b="$after" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }') (stats db.round_trips; commits included); commits a cycle: $(awk -v a="$x0" -v b="$x1" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }') (pg_stat_database, all sessions)"
	done
done
for store in sqlite pg; do
	a=$($LIB client --connect "unix:$T/$store.sock" stats | jq .db.round_trips)
	g=$($BENCH "${ADDR[$store]}" admin "$T/keys/admin.key" grow 1000 3) || exit 1
	b=$($LIB client --connect "unix:$T/$store.sock" stats | jq .db.round_trips)
	printf '%-6s %s\n' "$store" "$g"
	[ $store = pg ] && echo "       PostgreSQL round trips per run of create, grow to 1,000, destroy, zeroed: $(((b - a) / 3))"
done
# what one round trip and one commit cost here, without the librarian (pgbench, 1 client)
psql -c "CREATE TABLE rt(k int PRIMARY KEY, v bigint); INSERT INTO rt VALUES (1, 0)" lfs >/dev/null
echo "SELECT 1;" >"$T/select.sql"
printf 'BEGIN;\nUPDATE rt SET v = v + 1 WHERE k = 1;\nCOMMIT;\n' >"$T/commit.sql"
for w in select commit; do
	lat=$(as "$PGBIN/pgbench" -n -h "$T" -p 5433 -U postgres -f "$T/$w.sql" -T 3 -c 1 lfs 2>/dev/null |
		awk '/latency average/ { print $4 }')
	echo "pgbench, 1 client, 3 s: $w average ${lat:-?} ms$([ $w = commit ] && echo " (3 round trips: BEGIN, UPDATE, COMMIT with the standby's flush)")"
done
echo
echo "## PostgreSQL with a synchronous standby against SQLite (synchronous = full), same run"
for clients in 1 32; do
	goal=0.4
	[ $clients = 32 ] && goal=0.8
	awk -v p="${CPS[pg$clients]:-0}" -v s="${CPS[sqlite$clients]:-0}" -v c=$clients -v g=$goal 'BEGIN {
		r = s > 0 ? p / s : 0
		printf "%2d client%s: PostgreSQL %s cycles/s, SQLite %s cycles/s = %.2fx (goal %sx: %s)\n", \
			c, (c == 1 ? " " : "s"), p, s, r, g, ((r >= g) ? "met" : "NOT met") }'
done
echo "# load average at end: $(cut -d" " -f1-3 /proc/loadavg)"
