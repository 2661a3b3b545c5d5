#!/bin/bash
# Guest side of bench/fencing/daxeio: ext4 -o dax on a leased shelf x with
# fence_action eio, a write() into a file on it stuck in dax_iomap_rw (its
# source page is a userfaultfd page nobody serves), an /lfs file h open and
# mapped, a leased shelf y written with O_DIRECT (docs/FENCING.md "ext4 -o dax
# with fence_action eio and a stuck copy"). Asserts what holds at the deadline;
# reports (# lines) what does not: the fence's end waits for the stuck copy,
# and the copy, once its page is served, stores its bytes after the deadline.
# LFS_CMD_LEASE_GET waits behind the stuck fence (lfs_lock), so nothing here
# asks for it until the page is served.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"
lf() { nlraw -p lease_get | sed -n "s/^$1=//p"; }
mk_x() {
	local x
	x=$(lfsctl create x 1:0-7 --leased) && echo "$x" >/tmp/x.dev && mkfs.ext4 -q -F -b 4096 "$x" &&
		mkdir -p /mnt/x && mount -o dax "$x" /mnt/x &&
		dd if=/dev/zero of=/mnt/x/g bs=4096 count=1 status=none && sync
}
t_run "lfs.ko, IG 0 and 1" ns_setup
t_run "the server renews a 4 s lease (fence action eio), OPEN is leased" \
	up_start --lease 4000 --leased --fence-action eio
t_run "mount /lfs; h" sh -c "mount -t lfs lfs $L && fsops open $L/h rwc pwrite 0 4096 0 >/dev/null"
t_run "x: ext4 -o dax on a leased shelf of 8 books, file g" mk_x
t_like "$(grep /mnt/x /proc/mounts)" "dax=always" "  mounted with dax"
mk_y() { lfsctl create y 1:8 --leased >/tmp/y.dev; }
t_run "y: a leased shelf of 1 book" mk_y
x=$(basename "$(cat /tmp/x.dev)") y=$(basename "$(cat /tmp/y.dev)")
fencewrite direct "$(cat /tmp/y.dev)" /tmp/y.state >/tmp/y.out 2>&1 &
ypid=$!
t_run "  a writer writes a counter into y with O_DIRECT" wait_for 20 test -s /tmp/y.state
c0=$(lf fence_count)
mkfifo /tmp/s.in
stuckio /mnt/x/g $L/h </tmp/s.in >/tmp/s.out 2>&1 &
exec 11>/tmp/s.in
t_run "a write into g on ext4 -o dax waits for a userfaultfd page (in dax_iomap_rw)" \
	wait_for 20 grep -qx stuck /tmp/s.out
up_fault norenew
t_run "the server stops renewing: h is fenced" wait_for 40 grep -qx fenced /tmp/s.out
t_like "$(grep '^h ' /tmp/s.out)" "^h write refused store refused store_after_ms -?[0-9]+$" \
	"  h: pwrite and stores refused while the copy into g is stuck"
t_run "  y's writer ends" wait_for 20 sh -c "! kill -0 $ypid 2>/dev/null"
t_like "$(cat /tmp/y.out)" "^error EIO after [0-9]+$" "  y's writer got EIO"
t_is "$(cat /sys/block/$x/lfs/state) $(cat /sys/block/$y/lfs/state)" "fenced fenced" "  x and y read fenced"
t_like "$(dd if=/dev/$y of=/dev/null bs=4096 count=1 iflag=direct 2>&1)" "Input/output error" "  y refuses a read"
t_is "$(dmesg | grep -c "shelf 'y' fenced")" 0 "  y's fence work has not run: it waits behind x's kill_dax (the stuck copy)"
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:4000)" ok "a renewal after the deadline is a new lease"
echo go >&11
t_run "the page served: the helper goes on" wait_for 20 grep -q '^stuck write' /tmp/s.out
t_diag "the stuck write, its page served after the deadline: $(grep '^stuck write' /tmp/s.out)"
t_run "  the fence work ends" wait_for 20 sh -c "[ \$(nlraw -p lease_get | sed -n 's/^fence_count=//p') -gt $c0 ]"
t_diag "$(dmesg | grep 'fence of the lease' | head -n 1)"
t_is "$(grep '^after' /tmp/s.out | tr '\n' ' ')" "after write error EIO after store SIGBUS " "  h stays refused"
exec 11>&-
wait
umount /mnt/x 2>/dev/null
up_fault
t_run "umount /lfs" umount $L
up_stop
t_done
