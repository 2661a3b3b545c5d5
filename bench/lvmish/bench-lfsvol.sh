#!/bin/bash
# lfsvol vs LVM2 on the same emulated pmem devices, in one VM boot with
# systemd-udevd running (results in docs/bench-lfsvol.md).
#   bench/lvmish/bench-lfsvol.sh [ITERATIONS]   (default 15, at most 15: the two fabric
#   devices are 4 GiB, IG 1 has 63 books of 64 MiB, and each iteration uses four)
# Measures, per iteration, the time from spawn to exit (bench/lvmish/timeit.c) of:
#   lfsvol create NAME -s 64M -a   (until /dev/lfs/NAME is a block device)
#   lfsvol deactivate NAME, lfsvol activate NAME
#   lvcreate -L 64M (until /dev/VG/NAME is a block device), lvchange -an, lvchange -ay
# lfsvol runs four loops, each beside LVM2 (the two alternate iteration by
# iteration, so a changing load on the host hits both alike). Three with the
# node agent running, each command borrowing its librarian session (the
# deployed setup):
#   loop 1 on books that went through a use and the agent's scrub (the pool
#     in steady state: the librarian knows they read as zeroes, so udev skips
#     probing the new shelf);
#   loop 2 on books never used, which the agent's check found to read as
#     zeroes (new memory once the agent has looked at it);
#   loop 3 on books never used that held leftover bytes (1 MiB of random data
#     at the start of each, written before the agent starts: the check, the
#     device being labelled, zeroed them).
# The librarian takes new memory as unknown (new_books = "unknown"), as a
# deployment does, and allocates only books known to read as zeroes, so
# every shelf is known zero and udev skips probing it.
# Then the plain path: the agent stopped, each command opening a TLS session
# of its own, on books zeroed by the check as in loop 3.
# Traces (LFSVOL_TRACE, from spawn to exit) of create -a, deactivate and
# activate, with the agent and without, on scrubbed books; the phases of a
# TLS session of lfsvol's own (bench/lvmish/tlsphase.c); lfsvol --help.
# lfsvol runs from a copy in the guest's /tmp, as installed on a local disk
# (the project tree is a 9p mount without page cache; lvm runs from the
# cached root). LVM2 gets pmem0, LFS pmem1 (IG 1).
# Prints median and p90 per operation, the LVM2/lfsvol ratios per loop, the
# median of each traced phase, and where the raw data is.
# LFS_VMRUN overrides the VM runner (default tests/vm/vmrun); BENCH_TRACES
# the number of traced runs (default 5, at most ITERATIONS); BENCH_STARTUP
# the runs of lfsvol --help (default 20).
# Smallest (the smoke run of tests/bench/smoke.t):
#   LFS_BENCH_FABRIC=320M BENCH_TRACES=1 BENCH_STARTUP=1 bench/lvmish/bench-lfsvol.sh 1
set -u
N=${1:-15}
[ "$N" -ge 1 ] && [ "$N" -le 20 ] || { echo "ITERATIONS must be 1 to 20 (15 with 4 GiB fabrics), not $N" >&2; exit 2; }
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT
make -s -C bench "$PWD/build/lvmish-bench/timeit" "$PWD/build/lvmish-bench/tlsphase" || exit 1
mkdir -p tests/out && OUT=$(mktemp -d tests/out/bench-lfsvol.XXXXXX) || exit 1
# LFS_BENCH_FABRIC: fabric device size, in GiB or with M in MiB (default 4;
# N <= (MiB / 64 - 1) / 4: the first book's room holds the label)
fab=${LFS_BENCH_FABRIC:-4}
case $fab in
*M) fmib=${fab%M} ;;
*) fmib=$((fab * 1024)) ;;
esac
[[ $fmib =~ ^[0-9]+$ ]] && [ "$((fmib % 64))" = 0 ] && [ "$fmib" -ge 128 ] ||
	{ echo "LFS_BENCH_FABRIC must be GiB or a multiple of 64 MiB (at least 128M), not '$fab'" >&2; exit 2; }
