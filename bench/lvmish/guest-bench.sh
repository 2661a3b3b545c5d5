#!/bin/bash
# Guest side of bench/lvmish/bench-lfsvol.sh: LVM2 first (it needs the pmem
# devices unattached), then lfsvol, both with systemd-udevd running.
. "$LFS_TOP/tests/lvmish/guest/common.sh"
N=${BENCH_N:-15}
T=$LFS_RESULTS/times
: >"$T"
now() { date +%s%N; }
rec() { echo "$1 $(( ($3 - $2) / 1000 ))" | awk '{ printf "%s %.3f\n", $1, $2 / 1000 }' >>"$T"; }

write_conf
sed -i '/auto1/d' "$CONF"	# no auto shelves here
start_udev || exit 1

# LVM2 with udev_sync on, archives off (the root is read-only).
export LVM_SYSTEM_DIR=/tmp/lvm
mkdir -p /tmp/lvm /run/lock/lvm
cat >/tmp/lvm/lvm.conf <<EOC
devices { filter = [ "a|^/dev/pmem[01]$|", "r|.*|" ] }
backup { backup = 0 archive = 0 }
activation { udev_sync = 1 udev_rules = 1 monitoring = 0 }
global { use_lvmetad = 0 }
EOC
pvcreate -q -y /dev/pmem0 /dev/pmem1 && vgcreate -q vgb /dev/pmem0 /dev/pmem1 || exit 1
for i in $(seq "$N"); do
	a=$(now); lvcreate -q -y -L 64M -n lv$i vgb >/dev/null && b=$(now) || exit 1
	[ -b /dev/vgb/lv$i ] || { echo "no /dev/vgb/lv$i"; exit 1; }
	rec lvcreate "$a" "$b"
	a=$(now); lvchange -q -an vgb/lv$i && b=$(now) || exit 1
	rec lvchange_an "$a" "$b"
	a=$(now); lvchange -q -ay vgb/lv$i && b=$(now) || exit 1
	[ -b /dev/vgb/lv$i ] || { echo "no /dev/vgb/lv$i after -ay"; exit 1; }
	rec lvchange_ay "$a" "$b"
done
vgremove -q -f vgb >/dev/null && pvremove -q /dev/pmem0 /dev/pmem1 >/dev/null || exit 1
wipefs -q -a /dev/pmem0 /dev/pmem1
udevadm settle

insmod "$LFS_TOP/driver/lfs.ko" || exit 1
L agent --once || exit 1
# $1: label suffix; each round uses 1 book per iteration (the fabric has 30)
lfs_round() {
	for i in $(seq "$N"); do
		a=$(now); L create s$1$i -s 64M -a >/dev/null && b=$(now) || exit 1
		[ -b /dev/lfs/s$1$i ] || { echo "no /dev/lfs/s$1$i"; exit 1; }
		rec lfsvol_create_a$1 "$a" "$b"
		a=$(now); L deactivate s$1$i >/dev/null && b=$(now) || exit 1
		rec lfsvol_deactivate$1 "$a" "$b"
		a=$(now); L activate s$1$i >/dev/null && b=$(now) || exit 1
		[ -b /dev/lfs/s$1$i ] || { echo "no /dev/lfs/s$1$i after activate"; exit 1; }
		rec lfsvol_activate$1 "$a" "$b"
	done
}
# the deployment: lfs-agent.service running, lfsvol uses its librarian session
"$LFSVOL_BIN" -c "$CONF" agent >/tmp/agent.log 2>&1 &
apid=$!
for j in $(seq 100); do [ -S /run/lfs/agent.sock ] && break; sleep 0.1; done
lfs_round ""
kill "$apid"; wait "$apid"
# without the agent: a TLS session per command
lfs_round _noagent
echo "ok 1 - benchmark ran"
