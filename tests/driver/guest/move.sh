#!/bin/bash
# Guest side of tests/driver/move.t: every book of a mounted, busy shelf
# moved to the other fabric device, one by one (lfsctl move), then checked:
# the writers saw every store they made, the old books are free and zeroing
# them changes nothing, fsck is clean, the kernel warned of nothing.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
M=/tmp/mnt
STOP=/tmp/move.stop
mkdir -p $M

# The stall of each move of SHELF, in microseconds, from the kernel's log.
stalls() { dmesg | sed -n "s/.*of shelf '$1' moved .*: stall \([0-9]*\) us.*/\1/p" | paste -sd' '; }
# Their parts, one line a move.
stall_parts() { dmesg | sed -n "s/.*of shelf '$1' moved from \(.*\)/\1/p"; }

# fio rounds on FILE with ENGINE until $STOP exists: each round writes SIZE
# at random and verifies it (crc32c, also while writing); exit 1 on the first
# failed round.
fio_loop() {
	local file=$1 engine=$2 size=$3 n=0
	while [ ! -e $STOP ]; do
		fio --name=move --filename="$file" --size="$size" --bs=4k --rw=randwrite \
			--ioengine="$engine" --verify=crc32c --verify_backlog=64 \
			--randseed=$n --output=/tmp/fio.$engine.out || { echo "fio round $n"; return 1; }
		n=$((n + 1))
	done
	echo "fio $engine rounds $n"
}

# start_writers DIR MAPBYTES: a MAP_SYNC and a MAP_SHARED writer and two fio
# loops (psync, mmap) on DIR; their pids in $writers.
start_writers() {
	local d=$1 bytes=$2
	rm -f $STOP
	fallocate -l "$bytes" "$d/sync" && fallocate -l "$bytes" "$d/shared" || return 1
	movemap "$d/sync" "$bytes" sync $STOP >/tmp/w.sync 2>&1 &
	writers=$!
	movemap "$d/shared" "$bytes" shared $STOP >/tmp/w.shared 2>&1 &
	writers="$writers $!"
	fio_loop "$d/fio.psync" psync 4M >/tmp/w.psync 2>&1 &
	writers="$writers $!"
	fio_loop "$d/fio.mmap" mmap 2M >/tmp/w.mmap 2>&1 &
	writers="$writers $!"
}

# stop_writers WHAT: each writer ends well and says how far it got.
stop_writers() {
	local pid st name names=(sync shared psync mmap) i=0
	touch $STOP
	for pid in $writers; do
		wait "$pid"
		st=$?
		name=${names[$i]}
		t_ok $st "$1: writer $name saw every store it made ($(tail -n 1 /tmp/w.$name))"
		[ $st -eq 0 ] || cat /tmp/w.$name
		i=$((i + 1))
	done
}

# move_all SHELF N IG: move books 0..N-1 of SHELF to IG:0..N-1, one by one.
move_all() {
	local shelf=$1 n=$2 ig=$3 i bad=0
	for i in $(seq 0 $((n - 1))); do
		lfsctl move "$shelf" "$i" "$ig:$i" || bad=$((bad + 1))
	done
	return $bad
}

t_run "insmod lfs.ko" insmod "$LFS_KO"
t_run "attach /dev/pmem0 as IG 0, 2 MiB books" lfsctl attach /dev/pmem0 --ig 0 --book-size 2M
t_run "attach /dev/pmem1 as IG 1, 2 MiB books" lfsctl attach /dev/pmem1 --ig 1 --book-size 2M
dev=$(lfsctl create mv 0:0-15)
t_like "$dev" '^/dev/lfs[0-9]+$' "shelf mv on 16 books of IG 0: $dev"
other=$(lfsctl create other 1:100)
t_run "mkfs.ext4" mkfs.ext4 -q -b 4096 "$dev"
t_run "mount -o dax" mount -o dax "$dev" $M
pattern 7 8M >$M/still

# Refusals, each naming the value, with nothing changed.
before=$(lfs_state)
refused() { # WHAT PATTERN ARGS...: lfsctl move ARGS fails, saying PATTERN
	local what=$1 want=$2 out
	shift 2
	out=$(lfsctl move "$@" 2>&1)
	t_ok "$([ $? -ne 0 ]; echo $?)" "move refused: $what"
	t_like "$out" "$want" "  and says so: $out"
}
refused "no such shelf" "no shelf 'nosuch'" nosuch 0 1:0
refused "index beyond the shelf" "book index 16 is beyond the 16 books" mv 16 1:0
refused "a book of the shelf itself" "book 0:3 is a book of shelf 'mv' already" mv 0 0:3
refused "a book of another shelf" "book 1:100 is in shelf 'other'" mv 0 1:100
refused "an IG not attached" "interleave group 7 is not attached" mv 0 7:0
refused "beyond the device" "beyond the end of interleave group 1" mv 0 1:99999
t_is "$(lfs_state)" "$before" "nothing changed by the refusals"
t_run "remove other" lfsctl remove other
t_time "set up, refusals"

