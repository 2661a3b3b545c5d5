#!/bin/bash
# LFS-TEST: vm
# The emulated Machine's plumbing: two node VMs run at the same time on the
# same fabric files, driven from the host; bytes one node writes to fabric
# memory are read identically by the other. node1 converts the fabric to
# fsdax while it boots; node2 boots meanwhile and loads its NVDIMM drivers
# once node1 has (it fails unless it finds fsdax).
. tests/lib/tap.sh
. tests/lib/machine.sh
trap machine_cleanup EXIT

machine_init 2 2 512M
t_ok $? "fabric files made" || t_done
machine_start_node 1
machine_start_node 2
machine_wait_node 1
t_ok $? "node1 boots and takes commands"
machine_wait_node 2
t_ok $? "node2 boots and takes commands"

t_is "$(node_exec 1 'hostname; echo $LFS_NODE')" "node1
node1" "node1 knows its identity"
t_is "$(node_exec 2 'cat /sys/block/pmem1/queue/dax')" 1 "node2 sees the fabric DAX-capable"

sum1=$(node_exec 1 'head -c 4M /dev/urandom > /tmp/d && dd if=/tmp/d of=/dev/pmem1 bs=1M seek=100 oflag=direct conv=fsync status=none && sha256sum < /tmp/d')
t_like "$sum1" '^[0-9a-f]{64} ' "node1 wrote 4 MiB of random data to pmem1"
sum2=$(node_exec 2 'dd if=/dev/pmem1 bs=1M skip=100 count=4 iflag=direct status=none | sha256sum')
t_is "$sum2" "$sum1" "node2 reads the same bytes through the shared fabric"
node_exec 1 'false'
t_is "$?" 1 "a failing command's status comes back from the guest"

machine_stop_node 1
t_ok $? "node1 powers off cleanly, no kernel warning"
machine_stop_node 2
t_ok $? "node2 powers off cleanly, no kernel warning"
t_done
