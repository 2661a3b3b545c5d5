#!/bin/bash
# Fence and takeover times (issue 14): two nodes of the emulated Machine
# (QEMU TCG), lease LEASE s and fence_grace GRACE s. In each of RUNS runs
# node1 holds a shelf rw and writes into it with O_DIRECT, is cut off from
# the librarian (eth0 down), and node2 asks for a takeover until it is
# granted. Measured on the host's clock from the cut (tests/fencing/lib.sh):
#   fence   node1's kernel fenced the shelf (a watcher in the guest saw the
#           sysfs state "fenced" within 10 ms and the host saw its file)
#   take    node2 sent the takeover request that was granted
#   margin  take - fence: a lower bound of the real margin (the fence was
#           seen late, the grant came after the request was sent)
# The fence must come strictly before the takeover in every run. Results:
# docs/bench-fencing.md.
#
#   bench/fencing/run.sh [RUNS] [LEASE] [GRACE] [KVER]
# Smallest (tests/bench/smoke.t): bench/fencing/run.sh 1. It builds the
# module for KVER and the userspace first, unless LFS_KO is set (built).
set -u
cd "$(dirname "$0")/../.." || exit 1
RUNS=${1:-20} LEASE=${2:-4} GRACE=${3:-2}
export KVER=${4:-${KVER:-6.1}}
. tests/lib/machine.sh
. tests/lib/emachine.sh
. tests/fencing/lib.sh
trap 'fw_watch_stop; em_cleanup' EXIT
# node2 asks again at once and node1's watcher looks every 10 ms: the
# columns are times, not paces
FW_TAKE_PAUSE=0 FW_WATCH_MS=10
if [ -z "${LFS_KO:-}" ]; then
	make -s module KVER="$(tools/kernels resolve "$KVER")" userspace helpers >/dev/null || exit 1
fi
EM_LEASE=$LEASE EM_GRACE=$GRACE EM_FENCE_ACTION=eio em_start 2 1G 16M >&2 || exit 1
SHARE=$MACHINE_OUT/node1/share
out=$MACHINE_OUT/fencing.tsv
printf 'run\tfence_ms\ttake_ms\tmargin_ms\ttries\n' >"$out"
bad=0
for ((r = 1; r <= RUNS; r++)); do
	name=b$r
	fw_node 1 "L create $name -s 1b -a >/dev/null" >/dev/null || exit 1
	fw_writer "$name" >/dev/null || exit 1
	fw_fence_watch "$name" "fence.$name"
	FW_CUT=$(fw_now)
	fw_lose cut >/dev/null
	fw_takeover "$name" || { echo "run $r: no takeover within 60 s" >&2; exit 1; }
	FW_FENCE=$(cat "$SHARE/fence.$name.host" 2>/dev/null)
	if [ -z "$FW_FENCE" ] || [ "$FW_FENCE" -ge "$FW_TAKE" ]; then
		bad=$((bad + 1))
		echo "run $r: the fence was not seen before the takeover (fence '${FW_FENCE}', take $FW_TAKE)" >&2
	fi
	printf '%d\t%d\t%d\t%d\t%d\n' "$r" $((${FW_FENCE:-0} - FW_CUT)) $((FW_TAKE - FW_CUT)) \
		$((FW_TAKE - ${FW_FENCE:-0})) "$FW_TRIES" | tee -a "$out"
	fw_restore cut || { echo "run $r: node1 did not renew its lease again" >&2; exit 1; }
	fw_node 1 "L deactivate $name >/dev/null" >/dev/null
	fw_node 2 "L deactivate $name >/dev/null && L remove $name >/dev/null" >/dev/null
done
stats() { # column: min median max
	tail -n +2 "$out" | cut -f "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%d %d %d", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
read -r fmin fmed fmax <<<"$(stats 2)"
read -r tmin tmed tmax <<<"$(stats 3)"
read -r mmin mmed mmax <<<"$(stats 4)"
echo "kernel $(uname -r) host; guests $KVER; lease ${LEASE} s, fence_grace ${GRACE} s, heartbeat 1 s; $RUNS runs"
echo "cut -> fence:    min $fmin ms, median $fmed ms, max $fmax ms (lease $((LEASE * 1000)) ms)"
echo "cut -> takeover: min $tmin ms, median $tmed ms, max $tmax ms (lease + grace $(((LEASE + GRACE) * 1000)) ms)"
echo "margin:          min $mmin ms, median $mmed ms, max $mmax ms"
echo "fence strictly before takeover in $((RUNS - bad)) of $RUNS runs"
machine_stop_node 1 && machine_stop_node 2 || { echo "a node ended with a kernel warning" >&2; exit 1; }
[ "$bad" -eq 0 ]
