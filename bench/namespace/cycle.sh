#!/bin/bash
# Management through the Library File System against lfsvol (issue 16):
# one node of the emulated Machine (QEMU TCG, the real agent and librarian),
# CYCLES cycles of each, alternating in one run:
#   fs      touch /lfs/fN; truncate -s 8 books /lfs/fN; rm /lfs/fN
#   lfsvol  lfsvol create vN -s 8b; lfsvol remove vN
# and, to tell LFS's work from the emulator's program starts (some 100 ms
# each under TCG, 1 ms on a real host), the same programs doing no LFS work:
#   tmpfs   the same touch, truncate and rm on a tmpfs file
#   start   lfsvol --help twice
# Each cycle is timed in the guest (date +%s%N around it); the figures are
# the median per kind, the ratio fs/lfsvol (goal: no slower, <= 1.0) and
# the ratio of LFS's own work, (fs - tmpfs) / (lfsvol - start). Books
# of 2 MiB on two 1 GiB devices, so the removed books (zeroed by the agent
# in the background) never run short. Results: docs/bench-namespace.md.
#
#   bench/namespace/cycle.sh [CYCLES] [KVER]
# Smallest (tests/bench/smoke.t): bench/namespace/cycle.sh 1. It builds the
# module for KVER and the userspace first, unless LFS_KO is set (built).
set -u
cd "$(dirname "$0")/../.." || exit 1
CYCLES=${1:-30}
export KVER=${2:-${KVER:-6.1}}
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
if [ -z "${LFS_KO:-}" ]; then
	make -s module KVER="$(tools/kernels resolve "$KVER")" userspace helpers >/dev/null || exit 1
fi
EM_DEVICES=2 EM_FENCE_ACTION=eio em_start 1 1G 2M >&2 || exit 1
BOOK=$((2 << 20))
out=$MACHINE_OUT/cycle.tsv
em_node 1 "mkdir -p /tmp/lfs /tmp/tmpfs && mount -t lfs lfs /tmp/lfs &&
ms() { echo \$(( \$(date +%s%N) / 1000 )); }
printf 'cycle\tkind\tus\n'
for ((i = 1; i <= $CYCLES; i++)); do
	t0=\$(ms)
	touch /tmp/lfs/f\$i && truncate -s $((8 * BOOK)) /tmp/lfs/f\$i && rm /tmp/lfs/f\$i || exit 1
	t1=\$(ms)
	L create v\$i -s 8b >/dev/null && L remove v\$i >/dev/null || exit 1
	t2=\$(ms)
	touch /tmp/tmpfs/f\$i && truncate -s $((8 * BOOK)) /tmp/tmpfs/f\$i && rm /tmp/tmpfs/f\$i || exit 1
	t3=\$(ms)
	L --help >/dev/null && L --help >/dev/null || exit 1
	t4=\$(ms)
	printf '%d\tfs\t%d\n%d\tlfsvol\t%d\n' \$i \$((t1 - t0)) \$i \$((t2 - t1))
	printf '%d\ttmpfs\t%d\n%d\tstart\t%d\n' \$i \$((t3 - t2)) \$i \$((t4 - t3))
done
\$LFS_TOP/build/namespace-bench/nscycle $((CYCLES * 5)) /tmp/lfs /tmp/lfs.conf 8 $BOOK || exit 1
umount /tmp/lfs" >"$out" || { cat "$out" >&2; exit 1; }
med() { awk -F'\t' -v k="$1" '$2 == k { print $3 }' "$out" | sort -n |
	awk -v k="$1" '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%-7s n=%d min %.1f ms, median %.1f ms, max %.1f ms\n", k, NR, a[1] / 1000, m / 1000, a[NR] / 1000 }'; }
m() { med "$1" | sed 's/.*median \([0-9.]*\).*/\1/'; }
for k in fs lfsvol tmpfs start fs-inproc lfsvol-inproc touch-inproc truncate-inproc rm-inproc; do med $k; done
awk -v fs="$(m fs)" -v lv="$(m lfsvol)" -v tf="$(m tmpfs)" -v st="$(m start)" \
	-v fi="$(m fs-inproc)" -v li="$(m lfsvol-inproc)" 'BEGIN {
	printf "fs/lfsvol median ratio: %.1f / %.1f = %.2f (goal <= 1.0)\n", fs, lv, fs / lv
	printf "LFS work, (fs - tmpfs) / (lfsvol - start): %.1f / %.1f = %.2f\n", fs - tf, lv - st, (fs - tf) / (lv - st)
	printf "in one process, fs-inproc / lfsvol-inproc: %.1f / %.1f = %.2f (goal <= 1.0)\n", fi, li, fi / li }'
echo "raw: $out"