nbooks=$((fmib / 64 - 1))
[ "$((4 * N))" -le "$nbooks" ] || { echo "$N iterations need more than a ${fab} fabric ($nbooks books)" >&2; exit 2; }
# heartbeats every 5 s (none in the middle of a measurement); the librarian
# wants fence_grace longer than that
LV_NEW_BOOKS=unknown LV_GRACE=10 lv_start_librarian 64M "$nbooks" 2 5 || exit 1
"${LFS_VMRUN:-tests/vm/vmrun}" --name bench-lfsvol --out "$OUT" --guestfwd "$PORT" --timeout 1500 --fabric-size "${fmib}M" ${LFS_BENCH_MEM:+--mem "$LFS_BENCH_MEM"} \
	--env LFS_KEY="$(cat "$LV/keys/node01.key")" --env BENCH_N="$N" --env BENCH_TRACES="${BENCH_TRACES:-5}" \
	--env BENCH_STARTUP="${BENCH_STARTUP:-20}" \
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
	nops = split("lfsvol_create_a lfsvol_deactivate lfsvol_activate lvcreate lvchange_an lvchange_ay", base, " ")
	nsuf = split("_fresh _dirty _plain", suf, " ")
	printf "%-26s %4s %10s %10s\n", "operation", "n", "median ms", "p90 ms"
	for (s = 0; s <= nsuf; s++) {
		for (i = 1; i <= nops; i++) {
			o = base[i] (s ? suf[s] : "")
			med[o] = q(o, 0.5)
			printf "%-26s %4d %10.1f %10.1f\n", o, n[o], med[o], q(o, 0.9)
		}
	}
	printf "\nratios, LVM2 / lfsvol, medians of the operations run side by side:\n"
	ratios("", "loop 1, agent, scrubbed books (the pool in service)")
	ratios("_fresh", "loop 2, agent, never-used books checked zero by the agent")
	ratios("_dirty", "loop 3, agent, never-used books with leftover bytes zeroed by the agent")
	ratios("_plain", "plain path, no agent (own TLS session), books zeroed by the agent")
}' "$OUT/share/times"
# The traces: per command, the time from each phase to the next, medians
# over the traced runs ("timeit: spawn" to "timeit: exit").
for path in agent plain; do
	[ -s "$OUT/share/trace-$path" ] || continue
	echo
	echo "trace breakdown, $path (medians over ${BENCH_TRACES:-5} runs, ms from the previous line):"
	awk '
	/^== / { cmd = $2; next }
	/ trace .* ms \[/ {
		t = $3; msg = $0; sub(/.* ms \[[0-9]+\] /, "", msg)
		gsub(/[0-9]+/, "#", msg); gsub(/ t#/, " NAME", msg); gsub(/\/t#/, "/NAME", msg)
		if (msg == "timeit: spawn") { prev = t; k[cmd]++; next }
		key = cmd SUBSEP msg
		if (!(key in seen)) { seen[key] = 1; order[cmd, ++no[cmd]] = msg }
		d[key, k[cmd]] = t - prev; prev = t
		next
	}
	function median(key, m,  i, j, x, v) {
		for (i = 1; i <= m; i++) v[i] = d[key, i]
		for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		return v[int((m + 1) / 2)]
	}
	END {
		split("create deactivate activate", cmds, " ")
		for (c = 1; c <= 3; c++) {
			cmd = cmds[c]; sum = 0
			printf "  %s\n", cmd
			for (i = 1; i <= no[cmd]; i++) { m = median(cmd SUBSEP order[cmd, i], k[cmd]); sum += m; printf "    %8.1f  %s\n", m, order[cmd, i] }
			printf "    %8.1f  (sum of the medians)\n", sum
		}
	}' "$OUT/share/trace-$path"
done
if [ -s "$OUT/share/tlsphase" ]; then
	echo
	echo "a TLS session of lfsvol's own, by phase (tlsphase; medians, ms):"
	awk '{ v[$1, $2, ++n[$1, $2]] = $3; if (!(($1, $2) in seen)) { seen[$1, $2] = 1; order[++no] = $1 SUBSEP $2 } }
	END {
		for (i = 1; i <= no; i++) {
			split(order[i], kk, SUBSEP); m = n[kk[1], kk[2]]
			for (a = 1; a <= m; a++) x[a] = v[kk[1], kk[2], a]
			for (a = 2; a <= m; a++) { y = x[a]; for (b = a - 1; b >= 1 && x[b] > y; b--) x[b + 1] = x[b]; x[b + 1] = y }
			printf "  %-10s %-26s %8.1f\n", kk[1], kk[2], x[int((m + 1) / 2)]
		}
	}' "$OUT/share/tlsphase"
fi
if [ -s "$OUT/share/startup" ]; then
	sort -n -k2 "$OUT/share/startup" | awk '{ v[++n] = $2 } END { printf "\nlfsvol --help, spawn to exit: median %.1f ms of %d\n", v[int((n + 1) / 2)], n }'
fi
echo "raw data: $OUT/share/{times,trace-agent,trace-plain,tlsphase,startup}"
