#!/bin/bash
# lfsvol vs LVM2 on the same emulated pmem devices, in one VM boot with
# systemd-udevd running (issue 5 benchmark; results in docs/bench-lfsvol.md).
#   bench/lvmish/bench-lfsvol.sh [ITERATIONS]   (default 15, at most 15: the two fabric
#   devices are 4 GiB, IG 1 has 63 books of 64 MiB, and each iteration uses four)
# Measures, per iteration, the time from spawn to exit (bench/lvmish/timeit.c) of:
#   lfsvol create NAME -s 64M -a   (until /dev/lfs/NAME is a block device)
#   lfsvol deactivate NAME, lfsvol activate NAME
#   lvcreate -L 64M (until /dev/VG/NAME is a block device), lvchange -an, lvchange -ay
# lfsvol runs four times. Three with the node agent running (the deployed
# setup: the lfsvol front end hands the command to the agent):
#   loop 1 on books that went through a use and the agent's scrub (the pool
#     in steady state: the librarian knows they read as zeroes, so udev skips
#     probing the new shelf);
#   loop 2 on books never used, which the agent's read-only check found to
#     read as zeroes (new memory once the agent has looked at it);
#   loop 3 on books never used that hold leftover bytes (1 MiB of random data
#     at the start of each, written before the agent starts: the check finds
#     them not zero, the content is unknown and udev probes).
# Then without the agent (lfsvol-core runs the command itself, with one TLS
# session per command), on books with leftover bytes. lfsvol runs from a copy
# in the guest's /tmp, as installed on a local disk (the project tree is a 9p
# mount without page cache; lvm runs from the cached root).
# LVM2 gets pmem0, LFS pmem1 (IG 1). LVM2 and lfsvol with the agent alternate
# iteration by iteration (LVM2, lfsvol), so a changing load on the host hits
# both alike; then the agent stops and lfsvol runs the same operations
# without it.
# and prints median and p90 per operation and the LVM2/lfsvol ratios.
# LFS_VMRUN overrides the VM runner (default tests/vm/vmrun).
set -u
N=${1:-15}
[ "$N" -ge 1 ] && [ "$N" -le 20 ] || { echo "ITERATIONS must be 1 to 20 (15 with 4 GiB fabrics), not $N" >&2; exit 2; }
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT
make -s -C bench "$PWD/build/lvmish-bench/timeit" || exit 1
OUT=$(mktemp -d tests/out/bench-lfsvol.XXXXXX)
# LFS_BENCH_FABRIC: fabric device size in GiB (default 4; N <= (GiB * 16 - 1) / 4)
fab=${LFS_BENCH_FABRIC:-4}
[ "$((4 * N))" -le "$((fab * 16 - 1))" ] || { echo "$N iterations need more than ${fab} GiB fabrics" >&2; exit 2; }
lv_start_librarian 64M "$((fab * 16 - 1))" 2 5 || exit 1
"${LFS_VMRUN:-tests/vm/vmrun}" --name bench-lfsvol --out "$OUT" --guestfwd "$PORT" --timeout 1500 --fabric-size "${fab}G" ${LFS_BENCH_MEM:+--mem "$LFS_BENCH_MEM"} \
	--env LFS_KEY="$(cat "$LV/keys/node01.key")" --env BENCH_N="$N" \
	bench/lvmish/guest-bench.sh >"$LV/vm.log" 2>&1
rc=$?
grep -v '^ok ' "$LV/vm.log" | grep -v '^#' | grep -v 'metadata update is NOT backed up' >&2
grep '^# agent' "$LV/vm.log"
[ -s "$OUT/share/times" ] || { echo "no results (vm exit $rc), see $OUT" >&2; exit 1; }
awk '
{ t[$1, ++n[$1]] = $2 }
function sortq(op, k,  i, j, x) {
	for (i = 1; i <= k; i++) a[i] = t[op, i]
	for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
}
function q(op, p,  k) { k = n[op]; sortq(op, k); return a[int((k - 1) * p + 1.5)] }
function ratios(s, what) {
	printf "%s: create %.1fx, activate %.1fx, deactivate %.1fx, deactivate + activate %.1fx\n", what,
		med["lvcreate" s] / med["lfsvol_create_a" s], med["lvchange_ay" s] / med["lfsvol_activate" s],
		med["lvchange_an" s] / med["lfsvol_deactivate" s],
		(med["lvchange_an" s] + med["lvchange_ay" s]) / (med["lfsvol_deactivate" s] + med["lfsvol_activate" s])
}
END {
	nops = split("lfsvol_create_a lfsvol_deactivate lfsvol_activate lvcreate lvchange_an lvchange_ay lfsvol_create_a_fresh lfsvol_deactivate_fresh lfsvol_activate_fresh lvcreate_fresh lvchange_an_fresh lvchange_ay_fresh lfsvol_create_a_unknown lfsvol_deactivate_unknown lfsvol_activate_unknown lvcreate_unknown lvchange_an_unknown lvchange_ay_unknown lfsvol_create_a_noagent lfsvol_deactivate_noagent lfsvol_activate_noagent", ops, " ")
	printf "%-26s %4s %10s %10s\n", "operation", "n", "median ms", "p90 ms"
	for (i = 1; i <= nops; i++) { o = ops[i]; med[o] = q(o, 0.5); printf "%-26s %4d %10.1f %10.1f\n", o, n[o], med[o], q(o, 0.9) }
	printf "\nratios, LVM2 / lfsvol, medians of the operations run side by side:\n"
	ratios("", "loop 1, scrubbed books (the pool in service)")
	ratios("_fresh", "loop 2, never-used books checked zero by the agent")
	ratios("_unknown", "loop 3, never-used books with leftover bytes (udev probes)")
	printf "without the agent (vs loop 3 LVM2): create %.1fx, activate %.1fx, deactivate %.1fx\n", med["lvcreate_unknown"] / med["lfsvol_create_a_noagent"], med["lvchange_ay_unknown"] / med["lfsvol_activate_noagent"], med["lvchange_an_unknown"] / med["lfsvol_deactivate_noagent"]
}' "$OUT/share/times"
echo "raw times: $OUT/share/times"
