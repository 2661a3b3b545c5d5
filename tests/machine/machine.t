#!/bin/bash
# LFS-TEST: vm once
# The emulated Machine (issue 6 acceptance): a librarian on the host, two node
# VMs on the same fabric files. Handover with identical data; exclusive
# activation refused naming the holder; shared read-only on both nodes at
# once; a librarian restart under I/O, shorter than the lease; takeover
# after a node dies, once its lease and the grace have passed.
# "vm once": the same stack (librarian, two nodes' agents, a shelf made with
# lfsvol, ext4 -o dax and MAP_SYNC on it, a takeover after the holder's
# lease and node2 reading node1's bytes) runs on every kernel in
# tests/fencing/reset.t; the rest here is the librarian's and the agent's.
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT

# A lease of 30 s: a node that cannot renew for a whole lease fences itself
# (docs/FENCING.md), so the librarian's restart below must be shorter: the
# wait for writes while it is down is bounded at 8 s, the restart itself
# takes a few more (17 s in all under TCG on a loaded host).
LEASE=30
EM_LEASE=$LEASE em_start 2 1G 16M >&2
t_ok $? "librarian on 127.0.0.1 and two node VMs up (logs: $MACHINE_OUT)" || t_done

# --- handover -----------------------------------------------------------
out=$(em_node 1 '
L create hand -s 128M -p Spread -a >/dev/null &&
mkfs.ext4 -q -b 4096 /dev/lfs/hand && mkdir -p /tmp/h && mount -o dax /dev/lfs/hand /tmp/h &&
head -c 40M /dev/urandom >/tmp/h/data && sync /tmp/h/data &&
sha256sum </tmp/h/data | cut -c1-64 && umount /tmp/h && L deactivate hand >/dev/null' 2>&1)
t_like "$out" '^[0-9a-f]{64}$' "node1 wrote 40 MiB on an ext4-dax shelf, synced, handed it back" || {
	t_diag "$out"
	t_diag "node1's agent log and kernel log:"
	t_diag "$(em_node 1 'tail -n 30 /tmp/agent.log; dmesg | tail -n 30' 2>&1)"
}
sum1=$out
out=$(em_node 2 '
L activate hand >/dev/null && mkdir -p /tmp/h && mount -o dax /dev/lfs/hand /tmp/h &&
sha256sum </tmp/h/data | cut -c1-64 && mapsync /tmp/h/data >/dev/null' 2>&1)
t_is "$out" "$sum1" "node2 reads byte-identical data after the handover, with a MAP_SYNC mapping"
em_node 2 'umount /tmp/h && L deactivate hand' >/dev/null 2>&1

# --- exclusive vs shared ------------------------------------------------
em_node 1 'L activate hand' >/dev/null 2>&1
out=$(em_node 2 'L activate hand; echo "exit=$?"' 2>&1)
t_like "$out" "node1" "an exclusive activation on node2 is refused naming the holder node1" || t_diag "$out"
t_like "$out" "exit=7" "  with exit status 7"
t_is "$(em_node 2 'test -e /dev/lfs/hand && echo present || echo absent')" absent "  and node2 got no device"
em_node 1 'L deactivate hand' >/dev/null 2>&1
for i in 1 2; do
	out=$(em_node $i 'L activate hand --shared >/dev/null && mkdir -p /tmp/h &&
		mount -o ro,dax /dev/lfs/hand /tmp/h && sha256sum </tmp/h/data | cut -c1-64' 2>&1)
	t_is "$out" "$sum1" "shared read-only activation on node$i reads the data"
done
t_is "$(em_node 1 'grep -c " /tmp/h " /proc/mounts'):$(em_node 2 'grep -c " /tmp/h " /proc/mounts')" "1:1" \
	"both nodes have it mounted at the same time"
out=$(em_node 2 'touch /tmp/h/new 2>&1; blockdev --getro /dev/lfs/hand')
t_like "$out" "Read-only file system" "a shared activation is read-only"
for i in 1 2; do em_node $i 'umount /tmp/h && L deactivate hand' >/dev/null 2>&1; done

# --- librarian restart while node1 has a shelf mounted with I/O running ---
out=$(em_node 1 '
L create busy -s 64M -p LocalNode -a >/dev/null && mkfs.ext4 -q -b 4096 /dev/lfs/busy &&
mkdir -p /tmp/b && mount -o dax /dev/lfs/busy /tmp/b &&
setsid bash -c "n=0; while [ ! -e /tmp/stop ]; do
	head -c 1M /dev/urandom >/tmp/chunk && cp /tmp/chunk /tmp/b/f\$((n % 20)) && sync /tmp/b/f\$((n % 20)) &&
	echo \"f\$((n % 20)) \$(sha256sum </tmp/chunk | cut -c1-64)\" >>/tmp/writes && n=\$((n + 1)) && echo \$n >/tmp/progress
done" </dev/null >/dev/null 2>&1 &
echo started' 2>&1)
t_is "$out" started "node1: ext4-dax shelf mounted, a writer running"
progress() { em_node 1 'cat /tmp/progress 2>/dev/null || echo 0'; }
wait_progress() { # wait_progress ABOVE: bounded poll until the writer passed ABOVE
	local t
	for ((t = 0; t < 600; t++)); do
		[ "$(progress)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_progress 2
em_librarian_stop
down=$(date +%s)
p0=$(progress)
# writes go on while the librarian is down: a bounded poll of 8 s
grew=1
while [ $(($(date +%s) - down)) -lt 8 ]; do
	[ "$(progress)" -gt "$p0" ] && { grew=0; break; }
	sleep 0.2
done
t_ok $grew "writes go on while the librarian is down ($p0 -> $(progress))"
em_librarian_start
t_diag "the librarian was down for $(($(date +%s) - down)) s (lease $LEASE s)"
t_ok $? "the librarian restarts on the same database"
heard=1
for ((t = 0; t < 300; t++)); do
	g=$(em_admin geometry 2>/dev/null)
	up=$(em_admin stats 2>/dev/null | jq -r .uptime)
	ago=$(jq -r '.. | objects | select(.name? == "node1") | .last_seen_ago' <<<"$g" 2>/dev/null | head -n 1)
	if [[ $up =~ ^[0-9]+$ && $ago =~ ^[0-9]+$ ]] && [ $((up - ago)) -ge 1 ]; then
		heard=0
		break
	fi
	sleep 0.2
done
t_ok $heard "node1 reconnected and heartbeats the new librarian (last seen ${ago:-?}s ago, up ${up:-?}s)"
t_is "$(em_node 1 'cat /sys/block/$(basename $(readlink -f /dev/lfs/busy))/lfs/state')" active \
	"  its shelf was never fenced: the lease outlasted the restart"
p1=$(progress)
wait_progress $((p1 + 3))
t_ok $? "the I/O never stopped ($p1 -> $(progress))"
out=$(em_node 1 'touch /tmp/stop; while pgrep -f "while \[ ! -e /tmp/stop" >/dev/null; do sleep 0.1; done
umount /tmp/b && mount -o dax /dev/lfs/busy /tmp/b && tail -n 20 /tmp/writes | while read f s; do
	[ "$(sha256sum </tmp/b/$f | cut -c1-64)" = "$s" ] || echo "mismatch $f"; done; echo checked' 2>&1)
t_is "$out" checked "every file the writer synced reads back intact after remount"

# --- takeover after node1 dies --------------------------------------------
out=$(em_node 1 'head -c 8M /dev/urandom >/tmp/b/synced && sync /tmp/b/synced &&
	sha256sum </tmp/b/synced | cut -c1-64 && head -c 8M /dev/urandom >/tmp/b/unsynced' 2>&1)
t_like "$out" '^[0-9a-f]{64}$' "node1 synced a file on 'busy' and left another unsynced"
sum=$out
machine_kill_node 1
t_diag "killed node1's QEMU process"
taken=1
for ((t = 0; t < 120; t++)); do
	if out=$(em_node 2 'L activate busy --takeover 2>&1'); then
		taken=0
		break
	fi
	sleep 0.5
done
t_ok $taken "node2 takes 'busy' over once node1's heartbeat has expired" || t_diag "$out"
out=$(em_node 2 'mkdir -p /tmp/b && mount -o dax /dev/lfs/busy /tmp/b && sha256sum </tmp/b/synced | cut -c1-64' 2>&1)
t_is "$out" "$sum" "ext4 recovers on node2 with everything node1 had synced"
em_node 2 'umount /tmp/b; L deactivate busy' >/dev/null 2>&1

machine_stop_node 2
t_ok $? "node2 powers off with no kernel warning"
t_done
