#!/bin/bash
# LFS-TEST: vm once
# Every benchmark under bench/ still runs (a smoke run, not a timing): each
# once with its smallest settings (the one-line "smoke" commands of
# docs/bench-*.md), checked to exit 0 and to print its table: the header
# line and at least one data row with numbers. The librarian's five
# benchmarks run on the host only; they run beside the VM benchmarks, one
# after the other, while those boot their guests one after the other (each
# needs a set-up of its own: fabric sizes, book sizes, nodes, librarian
# settings). Every bench's time and log are printed as comments.
. tests/lib/tap.sh
set -u
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }
KVER=$(tools/kernels resolve "${KVER:-6.1}") || { echo "Bail out! no kernel ${KVER:-6.1}"; exit 1; }
export KVER
[ -e "build/module/$KVER/lfs.ko" ] || { echo "Bail out! no lfs.ko for $KVER (make module KVER=$KVER)"; exit 1; }
# the module and the helpers are built (make check, make helpers): the
# scripts that would build them first do not
export LFS_KO=build/module/$KVER/lfs.ko
make -s -C bench >/dev/null && make -s -C tests >/dev/null ||
	{ echo "Bail out! make -C bench / make -C tests failed"; exit 1; }
mkdir -p tests/out
OUT=$(mktemp -d tests/out/bench-smoke.XXXXXX)
hostpid=
trap '[ -z "$hostpid" ] || { kill "$hostpid" 2>/dev/null; wait "$hostpid"; }' EXIT

# run NAME CMD...: CMD's output (both streams) in $OUT/NAME.log, its exit
# status and seconds in $OUT/NAME.rc
run() {
	local name=$1 t0=$SECONDS rc
	shift
	"$@" >"$OUT/$name.log" 2>&1
	rc=$?
	echo "$rc $((SECONDS - t0))" >"$OUT/$name.rc"
}

# table NAME HEADER ROW WHAT: NAME exited 0 and its log has a line matching
# HEADER and one matching ROW (extended regexes)
also() { # LOG DESCRIPTION REGEX...: every REGEX matches a line of LOG
	local log=$OUT/$1.log what=$2 re
	shift 2
	for re in "$@"; do
		grep -Eq -- "$re" "$log" && continue
		t_ok 1 "$what"
		t_diag "no line of $log matches '$re'; its mmap/copy lines and its end:"
		grep -E 'mmap|copy|DRAM|guest.sh' "$log" | tail -n 20 | sed 's/^/#   /'
		tail -n 10 "$log" 2>/dev/null | sed 's/^/#   /'
		return 1
	done
	t_ok 0 "$what"
}

table() {
	local rc=1 secs='?' log=$OUT/$1.log
	[ -s "$OUT/$1.rc" ] && read -r rc secs <"$OUT/$1.rc"
	t_diag "$1: ${secs} s, exit $rc ($log)"
	if [ "$rc" = 0 ] && grep -Eq -- "$2" "$log" && grep -Eq -- "$3" "$log"; then
		t_ok 0 "$4"
		return 0
	fi
	t_ok 1 "$4"
	t_diag "expected exit 0, a line matching '$2' and one matching '$3'; the log ends:"
	tail -n 25 "$log" 2>/dev/null | sed 's/^/#   /'
	return 1
}

N='[0-9]+(\.[0-9]+)?'
start=$SECONDS
# host only, beside the VMs
(
	run librarian-run bench/librarian/run.sh 2 40000 normal
	run librarian-ab env AB_WARMUP=1 bench/librarian/ab.sh librarian/librarian librarian/librarian 40000 1 1 normal
	run librarian-attack bench/librarian/attack.sh 1 1 10 normal
	run librarian-failover bench/librarian/failover.sh 1
	run librarian-pgsync bench/librarian/pgsync.sh 2 40000
) &
hostpid=$!

run lfsvol env LFS_BENCH_FABRIC=320M BENCH_TRACES=1 BENCH_STARTUP=1 bench/lvmish/bench-lfsvol.sh 1
table lfsvol '^operation +n +median ms +p90 ms$' "^lfsvol_create_a_dirty +1 +$N +$N$" \
	"bench/lvmish/bench-lfsvol.sh 1: the table of medians, every loop"
