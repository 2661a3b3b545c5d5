#!/bin/bash
# LFS-TEST: vm
# fence_action "reset" on every kernel (issue 14, docs/FENCING.md): node1
# writes an increasing counter through a MAP_SYNC mapping of a file on ext4
# -o dax over a leased shelf and is cut off from the librarian; its kernel
# restarts the node (QEMU exits, -no-reboot) when the lease runs out, before
# node2's takeover is granted at lease_time + fence_grace, and says why on
# the console, with no warning; node2 mounts the file system and finds
# node1's last stores. The kernel's side of every other fence (eio: a lease
# timer, bios refused, the writer's EIO, nothing landed after the deadline)
# is tested on every kernel by tests/driver/fence.t, fencelate.t and
# tests/namespace/fence.t; the takeovers' other faults (an agent stopped or
# killed, the librarian stopped, a paused VM) in takeover.t, on the first
# kernel.
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
. tests/fencing/lib.sh
trap 'fw_watch_stop; em_cleanup' EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

fw_start # takeover.t's librarian, nodes, lease and grace

# --- fence_action reset: a DAX mapping, node1 restarts -------------------------
em_agent_stop 1 >/dev/null
fw_node 1 "sed -i 's/fence_action = \"eio\"/fence_action = \"reset\"/' /tmp/lfs.conf" >/dev/null
em_agent_start 1 >/dev/null
out=$(fw_node 1 "L status --json | jq -r '.[0].lease.fence_action'
L create dx -s 4b -a >/dev/null && mkfs.ext4 -q -F -b 4096 /dev/lfs/dx && mkdir -p /mnt/dx &&
mount -o dax /dev/lfs/dx /mnt/dx && fallocate -l 4096 /mnt/dx/counter && sync &&
mapsync /mnt/dx/counter >/dev/null && echo map_sync ok
setsid nice -n 19 env FENCEWRITE_PAUSE_US=5000 fencewrite mmap /mnt/dx/counter \$LFS_RESULTS/dx.state </dev/null >/dev/null 2>&1 &
wait_for 20 test -s \$LFS_RESULTS/dx.state && echo writing")
t_is "$out" "$(printf 'reset\nmap_sync ok\nwriting')" \
	"fence action reset: node1 writes a counter through a MAP_SYNC mapping of a file on ext4 -o dax"
fw_qemu_watch 1 "$SHARE/qemu-ended.host"
FW_CUT=$(fw_now)
fw_lose cut >/dev/null
fw_takeover dx
t_ok $? "node1 cut off: node2's takeover is granted after $FW_TRIES tries, $((FW_TAKE - FW_CUT)) ms after the cut"
wait "${MACHINE_PID[1]}" 2>/dev/null
unset "MACHINE_PID[1]"
FW_FENCE=$(cat "$SHARE/qemu-ended.host" 2>/dev/null)
t_ok "$([ -n "$FW_FENCE" ] && [ "$FW_FENCE" -lt "$FW_TAKE" ]; echo $?)" \
	"  node1 restarted (its QEMU ended) $((FW_FENCE - FW_CUT)) ms after the cut, $((FW_TAKE - FW_FENCE)) ms before node2 asked"
console=$MACHINE_OUT/node1/console.log
t_like "$(grep -a 'lfs: ' "$console" | tail -n 5)" "the node's lease expired with a leased shelf open: restarting \(fence_action reset\)" \
	"  node1's kernel said why it restarted"
t_is "$(grep -acE 'WARNING:|BUG:|Oops' "$console")" 0 "  with no warning or oops"
last=$(cat "$SHARE/dx.state")
out=$(fw_node 2 "mkdir -p /mnt/dx && mount -o dax /dev/lfs/dx /mnt/dx &&
od -An -tu8 -N8 /mnt/dx/counter | tr -d ' ' && tail -c +9 /mnt/dx/counter | head -c 8; echo")
got=$(head -n 1 <<<"$out")
t_ok "$([ -n "$got" ] && { [ "$got" = "$last" ] || [ "$got" = "$((last + 1))" ]; }; echo $?)" \
	"  node2 mounts the file system and reads node1's last stores ($got; node1 recorded $last, the next store may have landed)"
t_is "$(tail -n 1 <<<"$out")" fencewr1 "  with the writer's magic"
fw_mark 2 /mnt/dx/counter conv=notrunc,fsync >/dev/null
out=$(fw_node 2 "umount /mnt/dx && mount -o dax /dev/lfs/dx /mnt/dx &&
echo \$(od -An -tu8 -N8 /mnt/dx/counter | tr -d ' ') \$(tail -c +9 /mnt/dx/counter | head -c 8) &&
umount /mnt/dx && L deactivate dx >/dev/null && echo done")
t_is "$out" "$(printf '%s\ndone' "$MARK")" "  node2 writes its marker, remounts and reads it back"

machine_stop_node 2
t_ok $? "node2 powers off with no kernel warning"
t_done
