#!/bin/bash
# Guest side of tests/vm/basic.t: the emulated fabric is there, DAX-capable,
# one device per NUMA node, and lfs.ko loads and unloads cleanly.
. "$LFS_TOP/tests/lib/tap.sh"

for i in 0 1; do
	t_is "$(cat /sys/block/pmem$i/queue/dax 2>&1)" 1 "pmem$i is DAX-capable"
	t_is "$(cat /sys/block/pmem$i/device/numa_node 2>&1)" "$i" "pmem$i is on NUMA node $i"
	size=$(cat /sys/block/pmem$i/size 2>/dev/null || echo 0)
	t_ok "$([ "$size" -gt 0 ]; echo $?)" "pmem$i has a non-zero size ($size sectors)"
done

t_run "insmod lfs.ko" insmod "$LFS_KO"
t_like "$(grep -w ^lfs /proc/modules)" '^lfs ' "lfs is listed in /proc/modules"
t_run "rmmod lfs" rmmod lfs
t_is "$(grep -cw ^lfs /proc/modules)" 0 "lfs is gone after rmmod"
t_is "$(dmesg | grep -c 'lfs: loaded')" 1 "the module logged its load once"

# The results share is writable and visible to the host.
echo "written-by-guest $$" >"$LFS_RESULTS/probe"
t_is "$(cat "$LFS_RESULTS/probe")" "written-by-guest $$" "results share is writable"
t_done
