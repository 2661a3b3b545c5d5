#!/bin/bash
# Guest side of tests/namespace/fence.t. The server renews a 4 s lease with
# the fence action "reset": had the driver counted these files as a reason
# to reset, the guest would restart and the run fail.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"

# hold NAME STEPS...: fsops STEPS in the background until release NAME.
hold() {
	local name=$1
	shift
	mkfifo /tmp/$name.in
	fsops "$@" </tmp/$name.in >/tmp/$name.out 2>&1 &
	eval "exec ${name#h}>/tmp/$name.in"
}
release() { eval "exec ${1#h}>&-"; }
# same_but_spun FILE: FILE holds /tmp/data but at page starts (the spinner's).
same_but_spun() {
	[ "$(cmp -l /tmp/data "$1" | awk '($1 - 1) % 4096 != 0' | wc -l)" = 0 ] &&
		[ "$(stat -c %s "$1")" = 4194304 ]
}

t_run "lfs.ko, IG 0 and 1" ns_setup
t_run "the server renews a 4 s lease (fence action reset), OPEN is leased" \
	up_start --lease 4000 --leased --fence-action reset
t_is "$(nlraw -p lease_get | grep -E '^(lease_ms|fence_action)=' | tr '\n' ' ')" \
	"lease_ms=4000 fence_action=0 " "the node holds the lease"
t_run "mount" ns_mount
dd if=/dev/urandom of=/tmp/data bs=1M count=4 status=none
t_run "cp 4 MiB to a" cp /tmp/data $L/a

hold h7 open $L/a rw mmap 4194304 shared spin 120
hold h8 open $L/a rw wait pread 0 4096 pwrite 0 10 1 mmap 4096 shared close
t_run "a process stores into every page of a mapping of a" wait_for 20 grep -q spinning /tmp/h7.out
t_run "another holds a open" wait_for 20 grep -q waiting /tmp/h8.out
t_like "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:0)" "error EBUSY: leased shelves exist" \
	"the lease cannot be given up while a leased file is open"
t_is "$(nlraw -p shelf_get name=str:a | head -1)" "error ENOENT: no shelf 'a'" \
	"a is no shelf (block device) here"

up_fault norenew
t_run "the server stops renewing: the lease runs out and the mapping is revoked" \
	wait_for 30 grep -q SIGBUS /tmp/h7.out
t_is "$(cat /tmp/h7.out | tr '\n' ' ')" "ok ok spinning SIGBUS " "  the storing process got SIGBUS"
t_like "$(dmesg | grep "file 'a'")" "file 'a' of the lfs filesystem revoked \(the node's lease expired\)" \
	"  the kernel says so"
t_is "$(fs fsops open $L/a r)" "error EIO" "a new open of the revoked file: EIO"
t_run "the fence latency of the lapse is measured" wait_for 20 sh -c \
	"nlraw -p lease_get | grep -qx fence_count=1"
lat=$(nlraw -p lease_get | sed -n 's/^fence_last_ns=//p')
done_ns=$(nlraw -p lease_get | sed -n 's/^fence_done_last_ns=//p')
t_ok "$([ "${lat:-0}" -gt 0 ] && [ "$lat" -lt 4000000000 ] && [ "${done_ns:-0}" -ge "$lat" ]; echo $?)" \
	"  reported: ${lat:-none} ns to every file refusing, ${done_ns:-none} ns to the fence's end (> 0, < the lease)"
t_like "$(lfsctl lease | tail -n 1)" "^fence latency [0-9]+ us, max [0-9]+ us over 1 lapses; fence ended after [0-9]+ us" \
	"  lfsctl lease prints it"
release h8
wait_for 20 grep -q '^ok$' <(tail -1 /tmp/h8.out)
t_is "$(cat /tmp/h8.out | tr '\n' ' ')" "ok waiting ok error EIO error EIO error EIO ok " \
	"the holder: read EIO, write EIO, mmap EIO"
release h7
wait
t_is "$(up_state nr_active)" 0 "closed: the activation is over"
t_like "$(fs fsops open $L/a r)" "error ENOLCK" "no lease: a leased open is refused (ENOLCK)"
up_fault
t_run "the server renews again" wait_for 20 sh -c \
	"nlraw -p lease_get | grep -q 'lease_left=[1-9]'"
t_run "a opens again, its data intact (but what the spinner stored)" same_but_spun $L/a

# A fence by name.
t_run "cp 4 MiB to b" cp /tmp/data $L/b
hold h9 open $L/b rw mmap 4194304 shared spin 120
t_run "a process stores into a mapping of b" wait_for 20 grep -q spinning /tmp/h9.out
t_is "$(nlraw fence name=str:b)" ok "LFS_CMD_SHELF_FENCE b"
t_run "  the mapping is revoked" wait_for 20 grep -q SIGBUS /tmp/h9.out
t_like "$(dmesg | grep "file 'b'")" "revoked \(asked to by the node agent\)" "  the kernel says why"
t_like "$(fs fsops open $L/a r pread 0 4096)" "^ok sum [0-9]+ of 4096$" "  a is not affected"
release h9
wait
t_is "$(nlraw fence name=str:b)" "error ENOENT: no shelf 'b', nor a file of that name open through the lfs filesystem" \
	"a fence of a file no longer open: ENOENT"
