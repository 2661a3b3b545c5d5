#!/bin/bash
# Guest side of tests/driver/fence.t: the node's lease in the kernel, fencing
# with fence_action eio (the reset action is tested with several nodes in
# tests/fencing), fabric labels, and zeroing one book at a time.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"

t_run "insmod lfs.ko" insmod "${LFS_KO:-$LFS_TOP/driver/lfs.ko}"

# DEVICE OFFSET COUNT: COUNT bytes at OFFSET, read past the page cache (the
# kernel writes labels and zeroes below it).
rawread() {
	dd if="$1" bs=4096 skip=$(($2 / 4096)) count=1 iflag=direct 2>/dev/null |
		dd bs=1 skip=$(($2 % 4096)) count="$3" 2>/dev/null
}
rawsum() { dd if="$1" bs=1M count=4 iflag=direct 2>/dev/null | sha256sum; }

# --- labels ---------------------------------------------------------------
FAB=0123456789abcdef0123456789abcdef
OTHER=fedcba9876543210fedcba9876543210
t_like "$(nlraw label path=str:/dev/pmem1 ig=u32:1 book_size=u64:$((32 << 20)) offset=u64:0 \
	fabric_uuid=hex:$FAB)" "error EINVAL: a label needs a data offset of 2 MiB or more, not 0" "no label without a data offset"
sum0=$(rawsum /dev/pmem0)
sum1=$(rawsum /dev/pmem1)
t_is "$(nlraw label path=str:/dev/pmem1 ig=u32:1 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)) \
	fabric_uuid=hex:$FAB)" ok "label /dev/pmem1 as IG 1 of fabric $FAB"
t_is "$(rawread /dev/pmem1 0 16)" "LFS fabric label" "the label is at byte 0 of the device"
sum1=$(rawsum /dev/pmem1)
t_like "$(nlraw label path=str:/dev/pmem1 ig=u32:1 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)) \
	fabric_uuid=hex:$FAB)" "error EEXIST: '/dev/pmem1' is labelled already \\(IG 1 of fabric 01234567\\)" \
	"labelling twice is refused, naming the label"
out=$(nlraw attach path=str:/dev/pmem1 ig=u32:0 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)))
t_like "$out" "error EMEDIUMTYPE: '/dev/pmem1' is labelled IG 1, not IG 0" \
	"attaching the labelled device as another IG is refused, naming both: $out"
out=$(nlraw attach path=str:/dev/pmem1 ig=u32:1 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)) \
	fabric_uuid=hex:$OTHER)
t_like "$out" "error EMEDIUMTYPE: '/dev/pmem1' is labelled for fabric 01234567, not fedcba98" \
	"attaching it for another fabric is refused: $out"
out=$(nlraw attach path=str:/dev/pmem0 ig=u32:0 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)) \
	fabric_uuid=hex:$FAB)
t_like "$out" "error EMEDIUMTYPE: '/dev/pmem0' carries no label" "a label asked for and missing: refused"
t_is "$(rawsum /dev/pmem0) $(rawsum /dev/pmem1)" "$sum0 $sum1" \
	"the refusals wrote nothing to either device"
t_is "$(nlraw attach path=str:/dev/pmem1 ig=u32:1 book_size=u64:$((32 << 20)) offset=u64:$((2 << 20)) \
	fabric_uuid=hex:$FAB)" ok "attach /dev/pmem1 as IG 1 of its fabric"
t_like "$(nlraw -p fabric_get ig=u32:1)" "fabric_uuid=$FAB" "fabric_get reports the label's fabric"
t_run "attach /dev/pmem0 as IG 0 (no label)" lfsctl attach /dev/pmem0 --ig 0 --book-size 32M --offset 2M

# --- the lease --------------------------------------------------------------
t_like "$(nlraw -p lease_get)" "lease_ms=0" "no lease before the first renewal"
out=$(nlraw create name=str:a books=books:0:0-1 leased=flag:)
t_like "$out" "error ENOLCK: this node holds no lease" "a leased shelf needs a lease: $out"
t_like "$(nlraw lease_renew lease_start=now:1000 lease_ms=u32:5000)" "error EINVAL: renewal start .* in the future" \
	"a renewal from the future is refused"
t_like "$(nlraw lease_renew lease_start=now:-6000 lease_ms=u32:5000)" "error EINVAL: renewal sent 6[0-9]{3} ms ago is older" \
	"a renewal older than the lease is refused"
t_like "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:999)" "error EINVAL: lease 999 ms" "a lease under 1 s is refused"
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:15000 fence_action=u32:1)" ok \
	"renew: 15 s, fence action eio"
