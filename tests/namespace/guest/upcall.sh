#!/bin/bash
# Guest side of tests/namespace/upcall.t: the filesystem's upcalls when the
# server is missing, slow, stopped, killed or wrong. Nothing may hang and
# the kernel warns about nothing (panic_on_warn).
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"

ms() { echo $(($(date +%s%N) / 1000000)); }
# log_mark; ...; log_new: the server's log lines since the mark.
log_mark() { mark=$(wc -l <$UP_LOG); }
log_new() { tail -n +$((mark + 1)) $UP_LOG; }
# took MS CMD...: run CMD, print its output and then the milliseconds it took.
took() {
	local t0=$(ms) out
	out=$(fs "$@")
	echo "$out ($(($(ms) - t0)) ms)"
}

t_run "lfs.ko, IG 0 and 1" ns_setup
t_run "mount without a server" ns_mount
out=$(took touch $L/x)
# Times are generous: under TCG on a loaded machine a process takes long to
# start; what matters is that nothing waits for upcall_timeout (30 s).
t_like "$out" "Transport endpoint is not connected \(([0-9]{1,3}|[1-9][0-9]{3}) ms\)" \
	"no server: ENOTCONN at once (not after upcall_timeout, 30 s): $out"
t_like "$(fs ls $L)" "Transport endpoint is not connected" "ls: ENOTCONN"
t_like "$(fs df $L)" "Transport endpoint is not connected" "df: ENOTCONN"
t_is "$(up_state up_portid)" 0 "no server registered"

# --- registration -----------------------------------------------------------
t_run "the test upcall server registers (read-only shelf 'ro')" \
	up_start --map-batch 2 --list-batch 3 --readonly ro
t_ok "$([ "$(up_state up_portid)" -gt 0 ]; echo $?)" "its portid is the server's"
t_like "$(nlraw up_register)" "error EBUSY: an upcall server is registered already \(portid [0-9]+\)" \
	"a second server is refused"
t_like "$(nlraw up_unregister)" "error EPERM: the upcall server is another socket" \
	"only the server unregisters itself"
t_like "$(nlraw up_reply up_id=u32:1)" "error EPERM: replies come from the registered upcall server" \
	"a reply from another socket is refused"
t_like "$(nlraw up_reply)" "error EINVAL: missing attribute: upcall id" "a reply needs an id"

# --- replies in many parts ---------------------------------------------------
dd if=/dev/urandom of=/tmp/data bs=1M count=17 status=none
t_run "cp 17 MiB: 9 books, maps sent 2 books a message" cp /tmp/data $L/a
t_run "  reads back identical after a new OPEN" cmp /tmp/data $L/a
t_run "touch 20 more files" sh -c "for i in \$(seq -w 1 20); do touch $L/f\$i || exit 1; done"
t_is "$(ls $L | wc -l)" 21 "the listing, in parts of 3, has all 21"

# --- a stopped server ----------------------------------------------------------
t_run "remount: upcall_timeout=2, attr_timeout=0" mount -o remount,upcall_timeout=2,attr_timeout=0 $L
up_kill STOP
out=$(took stat $L/a)
t_like "$out" "Connection timed out \(([2-9][0-9]{3}) ms\)" \
	"server stopped: ETIMEDOUT after upcall_timeout: $out"
t_is "$(up_state up_pending)" 0 "  the request is no longer pending"
up_kill CONT
t_run "server continued: stat works again" stat $L/a
t_like "$(cat $UP_LOG)" "refused \(error -2\): upcall [0-9]+ is not pending" \
	"  its late reply was refused (ENOENT)"

# --- a server killed with requests pending ------------------------------------------
mount -o remount,upcall_timeout=30 $L
up_fault "drop OPEN"
pids=
for i in 1 2 3; do
	fsops open $L/f0$i r >/tmp/pend$i.out 2>&1 &
	pids="$pids $!"
done
t_run "three opens wait for the server" \
	wait_for 20 sh -c '[ "$(nlraw -p up_get | sed -n "s/^up_pending=//p")" = 3 ]'
t0=$(ms)
up_kill KILL
wait $pids 2>/dev/null
t_is "$(cat /tmp/pend1.out /tmp/pend2.out /tmp/pend3.out | tr '\n' ' ')" \
	"error ENOTCONN error ENOTCONN error ENOTCONN " "server killed: each pending open fails with ENOTCONN"
t_ok "$([ $(($(ms) - t0)) -lt 10000 ]; echo $?)" \
	"  at once, not after upcall_timeout, 30 s ($(($(ms) - t0)) ms, with the server's end)"
t_is "$(up_state up_portid) $(up_state up_pending)" "0 0" "  nothing registered, nothing pending"

t_run "a new server (same catalogue)" up_start --map-batch 2 --list-batch 3 --readonly ro
up_fault "die OPEN"
out=$(took cat $L/a)
t_like "$out" "Transport endpoint is not connected" "server dies in the middle of an OPEN: ENOTCONN: $out"
t_run "a new server" up_start --map-batch 2 --list-batch 3 --readonly ro
t_run "  the data is still there" cmp /tmp/data $L/a

# --- a caller killed while it waits ------------------------------------------------------
touch $L/k
up_fault "delay OPEN 10"
fsops open $L/k rw >/dev/null 2>&1 &
pid=$!
t_run "  a caller waits for the server" \
	wait_for 60 sh -c '[ "$(nlraw -p up_get | sed -n "s/^up_pending=//p")" = 1 ]'