t_run "b opens again" same_but_spun $L/b

# A fence by UUID (what the node agent sends: the kernel may know the file
# by another name than the agent does), here of b renamed to c while open.
hold h10 open $L/b rw mmap 4194304 shared spin 120
t_run "a process stores into a mapping of b" wait_for 20 grep -q spinning /tmp/h10.out
t_run "  b is renamed to c while open" mv $L/b $L/c
u=$(awk '$1 == "shelf" && $2 == "c" { print $3 }' $UP_STATE)
t_like "$(nlraw fence name=str:b)" "^error ENOENT" "LFS_CMD_SHELF_FENCE b: no such file now"
t_like "$(nlraw fence uuid=hex:0011223344556677)" "^error ERANGE: binary attribute size out of range" \
	"a UUID of 8 bytes: refused by the policy (ERANGE)"
t_like "$(nlraw fence uuid=hex:00112233445566778899aabbccddeeff)" \
	"^error ENOENT: no file of UUID 00112233-4455-6677-8899-aabbccddeeff is open here" \
	"a UUID no open file has: ENOENT, naming it"
t_is "$(nlraw fence uuid=hex:$u)" ok "LFS_CMD_SHELF_FENCE by c's UUID ($u)"
t_run "  the mapping is revoked" wait_for 20 grep -q SIGBUS /tmp/h10.out
t_like "$(dmesg | grep "file 'c'")" "revoked \(asked to by the node agent\)" "  the kernel names it c"
release h10
wait
t_like "$(nlraw fence uuid=hex:$u)" "^error ENOENT: no file of UUID" "closed (its mapper died of SIGBUS): a fence by its UUID gets ENOENT"
t_run "c opens again" same_but_spun $L/c
# A copy stalled in a user page fault across the deadline (issue 30): a
# write into g from a userfaultfd page nobody serves, h open and mapped,
# written and stored every 20 ms. At the deadline both refuse at once, and
# a renewal that arrives late makes neither writable again.
t_run "g and h" sh -c "fsops open $L/g rwc pwrite 0 4096 0 >/dev/null && fsops open $L/h rwc pwrite 0 4096 0 >/dev/null"
mkfifo /tmp/h11.in
stuckio $L/g $L/h </tmp/h11.in >/tmp/h11.out 2>&1 &
exec 11>/tmp/h11.in
t_run "a write into g waits for a userfaultfd page nobody serves" wait_for 20 grep -qx stuck /tmp/h11.out
up_fault norenew
t_run "the server stops renewing: the lease runs out" wait_for 40 grep -qx fenced /tmp/h11.out
t_like "$(grep '^h ' /tmp/h11.out)" "^h write refused store refused store_after_ms -?[0-9]+$" \
	"  h: pwrite and stores refused, while the write into g is stuck"
after=$(sed -n 's/.*store_after_ms //p' /tmp/h11.out)
t_run "  the last store went through at most 1 s after the first refused pwrite (${after:-none} ms)" \
	test "${after:-99999}" -le 1000
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:4000)" ok "a renewal after the deadline is taken"
t_like "$(dmesg | grep 'renewed after its deadline')" "a new lease \(epoch [0-9]+\); what the old one covered stays fenced" \
	"  as a new lease"
echo go >&11
t_run "  the helper goes on" wait_for 20 grep -q '^stuck write' /tmp/h11.out
t_is "$(grep '^after' /tmp/h11.out | tr '\n' ' ')" "after write error EIO after store SIGBUS " \
	"  h stays refused: pwrite EIO, a store SIGBUS"
t_is "$(grep '^stuck write' /tmp/h11.out)" "stuck write error EIO" \
	"  the write into g, its page served after the deadline, stores nothing: EIO"
release h11
wait
t_is "$(up_state nr_active)" 0 "closed: the activations are over"
up_fault
t_run "the server renews again" wait_for 20 sh -c \
	"nlraw -p lease_get | grep -q 'lease_left=[1-9]'"
t_is "$(fs fsops open $L/g r pread 0 4096)" "ok sum 0 of 4096" "g holds none of the stuck write's bytes"
t_is "$(fs fsops open $L/h rw pwrite 0 1 7)" "ok ok" "h opened again under the new lease: writable"
ns_check_idle "the end"
t_run "umount" umount $L
up_stop
t_is "$(nlraw lease_renew lease_start=now:0 lease_ms=u32:0)" ok "with no leased file the lease can be given up"
t_done
