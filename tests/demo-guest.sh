#!/bin/bash
# Guest side of the single-node demo walk-through.
set -u
step() { printf '\n-- %s\n' "$*"; }
fail() { echo "demo step failed: $*"; exit 1; }
step "Fabric memory devices seen by this node (fsdax, one per NUMA node)"
for d in /sys/block/pmem*; do
	n=${d##*/}
	printf '  /dev/%s  %5d MiB  NUMA node %s  dax=%s\n' "$n" \
		$(($(cat "$d/size") / 2048)) "$(cat "$d/device/numa_node")" "$(cat "$d/queue/dax")"
done
step "Loading the LFS driver"
insmod "$LFS_TOP/driver/lfs.ko" || fail "insmod lfs.ko"
grep -w ^lfs /proc/modules
rmmod lfs || fail "rmmod lfs"
echo "  lfs.ko loaded and unloaded cleanly"
