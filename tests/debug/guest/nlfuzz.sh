#!/bin/bash
# Guest side of tests/debug/nlfuzz.t: LFS_NLFUZZ_COUNT messages from
# tests/driver/nlfuzz.c, seeded with LFS_NLFUZZ_SEED, in rounds of 10000 so
# that a failure names the round (and its seed) to replay.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
seed=$LFS_NLFUZZ_SEED
count=$LFS_NLFUZZ_COUNT
round=10000
asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done
t_run "attach /dev/pmem0 as IG 0" lfsctl attach /dev/pmem0 --ig 0 --book-size 64M
t_run "attach /dev/pmem1 as IG 1" lfsctl attach /dev/pmem1 --ig 1 --book-size 64M
t_like "$(lfsctl create a 0:0,1:0)" '^/dev/lfs' "shelf 'a' for the fuzz to find"
t_diag "seed $seed, $count messages in rounds of $round (LFS_NLFUZZ_SEED, LFS_NLFUZZ_COUNT)"

# Round r: seed + r, as root except every tenth round (as nobody).
sent=0 r=0
while [ "$sent" -lt "$count" ]; do
	n=$((count - sent < round ? count - sent : round))
	who=root run=
	[ $((r % 10)) -eq 9 ] && who=nobody run=asuser
	out=$($run nlfuzz "$((seed + r))" "$n" 2>&1)
	t_ok $? "round $r ($who, seed $((seed + r)), $n messages): $out" || break
	sent=$((sent + n))
	r=$((r + 1))
	t_time "round $r"
done
t_is "$sent" "$count" "$count messages sent in $r rounds"
t_is "$(grep -cw ^lfs /proc/modules)" 1 "lfs.ko still loaded"

# The module still does its job: a new shelf, bytes through it.
for s in $(lfsctl list --json | jq -r '.[].name'); do lfsctl remove "$s"; done
t_is "$(lfsctl list --json | jq length)" 0 "every shelf removed (the fuzz's too)"
dev=$(lfsctl create after 0:1,1:1)
t_like "$dev" '^/dev/lfs' "a shelf made after the fuzz: $dev"
t_run "128 MiB written and read back" \
	bash -c "pattern 5 128M | dd of=$dev bs=1M iflag=fullblock oflag=direct status=none &&
		cmp <(pattern 5 128M) $dev"
t_run "remove after" lfsctl remove after
for f in $(lfsctl fabric --json | jq -r '.[].path'); do lfsctl detach "$f"; done
t_is "$(nlraw state)" "" "everything removed and detached"
t_run "rmmod lfs" rmmod lfs
t_is "$(grep -cw ^lfs /proc/modules)" 0 "module gone"
t_done
