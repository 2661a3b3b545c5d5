#!/bin/bash
# LFS-TEST: vm smp
# A renewal after the deadline never un-fences a shelf (issue 30): with the
# lease's fence work held in the fence of one shelf (a remapped write in
# flight on a frozen loop fabric), a second leased shelf refuses writes
# from the deadline on, and still does after a late renewal.
# Then, in the same boot, the fence watchdog (fence action eio;
# tests/driver/guest/fencewatch.sh): bad bounds refused, a normal fence of
# four open shelves ends without a restart, and a write stuck in
# dax_iomap_rw (ext4 -o dax, a userfaultfd page) makes the node restart
# 2 s after the deadline. The guest's last act is that restart (QEMU runs
# with -no-reboot and ends); here the host checks the kernel's reason in
# the console and reads the fabric file back: the stuck write's bytes never
# reached it.
. tests/lib/tap.sh
. tests/lib/shmfabric.sh

shm_fabric_reap
fab=$(shm_fabric_mkdir lfs-fabric) || { echo "not ok - cannot make a fabric dir in /dev/shm"; exit 1; }
trap 'rm -rf "$fab"' EXIT
out=$PWD/tests/out/fencelate-$(date +%Y%m%d-%H%M%S)-$$
tests/vm/vmrun --fabric-nodes 1 --fabric-size 512M --timeout 240 --fabric-dir "$fab" --out "$out" \
	tests/driver/guest/fencelate.sh
rc=$?
t_ok "$rc" "the guest's checks passed (vmrun exit $rc)"
t_ok "$([ -e "$out/share/watch-armed" ]; echo $?)" "the guest reached the stuck write with the watchdog armed"
line=$(grep -a 'lfs: the fence of the lease of deadline' "$out/console.log" | tail -n 1)
t_like "$line" "has not ended [0-9]+ ms after it \(fence watchdog 2000 ms\).*restarting" \
	"the node restarted, its kernel said why: ${line#*lfs: }"
ms=$(sed -n 's/.*has not ended \([0-9]*\) ms after it.*/\1/p' <<<"$line")
t_ok "$([ -n "$ms" ] && [ "$ms" -ge 2000 ] && [ "$ms" -lt 3000 ]; echo $?)" \
	"  2 s after the deadline, within 3 s (${ms:-?} ms)"
t_is "$(grep -c '^stuck write' "$out/share/guest.log")" 0 "  the stuck write never returned"
# The fabric file, read from the host: the 'Y' written through ext4 -o dax
# before are there, the stuck write's 'X' are not.
run() { printf "$1%.0s" $(seq 256); }
t_ok "$(grep -q -F "$(run Y)" "$fab/fam0.img"; echo $?)" "the fabric holds file seen's 'Y' (the host reads what the guest wrote)"
t_ok "$(! grep -q -F "$(run X)" "$fab/fam0.img"; echo $?)" "no byte of the stuck write reached the fabric"
t_done
