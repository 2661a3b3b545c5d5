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
ns_check_idle "the end"
t_is "$(ls $L | wc -l)" "$(grep -c '^shelf ' $UP_STATE)" "the listing and the server's catalogue agree"
t_run "umount" umount $L
up_stop
t_done
