#!/bin/bash
# Guest side of tests/driver/fencelate.t (fence action eio).
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"

t_run "insmod lfs.ko" insmod "${LFS_KO:-$LFS_TOP/driver/lfs.ko}"
t_run "attach /dev/pmem0 as IG 0" lfsctl attach /dev/pmem0 --ig 0 --book-size 2M --offset 2M
modprobe loop && mkdir -p /tmp/ff && truncate -s 64M /tmp/ff.img && mkfs.ext4 -q /tmp/ff.img &&
	mount -o loop,noatime /tmp/ff.img /tmp/ff && dd if=/dev/zero of=/tmp/ff/fab bs=1M count=8 2>/dev/null
t_ok $? "an 8 MiB file on an ext4 that can be frozen"
lo=$(losetup --find --show /tmp/ff/fab)
t_is "$(nlraw attach path=str:$lo ig=u32:2 book_size=u64:$((2 << 20)) offset=u64:0)" ok \
	"attach $lo, a fabric without DAX, as IG 2"

# renewer STOP MS [ATTR...]: renew an MS lease (fence action eio) every
# 0.5 s (at most 240 times) until the file STOP exists.
renewer() {
	local i stop=$1 ms=$2
	shift 2
	for i in $(seq 240); do
		[ -e "$stop" ] && return 0
		nlraw lease_renew lease_start=now:0 lease_ms=u32:"$ms" fence_action=u32:1 "$@" >/dev/null
		sleep 0.5
	done
}
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:10000 fence_action=u32:1)" ok \
	"a 10 s lease, fence action eio"
renewer /tmp/norenew 10000 &
rpid=$!
# slow first: the fence work meets it first
t_is "$(nlraw create name=str:slow books=books:2:0 leased=flag:)" ok "leased shelf slow on the loop fabric"
t_is "$(nlraw create name=str:quick books=books:0:0 leased=flag:)" ok "leased shelf quick on pmem"
sdev=/dev/$(nlraw -p shelf_get name=str:slow | sed -n 's/^disk=//p')
qdev=/dev/$(nlraw -p shelf_get name=str:quick | sed -n 's/^disk=//p')
fencewrite direct "$sdev" /tmp/s.state >/tmp/s.out 2>&1 &
spid=$!
wait_for 60 sh -c '[ "$(cat /tmp/s.state 2>/dev/null)" -ge 2 ]'
t_ok $? "the writer's writes reach slow's loop fabric (counter $(cat /tmp/s.state))"
t_run "freeze the ext4 under the loop device" fsfreeze -f /tmp/ff
wait_for 60 sh -c "[ \"\$(awk '{print \$2}' /sys/block/${lo#/dev/}/inflight)\" -ge 1 ]"
t_ok $? "a write to slow is in flight on $lo"
fencewrite direct "$qdev" /tmp/q.state >/tmp/q.out 2>&1 &
qpid=$!
wait_for 60 sh -c '[ "$(cat /tmp/q.state 2>/dev/null)" -ge 2 ]'
t_ok $? "a writer writes to quick (counter $(cat /tmp/q.state))"
touch /tmp/norenew
wait $rpid
t_run "the renewals stop: the writer of quick gets EIO at the deadline" wait_for 40 sh -c \
	"grep -q '^error EIO' /tmp/q.out"
wait $qpid
# The fence work now waits for slow's write (under lfs_lock: no shelf_get).
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:60000)" ok "a renewal after the deadline"
t_like "$(dmesg | grep 'renewed after its deadline')" "a new lease \(epoch [0-9]+\)" "  taken as a new lease"
t_is "$(dd if=/dev/zero of=$qdev bs=4k count=1 oflag=direct 2>&1 | grep -c 'Input/output error')" 1 \
	"quick still refuses a write (EIO)"
t_is "$(dd if=$qdev of=/dev/null bs=4k count=1 iflag=direct 2>&1 | grep -c 'Input/output error')" 1 \
	"  and a read"
t_run "thaw" fsfreeze -u /tmp/ff
wait $spid
t_like "$(cat /tmp/s.out)" "^error EIO after [0-9]+$" "slow's writer got EIO"
t_like "$(nlraw -p lease_get | grep lease_left)" "^lease_left=[1-9][0-9]*$" "lease_get: the lease runs"
t_is "$(nlraw -p lease_get | grep nr_fenced)" "nr_fenced=2" "  both shelves fenced"
t_is "$(cat /sys/block/${qdev#/dev/}/lfs/state)" fenced "quick: state fenced"
t_is "$(nlraw create name=str:new books=books:0:1 leased=flag:)" ok "a new leased shelf under the new lease"
t_run "  takes writes" dd if=/dev/zero of=/dev/$(nlraw -p shelf_get name=str:new | sed -n 's/^disk=//p') \
	bs=4k count=1 oflag=direct
for s in slow quick new; do
	t_is "$(nlraw remove name=str:$s)" ok "remove $s"
done
t_is "$(nlraw detach ig=u32:2)" ok "detach IG 2"
losetup -d "$lo" && umount /tmp/ff
t_ok $? "loop device and ext4 gone"
. "$LFS_TOP/tests/driver/guest/fencewatch.sh"

