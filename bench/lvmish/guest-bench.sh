#!/bin/bash
# Guest side of bench/lvmish/bench-lfsvol.sh: LVM2 on pmem0 and lfsvol on
# pmem1, interleaved per iteration, with systemd-udevd running.
. "$LFS_TOP/tests/lvmish/guest/common.sh"
N=${BENCH_N:-15}
T=$LFS_RESULTS/times
: >"$T"
now() { date +%s%N; }
rec() { echo "$1 $(( ($3 - $2) / 1000 ))" | awk '{ printf "%s %.3f\n", $1, $2 / 1000 }' >>"$T"; }

write_conf
# LFS gets IG 1 (/dev/pmem1) only, LVM2 gets /dev/pmem0; no auto shelves;
# generous timeouts: the host may be loaded.
cat >"$CONF" <<EOC
librarian = "$LFS_LIBRARIAN";
node = "node01";
key_file = "/tmp/node01.key";
connect_timeout = 60;
reply_timeout = 60;
fabric = ( { ig = 1; device = "/dev/pmem1"; } );
agent = { state_dir = "/run/lfs"; };
EOC
start_udev || exit 1
# only the naming rules: no agent pass may run in the middle of a measurement
rm -f /run/udev/rules.d/61-lfs-assemble.rules
udevadm control --reload

# LVM2 with udev_sync on, archives off (the root is read-only).
export LVM_SYSTEM_DIR=/tmp/lvm
mkdir -p /tmp/lvm /run/lock/lvm
cat >/tmp/lvm/lvm.conf <<EOC
devices { filter = [ "a|^/dev/pmem0$|", "r|.*|" ] }
backup { backup = 0 archive = 0 }
activation { udev_sync = 1 udev_rules = 1 monitoring = 0 }
EOC
pvcreate -q -y /dev/pmem0 && vgcreate -q vgb /dev/pmem0 || exit 1
insmod "$LFS_TOP/driver/lfs.ko" || exit 1
L agent --once || exit 1

lvm_ops() {
	a=$(now); lvcreate -q -y -L 64M -n lv$1 vgb >/dev/null && b=$(now) || exit 1
	[ -b /dev/vgb/lv$1 ] || { echo "no /dev/vgb/lv$1"; exit 1; }
	rec lvcreate "$a" "$b"
	a=$(now); lvchange -q -an vgb/lv$1 && b=$(now) || exit 1
	rec lvchange_an "$a" "$b"
	a=$(now); lvchange -q -ay vgb/lv$1 && b=$(now) || exit 1
	[ -b /dev/vgb/lv$1 ] || { echo "no /dev/vgb/lv$1 after -ay"; exit 1; }
	rec lvchange_ay "$a" "$b"
}

# lfs_ops NAME LABEL-SUFFIX
lfs_ops() {
	a=$(now); L create $1 -s 64M -p RequestIG --ig 1 -a >/dev/null && b=$(now) || exit 1
	[ -b /dev/lfs/$1 ] || { echo "no /dev/lfs/$1"; exit 1; }
	rec lfsvol_create_a$2 "$a" "$b"
	a=$(now); L deactivate $1 >/dev/null && b=$(now) || exit 1
	rec lfsvol_deactivate$2 "$a" "$b"
	a=$(now); L activate $1 >/dev/null && b=$(now) || exit 1
	[ -b /dev/lfs/$1 ] || { echo "no /dev/lfs/$1 after activate"; exit 1; }
	rec lfsvol_activate$2 "$a" "$b"
}

for i in $(seq "$N"); do
	lvm_ops "$i"
	# the deployment: lfs-agent.service running, lfsvol uses its librarian session
	"$LFSVOL_BIN" -c "$CONF" agent >>/tmp/agent.log 2>&1 &
	apid=$!
	for j in $(seq 300); do [ -S /run/lfs/agent.sock ] && break; sleep 0.1; done
	lfs_ops a$i ""
	kill "$apid"
	wait "$apid"
	# without the agent: a TLS session per command
	lfs_ops n$i _noagent
done
echo "ok 1 - benchmark ran"