t_is "$(nlraw create name=str:a books=books:0:0-1 leased=flag:)" ok "create a leased shelf"
t_is "$(nlraw create name=str:free books=books:0:2)" ok "create a shelf without a lease"
dev=/dev/$(nlraw -p shelf_get name=str:a | sed -n 's/^disk=//p')
sys=/sys/block/${dev#/dev/}/lfs
t_is "$(cat $sys/state)" active "state: active"
t_like "$(nlraw -p shelf_get name=str:a)" $'leased=1' "shelf_get: leased"
t_like "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:0)" "error EBUSY: leased shelves exist" \
	"the lease cannot be given up while a leased shelf exists"

# A renewal never brings the deadline closer.
left=$(nlraw -p lease_get | sed -n 's/^lease_left=//p')
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:1000)" ok "renew with a 1 s lease"
t_ok "$(( $(nlraw -p lease_get | sed -n 's/^lease_left=//p') > 1000 ? 0 : 1 ))" \
	"  the deadline stays where it was (${left} ms left before)"

# An O_DIRECT writer until the fence, when the 15 s lease runs out.
fencewrite direct "$dev" /tmp/a.state >/tmp/a.out 2>&1 &
wpid=$!
wait $wpid
t_like "$(cat /tmp/a.out)" "^error EIO after [0-9]+$" "the writer got EIO when the lease ran out: $(cat /tmp/a.out)"
last=$(cat /tmp/a.state)
t_is "${last}" "$(sed -n 's/^error EIO after //p' /tmp/a.out)" "  its last good write is the state file's"
t_is "$(cat $sys/state)" fenced "state: fenced"
t_like "$(nlraw -p lease_get)" "lease_left=-[0-9]+" "lease_get: expired"
t_like "$(nlraw -p lease_get)" "nr_fenced=1" "lease_get: one shelf fenced (the unleased one is not)"
t_is "$(dd if=$dev of=/dev/null bs=4k count=1 iflag=direct 2>&1 | grep -c 'Input/output error')" 1 \
	"a read of the fenced shelf fails with EIO"
t_is "$(nlraw -p shelf_get name=str:free | grep -c '^state=0$')" 1 "the shelf without a lease stays active"
t_run "the unleased shelf still takes writes" dd if=/dev/zero of=/dev/$(nlraw -p shelf_get name=str:free | \
	sed -n 's/^disk=//p') bs=4k count=1 oflag=direct
t_like "$(nlraw extend name=str:a books=books:0:3)" "error EIO: shelf 'a' is fenced; it can only be removed" \
	"extend of a fenced shelf is refused"
t_like "$(nlraw shrink name=str:a nr_books=u32:1)" "error EIO: shelf 'a' is fenced" "shrink too"
out=$(nlraw create name=str:b books=books:0:3 leased=flag:)
t_like "$out" "error ENOLCK: this node's lease expired" "no leased shelf while the lease is expired: $out"
t_is "$(nlraw remove name=str:a)" ok "a fenced shelf can be removed"
t_is "$(rawread /dev/pmem0 $((2 << 20)) 8 | od -An -tu8 | tr -d ' ')" "$last" \
	"the fabric holds the writer's last good counter ($last), nothing after it"

# SHELF_FENCE, and a renewal after expiry.
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:60000)" ok "renew again after the expiry"
t_is "$(nlraw create name=str:b books=books:0:3 leased=flag:)" ok "a leased shelf can be made again"
t_is "$(nlraw fence name=str:b)" ok "fence shelf b on request"
t_is "$(cat /sys/block/$(nlraw -p shelf_get name=str:b | sed -n 's/^disk=//p')/lfs/state)" fenced \
	"shelf b is fenced, the lease still runs"
t_like "$(nlraw -p lease_get)" "lease_left=[1-9][0-9]+" "  the node's lease is unaffected"
t_is "$(nlraw remove name=str:b)" ok "remove b"

# --- a write remapped to its fabric and not yet done when the fence comes ----
# A fabric without DAX gets every bio remapped to its own device. Here it is a
# loop device over a file of a frozen ext4, so the writer's write stays in
# flight, accepted by the driver, until the thaw. The fence must not report
# done before that write has reached the fabric: then the fabric read at the
# moment the fence returns holds the writer's last good write.
modprobe loop && mkdir -p /tmp/ff && truncate -s 64M /tmp/ff.img && mkfs.ext4 -q /tmp/ff.img &&
	mount -o loop,noatime /tmp/ff.img /tmp/ff && dd if=/dev/zero of=/tmp/ff/fab bs=1M count=8 2>/dev/null