grep -q '^loop 3, agent, never-used books with leftover bytes zeroed by the agent: create [0-9]' "$OUT/lfsvol.log"
t_ok $? "  and the LVM2/lfsvol ratios"

run driver env LFS_BENCH_SMOKE=1 bench/driver/run "$OUT/driver"
table driver '^\| workload \| lfs \| dm-linear \| raw pmem0 \| raw pmem1 ' "^\| randread-4k \| $N IOPS, $N us \| $N, $N us " \
	"bench/driver/run (LFS_BENCH_SMOKE=1): the fio table"
also driver "  and the DAX mmap copy and altwrite tables" \
	"^\| write \(DRAM to file\), MiB/s \| $N \| $N \| $N \| $N \| 1 \|$" "^\| median over batches \| $N \| $N \| $N "

run namespace env LFS_BENCH_SMOKE=1 bench/namespace/run "$OUT/namespace"
table namespace '^\| workload \| /lfs file \| ext4 -o dax on /dev/lfsN ' "^\| write-1M \| $N MiB/s, $N us \| $N, $N us " \
	"bench/namespace/run (LFS_BENCH_SMOKE=1): the fio table"
also namespace "  and the mmap copy table" "^\| read \(file to DRAM\) \| $N \| $N \| 1 \|$"

run cycle bench/namespace/cycle.sh 1
table cycle '^fs +n=1 min ' "^fs/lfsvol median ratio: $N / $N = $N" \
	"bench/namespace/cycle.sh 1: medians per kind and the ratios"

run fencing bench/fencing/run.sh 1
table fencing '^cut -> fence: +min [0-9]+ ms' $'^1\t[0-9]+\t[0-9]+\t-?[0-9]+\t[0-9]+$' \
	"bench/fencing/run.sh 1: the run's row and the summary"
grep -q '^fence strictly before takeover in 1 of 1 runs$' "$OUT/fencing.log"
t_ok $? "  the fence came before the takeover"

run latency env LFS_BENCH_SHELVES=10 LFS_BENCH_FILES=10 bench/fencing/latency 1
table latency '^refused_ns +n=1 min ' "^done_ns +n=1 min $N median $N p99 $N max $N ms$" \
	"bench/fencing/latency 1 (10 shelves, 10 files): the fence latency's figures"

wait "$hostpid"
hostpid=
table librarian-run '^## 40000 books, synchronous = normal$' "^clients 1 +books/shelf 8 +cycles [1-9][0-9]* in $N s += $N cycles/s$" \
	"bench/librarian/run.sh 2 40000 normal: cycles/s with 1 client"
grep -Eq "^clients 32 +books/shelf 8 +cycles [0-9]+ in $N s" "$OUT/librarian-run.log" &&
	grep -Eq "^grow of an empty shelf to 1000 books: median $N ms" "$OUT/librarian-run.log" &&
	grep -Eq "^list of 1000 shelves: median $N ms" "$OUT/librarian-run.log"
t_ok $? "  and with 32 clients, the grow and list times"
table librarian-ab '^# A = librarian/librarian, B = librarian/librarian; 40000 books' "^round 1 B: $N cycles/s" \
	"bench/librarian/ab.sh (same build twice, 1 round of 1 s): cycles/s of A and B"
table librarian-attack '^# librarian heartbeat under attack' "^round 1, attack: n [0-9]+ p50 $N p99 $N max $N" \
	"bench/librarian/attack.sh 1 1 10 normal: heartbeats quiet and under attack"
table librarian-failover '^# librarian failover benchmark' "^librarian runs 1: service median [0-9]+ ms, max [0-9]+ ms" \
	"bench/librarian/failover.sh 1: a librarian and a database primary killed, the gaps"
also librarian-failover "  the primary's run, and no acknowledged change lost" \
	"^primary +runs 1: service median [0-9]+ ms" "acknowledged changes lost: 0$"
table librarian-pgsync '^## PostgreSQL with a synchronous standby against SQLite' \
	"^ 1 client : PostgreSQL [0-9]+ cycles/s, SQLite [0-9]+ cycles/s = $N" \
	"bench/librarian/pgsync.sh 2 40000: PostgreSQL with a synchronous standby against SQLite"
t_diag "all benchmarks: $((SECONDS - start)) s"
t_done
