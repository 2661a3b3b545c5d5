# Guest side of tests/driver/fencelate.t, sourced by fencelate.sh at its end
# (the same boot): the fence watchdog (issue 30, docs/FENCING.md "The fence
# watchdog"), fence action eio.
# 1. Bad bounds are refused, naming the value, with nothing taken.
# 2. A normal fence (four leased shelves open, one of them ext4 -o dax
#    mounted, a writer) ends within the bound: no restart.
# 3. A write() into a file on ext4 -o dax stuck in dax_iomap_rw (its
#    source page is a userfaultfd page nobody serves) holds the fence work
#    in kill_dax(): the watchdog restarts the node 2 s after the deadline.
#    The script writes its status into the results share before the lease
#    runs out, since the restart ends it; fencelate.t then checks, from the
#    host, the kernel's reason in the console and that no byte of the stuck
#    write reached the fabric. A node that does not restart serves the page
#    6 s after the deadline (the code before: the write stores its bytes).
#    Nothing may come after this part.
dev_of() { echo "/dev/$(nlraw -p shelf_get name=str:"$1" | sed -n 's/^disk=//p')"; }
lease_f() { nlraw -p lease_get | sed -n "s/^$1=//p"; }

t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:0)" ok "the lease given up (no leased shelf left)"
for v in 1 99 600001 4294967295; do
	t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:3000 fence_watchdog_ms=u32:$v)" \
		"error EINVAL: fence watchdog $v ms is not 0 (none) or 100 to 600000 ms" \
		"a fence watchdog of $v ms is refused, naming the value"
done
t_like "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:3000 fence_watchdog_ms=u16:500)" "^error EINVAL" \
	"  and one that is not a u32"
t_is "$(lease_f lease_ms) $(lease_f fence_watchdog_ms)" "0 0" "  none of those renewals was taken"

# --- a normal fence: no restart ----------------------------------------------
renewer /tmp/norenew2 5000 fence_watchdog_ms=u32:1500 &
rpid=$!
wait_for 20 sh -c '[ "$(nlraw -p lease_get | sed -n "s/^fence_watchdog_ms=//p")" = 1500 ]'
t_ok $? "a 5 s lease, fence action eio, fence watchdog 1500 ms"
for i in 1 2 3; do
	nlraw create name=str:w$i books=books:0:$((10 + i)) leased=flag: >/dev/null
done
nlraw create name=str:wx books=books:0:4-7 leased=flag: >/dev/null
wx=$(dev_of wx)
mkfs.ext4 -q -F -b 4096 "$wx" && mkdir -p /mnt/wx && mount -o dax "$wx" /mnt/wx &&
	dd if=/dev/zero of=/mnt/wx/f bs=4096 count=1 status=none && sync
t_ok $? "leased shelves w1, w2, w3 and wx, ext4 -o dax mounted on wx"
exec 21<>"$(dev_of w1)" 22<>"$(dev_of w2)"
fencewrite direct "$(dev_of w3)" /tmp/w.state >/tmp/w.out 2>&1 &
wpid=$!
wait_for 20 test -s /tmp/w.state
t_ok $? "  w1 and w2 open, a writer on w3"
c0=$(lease_f fence_count)
touch /tmp/norenew2
wait $rpid
wait $wpid
t_like "$(cat /tmp/w.out)" "^error EIO after [0-9]+$" "the renewals stop: w3's writer gets EIO at the deadline"
wait_for 20 sh -c "[ \"\$(nlraw -p lease_get | sed -n 's/^fence_count=//p')\" -gt $c0 ]"
t_ok $? "  the fence work ends"
t_is "$(lease_f nr_fenced)" 4 "  four shelves fenced"
ended=$(dmesg | grep 'fence of the lease' | tail -n 1 | sed -n 's/.*the fence ended after \([0-9]*\) us$/\1/p')
t_ok "$([ -n "$ended" ] && [ "$ended" -lt 1500000 ]; echo $?)" "  within the bound: after ${ended} us"
wait_for 20 sh -c '[ "$(nlraw -p lease_get | sed -n "s/^lease_left=//p")" -le -2500 ]'
t_ok $? "2.5 s after the deadline (the bound 1.5 s) the node still runs"
t_is "$(dmesg | grep -c 'fence watchdog')" 0 "  and the watchdog said nothing"
exec 21>&- 22>&-
umount /mnt/wx
for s in w1 w2 w3 wx; do
	nlraw remove name=str:$s >/dev/null || t_diag "remove $s failed"
done

# --- a write stuck in dax_iomap_rw: the watchdog restarts the node ------------
renewer /tmp/norenew3 5000 fence_watchdog_ms=u32:2000 &
rpid=$!
wait_for 20 sh -c '[ "$(nlraw -p lease_get | sed -n "s/^fence_watchdog_ms=//p")" = 2000 ] &&
	[ "$(nlraw -p lease_get | sed -n "s/^lease_left=//p")" -gt 0 ]'
t_ok $? "a 5 s lease again, fence watchdog 2000 ms"
t_is "$(nlraw create name=str:x books=books:0:20-23 leased=flag:)" ok "a leased shelf x"
x=$(dev_of x)
mkfs.ext4 -q -F -b 4096 "$x" && mkdir -p /mnt/x && mount -o dax "$x" /mnt/x &&
	dd if=/dev/zero of=/mnt/x/g bs=4096 count=1 status=none &&
	printf 'Y%.0s' {1..4096} >/mnt/x/seen && sync
t_ok $? "  ext4 -o dax on x; file g, and file seen holds 4096 'Y' (the host looks for them)"
t_like "$(grep /mnt/x /proc/mounts)" "dax=always" "  mounted with dax"
mkfifo /tmp/u.in
"$LFS_TOP/build/tests/stuckio" /mnt/x/g - </tmp/u.in >/tmp/u.out 2>&1 &
exec 23>/tmp/u.in
wait_for 20 grep -qx stuck /tmp/u.out
t_ok $? "a write of 4096 'X' into g waits for its userfaultfd page (in dax_iomap_rw)"
# The restart ends the script: its status so far, for vmrun.
echo $((T_FAILED > 0)) >"$LFS_RESULTS/rc"
touch "$LFS_RESULTS/watch-armed"
touch /tmp/norenew3
wait $rpid
# The deadline (no poll of the lease here: LFS_CMD_LEASE_GET waits behind
# the stuck fence), then the watchdog's time, 2 s, and 4 s to spare. No
# check in between: the restart may come first.
wait_for 20 sh -c "[ \"\$(cat /sys/block/${x#/dev/}/lfs/state)\" = fenced ]"
sleep 6
t_ok 1 "the node did not restart within 6 s of the deadline (fence watchdog 2000 ms)"
echo go >&23
wait_for 20 grep -q '^stuck write' /tmp/u.out
t_diag "the stuck write, its page served after the deadline: $(grep '^stuck write' /tmp/u.out)"
t_done
