#!/bin/bash
# Librarian failover benchmark (docs/bench-librarian.md, "Failover"; issue 34).
# A pg_auto_failover formation (a monitor and two data nodes, synchronous
# replication, tuned: tests/librarian/lib-pgaf.sh), two librarians on it (la,
# lb: one leads, one stands by; leader_ttl_ms 2000, leader_refresh_ms 500,
# otherwise the defaults: lease_time 30 s, heartbeat_interval 5 s), and two
# probes on both librarians' address list (build/bench/lib-probe): a writer
# (the admin over TLS: create a shelf, destroy it, report its book zeroed,
# again and again) and node n1's heartbeats, sent as the agent's renewal thread sends
# them. RUNS times each KIND of fault:
#   librarian  kill -9 of the leading librarian (started again after the
#              run: a standby)
#   primary    kill -9 of the database's primary (its keeper, postmaster and
#              backends: its host crashed; its keeper started again after
#              the run: it rejoins as the standby)
# For each run: the service gap (the fault to the first acknowledged request
# after it), the longest gap between the writer's acknowledgements, the
# longest gap between n1's renewing heartbeat replies, and a lapse if that
# gap reached lease_time (the node's kernel lease would have run out). At
# the end the catalogue is checked against the writer's log (no
# acknowledged change lost) and by `librarian check`.
#
#   bench/librarian/failover.sh [RUNS] [KINDS]
#   e.g. bench/librarian/failover.sh 20 "librarian primary"
# Smallest (tests/bench/smoke.t): bench/librarian/failover.sh 1
set -u
cd "$(dirname "$0")/../.." || exit 1
RUNS=${1:-20}
KINDS=${2:-"librarian primary"}
LEASE=30 HB=5 TTL=2000 REFRESH=500
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
if ! command -v pg_autoctl >/dev/null || [ ! -x "$PGBIN/initdb" ]; then
	echo "failover.sh: needs PostgreSQL 15 and pg_auto_failover (make deps installs them)" >&2
	exit 2