# 2 MiB books: half of them moved under the writers (16 in the spike's
# runs, docs/MOVE.md; 8 keep the file's cost down).
start_writers $M $((4 << 20))
t_ok $? "writers started"
t_run "8 books moved to IG 1 one by one, mounted and written" move_all mv 8 1
stop_writers "2 MiB books"
t_is "$(lfsctl list --json mv | jq -c '.[0].map')" \
	"$(printf '"%s",' $(seq -f 1:%g 0 7) $(seq -f 0:%g 8 15) | sed 's/,$//; s/^/[/; s/$/]/')" \
	"the map holds IG 1's books, then IG 0's"
t_diag "stalls of the 2 MiB moves (us): $(stalls mv)"
t_diag "$(stall_parts mv)"
t_diag "$(dmesg | grep 'busy.*again')"
t_time "2 MiB moves"
t_run "the old books are free: zeroed" lfsctl zero 0:0-7
t_run "a MAP_SYNC file reads right after the zeroing" movemap --check $M/sync $((4 << 20))
t_run "a MAP_SHARED file reads right after the zeroing" movemap --check $M/shared $((4 << 20))
t_run "a file written before reads right" cmp <(pattern 7 8M) $M/still
# No DAX entry of mv still names an old book's page (page->mapping): else
# mapping them again in another shelf trips dax_associate_entry()'s WARN.
reuse=$(lfsctl create reuse 0:0-7)
mkdir -p /tmp/mnt2
t_run "the old books as a new shelf, mounted -o dax" \
	eval "mkfs.ext4 -q -b 4096 $reuse && mount -o dax $reuse /tmp/mnt2 && fallocate -l 8M /tmp/mnt2/f"
t_run "8 MiB of its file mapped and stored to" mapsync --touch /tmp/mnt2/f 8M
t_run "umount it" umount /tmp/mnt2
t_run "remove it" lfsctl remove reuse
t_run "umount" umount $M
t_run "fsck clean" fsck.ext4 -fn "$dev"
t_run "mount again" mount -o dax "$dev" $M
t_run "the MAP_SYNC file after a remount" movemap --check $M/sync $((4 << 20))
t_run "the file written before, after a remount" cmp <(pattern 7 8M) $M/still
t_run "umount" umount $M
t_run "remove mv" lfsctl remove mv
t_run "detach IG 0" lfsctl detach /dev/pmem0
t_run "detach IG 1" lfsctl detach /dev/pmem1

# 64 MiB books: the stall of a larger copy.
t_run "attach /dev/pmem0, 64 MiB books" lfsctl attach /dev/pmem0 --ig 0 --book-size 64M
t_run "attach /dev/pmem1, 64 MiB books" lfsctl attach /dev/pmem1 --ig 1 --book-size 64M
dev=$(lfsctl create big 0:0-1)
t_run "mkfs.ext4 and mount -o dax" eval "mkfs.ext4 -q -b 4096 $dev && mount -o dax $dev $M"
pattern 8 16M >$M/still
start_writers $M $((8 << 20))
t_ok $? "writers started"
t_run "a book of 64 MiB moved to IG 1, mounted and written" move_all big 1 1
stop_writers "64 MiB books"
t_diag "stalls of the 64 MiB moves (us): $(stalls big)"
t_diag "$(stall_parts big)"
t_run "the old book is free: zeroed" lfsctl zero 0:0
t_run "the MAP_SYNC file reads right" movemap --check $M/sync $((8 << 20))
t_run "the file written before reads right" cmp <(pattern 8 16M) $M/still
t_run "umount" umount $M
t_run "fsck clean" fsck.ext4 -fn "$dev"
t_time "64 MiB moves"

# A raw shelf: direct writes in flight wait at the move's gate.
raw=$(lfsctl create raw 0:4)
dd if=<(pattern 9 64M) of="$raw" bs=256k iflag=fullblock oflag=direct status=none &
dd_pid=$!
t_run "raw shelf's book moved under a direct writer" lfsctl move raw 0 1:4
wait $dd_pid
t_ok $? "the direct writer ended well"
t_run "the raw shelf reads its bytes" cmp <(pattern 9 64M) "$raw"
t_run "and they are on book 1:4" \
	cmp <(dd if=/dev/pmem1 bs=1M skip=$((4 * 64)) count=64 iflag=direct status=none) \
	<(pattern 9 64M)
t_diag "stall of the raw move (us): $(stall_parts raw)"

t_is "$(dmesg | grep -cE 'WARNING|BUG:|Oops|keeps DAX')" 0 "no kernel warning"
t_run "remove big" lfsctl remove big
t_run "remove raw" lfsctl remove raw
t_run "detach IG 0" lfsctl detach /dev/pmem0
t_run "detach IG 1" lfsctl detach /dev/pmem1
t_run "rmmod lfs" rmmod lfs
t_done