t_ok $? "an 8 MiB file on an ext4 that can be frozen"
lo=$(losetup --find --show /tmp/ff/fab)
t_is "$(nlraw attach path=str:$lo ig=u32:2 book_size=u64:$((2 << 20)) offset=u64:0)" ok \
	"attach $lo, a fabric without DAX, as IG 2"
t_is "$(nlraw create name=str:slow books=books:2:0 leased=flag:)" ok "a leased shelf on it"
sdev=/dev/$(nlraw -p shelf_get name=str:slow | sed -n 's/^disk=//p')
fencewrite direct "$sdev" /tmp/s.state >/tmp/s.out 2>&1 &
wpid=$!
wait_for 60 sh -c '[ "$(cat /tmp/s.state 2>/dev/null)" -ge 2 ]'
t_ok $? "the writer's writes reach the loop fabric (counter $(cat /tmp/s.state))"
t_run "freeze the ext4 under the loop device" fsfreeze -f /tmp/ff
# A write in flight on the loop device: the writer's next one, held by the freeze.
wait_for 60 sh -c "[ \"\$(awk '{print \$2}' /sys/block/${lo#/dev/}/inflight)\" -ge 1 ]"
t_ok $? "a write of the writer is in flight on $lo, after $(cat /tmp/s.state) good ones"
# The fence, and at the moment it returns, what the fabric holds.
rm -f /tmp/f.snap
(nlraw fence name=str:slow >/tmp/f.out 2>&1
 dd if=/tmp/ff/fab bs=8 count=1 2>/dev/null | od -An -tu8 | tr -d ' ' >/tmp/f.snap.new
 mv /tmp/f.snap.new /tmp/f.snap) &
fpid=$!
# Thaw once the fence has returned (the bug) or waits in the driver (as it
# must: its wait channel names an lfs function).
fence_returned_or_waits() {
	local p
	[ -s /tmp/f.snap ] && return 0
	for p in $(pgrep -x nlraw); do
		grep -q '^lfs_' /proc/$p/wchan 2>/dev/null && return 0
	done
	return 1
}
wait_for 60 fence_returned_or_waits
t_ok $? "the fence has returned or waits in the driver"
t_run "thaw" fsfreeze -u /tmp/ff
wait $fpid
t_is "$(cat /tmp/f.out)" ok "fence shelf slow"
wait $wpid
t_like "$(cat /tmp/s.out)" "^error EIO after [0-9]+$" "the writer got EIO: $(cat /tmp/s.out)"
last=$(cat /tmp/s.state)
t_is "$(cat /tmp/f.snap)" "$last" \
	"when the fence returned, the fabric held the writer's last good write ($last), the one in flight"
t_is "$(dd if=/tmp/ff/fab bs=8 count=1 2>/dev/null | od -An -tu8 | tr -d ' ')" "$last" "  and nothing after it"
t_is "$(nlraw remove name=str:slow)" ok "remove slow"
t_is "$(nlraw detach ig=u32:2)" ok "detach IG 2"
losetup -d "$lo" && umount /tmp/ff
t_ok $? "loop device and ext4 gone"

# --- zeroing one book at a time ---------------------------------------------
t_like "$(nlraw detach ig=u32:0)" "error EBUSY: interleave group 0 \\(/dev/pmem0\\) holds 1 books" \
	"IG 0 stays attached (shelf free)"
for b in 4 5; do
	t_is "$(nlraw create name=str:d$b books=books:0:$b)" ok "shelf d$b on book 0:$b"
	printf 'dirty%.0s' {1..1000} | dd of=/dev/$(nlraw -p shelf_get name=str:d$b | sed -n 's/^disk=//p') \
		oflag=direct bs=4096 count=1 iflag=fullblock 2>/dev/null
	t_is "$(nlraw remove name=str:d$b)" ok "  written and removed"
done
t_is "$(rawread /dev/pmem0 $(((2 << 20) + (4 << 25))) 5)" dirty "book 0:4 holds what its shelf wrote"
out=$(nlraw -p zero books=books:0:2,0:4-5)
t_is "$out" $'books=0:4-5\nok' "zero skips book 0:2 (shelf 'free' holds it) and reports 0:4-5: $out"
t_is "$(rawread /dev/pmem0 $(((2 << 20) + (4 << 25))) 5 | od -An -c | tr -d ' ')" \
	'\0\0\0\0\0' "book 0:4 reads as zeroes"
t_is "$(rawread /dev/pmem0 $(((2 << 20) + (5 << 25))) 5 | od -An -c | tr -d ' ')" \
	'\0\0\0\0\0' "book 0:5 reads as zeroes"
t_is "$(nlraw remove name=str:free)" ok "remove free"
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:0)" ok "the lease can be given up with no leased shelf"
t_done