fi
{ make -s -C librarian librarian client/liblibrarian.a && make -s -C bench/librarian; } >/dev/null || exit 1
LIB=$PWD/librarian/librarian
PROBE=$PWD/build/bench/lib-probe
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-failover.XXXXXX")
declare -A PID
PROBES=
lt_free_port() {
	local p
	for p in $(shuf -i 20000-32000 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}
. tests/librarian/lib-pgaf.sh
cleanup() {
	local p
	for p in $PROBES "${PID[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	paf_stop
	[ -n "${KEEP:-}" ] && echo "# kept $T" >&2 || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ms() { date +%s%3N; }
fail() { echo "failover.sh: $*" >&2; [ -n "${PAF_D:-}" ] && tail -n 5 "$PAF_D"/*.run.log >&2; exit 1; }

echo "# librarian failover benchmark $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(uname -r)"
echo "# command: bench/librarian/failover.sh $RUNS \"$KINDS\""
echo "# load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
echo "# lease_time $LEASE s, heartbeat_interval $HB s, leader_ttl_ms $TTL, leader_refresh_ms $REFRESH"
paf_start || fail "the pg_auto_failover formation did not start"
mkdir -m 700 "$T/keys"
for k in admin n1; do "$LIB" genkey "$T/keys/$k.key"; done
declare -A PORT
for l in la lb; do
	PORT[$l]=$(lt_free_port)
	cat >"$T/$l.conf" <<EOC
librarian = {
	name = "$l";
	database = "$PAF_URI";
	listen = [ "127.0.0.1:${PORT[$l]}", "unix:$T/$l.sock" ];
	book_size = "8G";
	keys_dir = "keys";
	admin = { key_file = "keys/admin.key"; };
	new_books = "zero";
	share = "rw";
	heartbeat_interval = $HB;
	lease_time = $LEASE;
	leader_ttl_ms = $TTL;
	leader_refresh_ms = $REFRESH;
};
fabric = { racks = ( { name = "r1"; enclosures = ( { name = "e1"; nodes = (
	{ name = "n1"; igs = ( { ig = 0; books = 200; } ); },
	{ name = "n2"; igs = ( { ig = 1; books = 200; } ); } ); } ); } ); };
EOC
done
ADDRS="127.0.0.1:${PORT[la]},127.0.0.1:${PORT[lb]}"

role() { "$LIB" client --connect "unix:$T/$1.sock" --timeout 2000 auth 2>/dev/null | jq -r .role 2>/dev/null; }
# start NAME WANT: librarian NAME in the background, until its role is WANT (bounded, 30 s)
start() {
	local i
	"$LIB" -c "$T/$1.conf" >>"$T/$1.log" 2>&1 &
	PID[$1]=$!
	for i in $(seq 1 300); do
		[ "$(role "$1")" = "$2" ] && return 0
		kill -0 "${PID[$1]}" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 5 "$T/$1.log" >&2
	fail "librarian $1 did not become $2"
}
start la leader
start lb standby
"$PROBE" write "$ADDRS" admin "$T/keys/admin.key" w >"$T/write.log" 2>"$T/write.err" &
PROBES="$!"
"$PROBE" beat "$ADDRS" n1 "$T/keys/n1.key" $((HB * 1000)) >"$T/beat.log" 2>"$T/beat.err" &
PROBES="$PROBES $!"

# A probe's line: TAG SENT MS ... (lib-probe.c): the request left at SENT,
# its outcome came at MS.
# after LOG TAG MS: the outcome time of LOG's first TAG line for a request
# sent at or after MS (empty if none)
after() { awk -v t="$3" -v g="$2" '$1 == g && $2 >= t { print $3; exit }' "$1"; }
# back LOG OK BAD MS: when service came back after a fault at MS: the
# outcome time of the first OK line for a request sent after the first BAD
# line sent at or after MS (requests sent just before the fault took
# effect may still be acknowledged); with no BAD line (a heartbeat that
# was only slow), the first OK line for a request sent at or after MS,
# unless NEED is given (the writer: its requests always fail in a fault)
back() {
	awk -v t="$4" -v ok="$2" -v bad="$3" -v need="${5:-}" '$2 < t { next }
		$1 == bad && !e { e = $2 }
		$1 == ok && !first { first = $3 }
		$1 == ok && e && $2 >= e { print $3; found = 1; exit }
		END { if (!found && !e && first && !need) print first }' "$1"
}
# gap LOG TAG FROM TO: the longest gap between the outcome times of
# consecutive TAG lines, from the last one before FROM to the one at TO
gap() {
	awk -v g="$2" -v a="$3" -v b="$4" '$1 != g { next }
		$3 < a { last = $3; next }
		{ if (last && $3 - last > max) max = $3 - last; last = $3; if ($3 >= b) exit }
		END { print max + 0 }' "$1"
}
# until_after LOG TAG MS SECONDS: poll until LOG has a TAG line for a request sent at or after MS
until_after() {
	local i
	for i in $(seq 1 $(($4 * 10))); do
		[ -n "$(after "$1" "$2" "$3")" ] && return 0
		sleep 0.1
	done
	return 1
}
leader() { local l; for l in la lb; do [ "$(role $l)" = leader ] && { echo $l; return; }; done; }

# until_back LOG OK BAD MS SECONDS [NEED]: poll until back LOG OK BAD MS NEED says when
until_back() {
	local i
	for i in $(seq 1 $(($5 * 10))); do
		[ -n "$(back "$1" "$2" "$3" "$4" "${6:-}")" ] && return 0
		sleep 0.1
	done
	return 1
}

# a warm-up: both probes acknowledged
t0=$(ms)
until_after "$T/write.log" A "$t0" 30 && until_after "$T/beat.log" H "$t0" 30 || fail "the probes got no acknowledgement"
RESULTS=$T/results
: >"$RESULTS"
for kind in $KINDS; do
	echo
	echo "## kill -9 of the $kind, $RUNS runs"
	for run in $(seq 1 "$RUNS"); do
		case $kind in
		librarian)
			victim=$(leader)
			[ -n "$victim" ] || fail "no librarian leads"
			f=$(ms)
			kill -9 "${PID[$victim]}"
			wait "${PID[$victim]}" 2>/dev/null
			;;
		primary)
			victim=$(paf_primary)
			[ -n "$victim" ] || fail "no database primary"
			f=$(ms)
			paf_kill9 "$victim"
			;;
		*) fail "kind '$kind': librarian or primary" ;;
		esac
		# service again: an acknowledged request and a renewing heartbeat after the fault
		until_back "$T/write.log" A E "$f" 120 need && until_back "$T/beat.log" H F "$f" 120 ||
			fail "run $run ($kind): no acknowledgement within 120 s of the fault"
		a=$(back "$T/write.log" A E "$f" need) h=$(back "$T/beat.log" H F "$f")
		ag=$(gap "$T/write.log" A "$f" "$a") hg=$(gap "$T/beat.log" H "$f" "$h")
		lapse=no
		[ "$hg" -ge $((LEASE * 1000)) ] && lapse=LAPSE
		printf '%s %d %d %d %d %s %s\n' "$kind" "$run" $((a - f)) "$ag" "$hg" "$lapse" "$f" >>"$RESULTS"
		printf 'run %2d: %-2s killed; service again after %5d ms; longest gap between acknowledgements %5d ms, between renewals %5d ms; lease lapse: %s\n' \
			"$run" "$victim" $((a - f)) "$ag" "$hg" "$lapse"
		# the victim comes back before the next run
		case $kind in
		librarian) start "$victim" standby ;;
		primary)
			paf_run "$victim"
			want="primary secondary"
			[ "$victim" = node1 ] && want="secondary primary"
			paf_wait_states "$want" 180 || fail "run $run: $victim did not rejoin the formation"
			;;
		esac
	done
done
for p in $PROBES; do kill -9 "$p" && wait "$p"; done 2>/dev/null
PROBES=

echo
echo "## summary (service: fault to the first acknowledgement; renewals: longest gap between n1's renewing heartbeat replies)"
awk -v lease=$((LEASE * 1000)) '
	{ n[$1]++; s[$1, n[$1]] = $3; if ($4 > ag[$1]) ag[$1] = $4; if ($5 > hg[$1]) hg[$1] = $5; if ($6 != "no") lapse[$1]++ }
	END {
		for (k in n) {
			m = n[k]
			for (i = 1; i <= m; i++) v[i] = s[k, i]
			for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
			goal = k == "librarian" ? 3000 : 15000
			printf "%-9s runs %d: service median %d ms, max %d ms (goal %d ms: %s); longest ack gap %d ms; longest renewal gap %d ms of %d; lapses %d of %d\n",
				k, m, v[int((m + 1) / 2)], v[m], goal, v[m] <= goal ? "met" : "NOT MET", ag[k], hg[k], lease, lapse[k] + 0, m
		}
	}' "$RESULTS"

# the catalogue against the writer's log: the last acknowledged step of each name
paf_psql "$(paf_primary)" "SELECT name FROM shelves WHERE name LIKE 'w-%'" | sort >"$T/have"
awk '$1 == "A" && $4 == "shelf.create" { st[$5] = "c" } $1 == "A" && $4 == "shelf.destroy" { st[$5] = "d" }
	$1 == "E" { if (!($5 in st) || st[$5] == "c") st[$5] = "?" st[$5] }
	{ last = $5 }
	END { if (st[last] !~ /^\?/) st[last] = "?" st[last]; for (k in st) print k, st[k] }' "$T/write.log" | sort >"$T/want"
lost=$(awk 'NR == FNR { have[$1] = 1; next }
	$2 == "c" && !($1 in have) { print "lost: the acknowledged create of " $1 > "/dev/stderr"; n++ }
	$2 == "d" && ($1 in have) { print "lost: the acknowledged destroy of " $1 > "/dev/stderr"; n++ }
	END { print n + 0 }' "$T/have" "$T/want")
echo "writer: $(grep -c '^A' "$T/write.log") requests acknowledged, $(grep -c '^E' "$T/write.log") failed; acknowledged changes lost: $lost"
echo "librarian check: $("$LIB" check --db "$PAF_URI" 2>&1 | tail -n 1)"
echo
echo "# load average at end: $(cut -d" " -f1-3 /proc/loadavg)"
[ "$lost" = 0 ]