t0=$(ms)
kill -9 $pid
wait $pid 2>/dev/null
t_ok "$([ $(($(ms) - t0)) -lt 5000 ]; echo $?)" \
	"a caller killed while it waits is gone at once, not after the reply, 9 s later ($(($(ms) - t0)) ms)"
t_is "$(up_state up_pending)" 0 "  its request is given up"
up_fault
t_run "  the late reply comes" wait_for 30 grep -q "OPEN of k undone" $UP_LOG
t_like "$(cat $UP_LOG)" "refused \(error -2\): upcall [0-9]+ is not pending" "  and is refused"
t_run "  the server undid the activation: rm works" rm $L/k
touch $L/k2
fsops open $L/k2 rw sleep 600000 >/tmp/k2.out 2>&1 &
pid=$!
t_run "a process holds k2 open" wait_for 60 grep -q ok /tmp/k2.out
kill -9 $pid
wait $pid 2>/dev/null
t_run "a process killed with a file open: its CLOSE still reaches the server (rm works)" rm $L/k2

# --- replies the kernel refuses -----------------------------------------------------------------
refused=$(up_state up_refused)
log_mark
up_fault "badmap OPEN 7:0"
t_like "$(fs cat $L/a)" "Input/output error" "a map on an IG not attached: EIO"
t_like "$(log_new)" "refused \(error -19\): book 7:0: interleave group 7 is not attached" \
	"  the server is told why (ENODEV)"
t_like "$(lfsctl create blk 1:240 2>&1)" "^/dev/lfs" "a block-device shelf on book 1:240"
log_mark
up_fault "badmap OPEN 1:240"
t_like "$(fs cat $L/a)" "Input/output error" "a map with a book of that shelf: EIO"
t_like "$(log_new)" "refused \(error -16\): book 1:240 is in shelf 'blk'" "  (EBUSY)"
second=$(awk '$1 == "shelf" && $2 == "a" { print $14 }' $UP_STATE)
log_mark
up_fault "badmap OPEN $second"
t_like "$(fs cat $L/a)" "Input/output error" "a map with a book twice ($second): EIO"
t_like "$(log_new)" "refused \(error -22\): book $second is listed twice" "  (EINVAL)"
log_mark
up_fault "badmap OPEN 0:9999"
t_like "$(fs cat $L/a)" "Input/output error" "a book past the device's end: EIO"
t_like "$(log_new)" "refused \(error -34\): book 0:9999 is beyond the end" "  (ERANGE)"
log_mark
up_fault "badsize OPEN"
t_like "$(fs cat $L/a)" "Input/output error" "a size past the books: EIO"
t_like "$(log_new)" "refused \(error -22\): size [0-9]+ does not fit in 9 books" "  (EINVAL)"
up_fault "badmap RESIZE 7:0"
t_like "$(fs truncate -s 20M $L/a)" "Input/output error" "a resize answered with a bad map: EIO"
up_fault
t_ok "$([ "$(up_state up_refused)" -ge $((refused + 5)) ]; echo $?)" "up_refused counts them"
t_run "lfsctl remove blk" lfsctl remove blk
t_run "  and the file is fine" cmp <(head -c 17M /tmp/data) <(head -c 17M $L/a)

# --- the server's errnos ----------------------------------------------------------------
up_fault "errno CREATE_OPEN 122"
t_like "$(fs touch $L/q)" "Disk quota exceeded" "CREATE_OPEN answered EDQUOT"
up_fault "errno CREATE 122"
t_is "$(fs fsops mknod $L/q)" "error EDQUOT" "CREATE (mknod of a file) answered EDQUOT"
up_fault
t_is "$(fs fsops mknod $L/q stat $L/q unlink $L/q)" "ok 0 ok" "  and without the fault mknod makes an empty file"
up_fault "errno RESIZE 28"
t_like "$(fs truncate -s 40M $L/a)" "No space left on device" "RESIZE answered ENOSPC"
up_fault "errno OPEN 13"
t_like "$(fs cat $L/a)" "Permission denied" "OPEN answered EACCES"
log_mark
up_fault "errno LOOKUP 600"
t_like "$(fs stat $L/nope)" "Input/output error" "an errno past LFS_UP_ERRNO_MAX: refused, EIO"
t_like "$(log_new)" "refused \(error -22\): errno 600 is not 1 to 511" "  (EINVAL)"
up_fault
t_run "touch ro (read-only on this node)" touch $L/ro
t_is "$(stat -c %A $L/ro)" "-r--------" "  mode 0400 (the mount's 0700 without w and x)"
t_is "$(fs fsops open $L/ro w)" "error EACCES" "  opening it for writing: EACCES, even for root"
t_is "$(fs fsops open $L/ro r close)" "ok ok" "  reading is fine"

# --- many callers ---------------------------------------------------------------------------
t_run "40 creates and stats at once" sh -c "for i in \$(seq 1 40); do
	(touch $L/p\$i && stat $L/p\$i >/dev/null) & done; wait"
t_is "$(ls $L | grep -c '^p')" 40 "  all 40 exist"
ns_check_idle "the end"
t_run "umount" umount $L
up_stop
t_done
