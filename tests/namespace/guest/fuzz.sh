#!/bin/bash
# Guest side of tests/namespace/fuzz.t. Maps and listings come in small
# parts (LFS_A_MORE); the seed is printed so that a failure can be replayed.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"

seed=${LFS_FUZZ_SEED:-$(date +%s)}
t_run "lfs.ko, IG 0 and 1" ns_setup
t_run "the test upcall server" up_start --map-batch 3 --list-batch 4
t_run "mount" ns_mount
t_diag "seed $seed (LFS_FUZZ_SEED)"
out=$(lfsfuzz $L 10000 $seed 2>&1)
t_like "$out" "(^|\n)ok 10000 calls$" "10,000 calls agree with the model"
printf '%s\n' "$out" | grep '^#'
ns_check_idle "after the fuzz"
t_run "remount with attr_timeout=0" mount -o remount,attr_timeout=0 $L
out=$(lfsfuzz $L 2000 $((seed + 1)) 2>&1)
t_like "$out" "(^|\n)ok 2000 calls$" "2,000 more with every lookup asked again"
printf '%s\n' "$out" | grep -v '^#' | grep -v '^ok' | sed 's/^/# /'
ns_check_idle "after them"
# Two at once on names of their own (af0.., bf0..): the locks, the upcall
# channel and the fabrics' books under concurrent calls. Each one's calls
# are its seed's; how they interleave is not reproducible.
t_diag "two at once: seeds $((seed + 2)) and $((seed + 3))"
lfsfuzz $L 3000 $((seed + 2)) a >/tmp/fuzz-a.out 2>&1 &
pa=$!
lfsfuzz $L 3000 $((seed + 3)) b >/tmp/fuzz-b.out 2>&1 &
pb=$!
wait $pa
wait $pb
t_like "$(cat /tmp/fuzz-a.out)" "(^|\n)ok 3000 calls$" "two at once: a's 3,000 calls agree with its model"
t_like "$(cat /tmp/fuzz-b.out)" "(^|\n)ok 3000 calls$" "  and b's with its own"
ns_check_idle "the end"
t_is "$(ls $L | wc -l)" "$(grep -c '^shelf ' $UP_STATE)" "the listing and the server's catalogue agree"
t_run "umount" umount $L
up_stop
t_done
