#!/bin/bash
# Guest side of tests/driver/removal.t. A removed shelf's disk is deleted by
# the driver's reaper after the remove has answered; until then its sysfs
# attributes can be read. Its book list must stay readable, or read empty,
# when the fabric device under the books is detached at once, or when lfs.ko
# is unloaded at once: sysrace holds the reaper off (SCHED_FIFO threads on
# both CPUs) and reads the list meanwhile. The guest runs with slub_debug=P,
# so a read of a freed fabric returns poison rather than the old values.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"

t_like "$(cat /proc/cmdline)" 'slub_debug=P' "booted with slab poisoning (slub_debug=P)"
t_run "insmod lfs.ko" insmod "$LFS_KO"

# count WHAT OUTPUT: the number of reads sysrace reports for WHAT
count() { sed -n "s/.* \([0-9]*\) $1[;,].*/\1/p" <<<"$2"; }

# The reads must reach the window in some round for the test to have tested
# anything; one round may miss it on a loaded host, so the rounds are counted.
hit=0
for i in 1 2 3; do
	lfsctl attach /dev/pmem1 --ig 1 --book-size 16M >/dev/null &&
		lfsctl create race 1:0-3 >/dev/null
	t_ok $? "round $i: shelf 'race' on IG 1 (/dev/pmem1)" || break
	out=$(sysrace detach race /dev/pmem1 2>&1)
	rc=$?
	t_is "$rc" 0 "round $i: remove, then detach at once: the book list reads whole or empty (${out%%$'\n'*})" ||
		t_diag "$out"
	[ "$(count after "$out")" -gt 0 ] && hit=$((hit + 1))
	t_is "$(lfsctl fabric --json):$(lfsctl list --json)" "[]:[]" "round $i: nothing left"
done
t_ok "$([ "$hit" -gt 0 ]; echo $?)" \
	"reads came after the detach and before the disk was deleted in $hit of 3 rounds"

hit=0
for i in 1 2; do
	grep -qw ^lfs /proc/modules || insmod "$LFS_KO"
	lfsctl attach /dev/pmem1 --ig 1 --book-size 16M >/dev/null &&
		lfsctl create race 1:0-3 >/dev/null
	t_ok $? "unload round $i: shelf 'race' on IG 1" || break
	out=$(sysrace rmmod race 2>&1)
	rc=$?
	t_is "$rc" 0 "unload round $i: remove, then rmmod at once: the book list reads whole or empty (${out%%$'\n'*})" ||
		t_diag "$out"
	[ "$(count during "$out")" -gt 0 ] && hit=$((hit + 1))
	t_is "$(grep -cw ^lfs /proc/modules)" 0 "unload round $i: the module is gone"
	t_is "$(ls /sys/block | grep -c '^lfs')" 0 "unload round $i: and so is the disk"
done
t_ok "$([ "$hit" -gt 0 ]; echo $?)" "reads came while the module was being unloaded in $hit of 2 rounds"
# The fabric device deleted under a shelf in use: pmem1 unbound from nd_pmem
# while a writer writes. pmem unmaps its memory after the unbind, so a copy
# through the mapping kept at attach would fault (the guest boots with
# oops=panic): every write after the deletion must fail with EIO instead,
# reads too, and the shelf and fabric must still go away cleanly.
grep -qw ^lfs /proc/modules || insmod "$LFS_KO"
lfsctl attach /dev/pmem1 --ig 1 --book-size 16M >/dev/null &&
	lfsctl create gone 1:0-1 >/dev/null
t_ok $? "shelf 'gone' on IG 1 (/dev/pmem1)"
dev=/dev/$(nlraw -p shelf_get name=str:gone | sed -n 's/^disk=//p')
t_run "4 MiB written through $dev read back equal" bash -c \
	"pattern 7 4M | dd of=$dev bs=1M oflag=direct iflag=fullblock 2>/dev/null && cmp <(pattern 7 4M) <(dd if=$dev bs=1M count=4 iflag=direct 2>/dev/null)"
fencewrite direct "$dev" /tmp/g.state >/tmp/g.out 2>&1 &
wpid=$!
wait_for 60 sh -c '[ "$(cat /tmp/g.state 2>/dev/null)" -ge 100 ]'
t_ok $? "a writer writes to $dev (counter $(cat /tmp/g.state))"
nd=$(basename "$(readlink -f /sys/block/pmem1/device)")
t_run "unbind $nd (pmem1) from nd_pmem while it writes" sh -c "echo $nd >/sys/bus/nd/drivers/nd_pmem/unbind"
t_is "$(ls /sys/block | grep -c '^pmem1$')" 0 "pmem1 is gone"
wait $wpid
t_like "$(cat /tmp/g.out)" "^error EIO after [0-9]+$" "the writer got EIO: $(cat /tmp/g.out)"
t_is "$(dd if=$dev of=/dev/null bs=4k count=1 iflag=direct 2>&1 | grep -c 'Input/output error')" 1 \
	"a read of the shelf fails with EIO"
t_is "$(dd if=/dev/zero of=$dev bs=4k count=1 seek=5 oflag=direct 2>&1 | grep -c 'Input/output error')" 1 \
	"a write to another book page fails with EIO"
t_run "remove the shelf" lfsctl remove gone
t_run "detach /dev/pmem1, by the path it was attached by" lfsctl detach /dev/pmem1
t_is "$(lfsctl fabric --json):$(lfsctl list --json)" "[]:[]" "nothing left"
t_run "bind $nd again" sh -c "echo $nd >/sys/bus/nd/drivers/nd_pmem/bind"
t_run "rmmod lfs" rmmod lfs
t_done
