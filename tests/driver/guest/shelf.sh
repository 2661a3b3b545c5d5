#!/bin/bash
# Guest side of tests/driver/shelf.t: the user's story of shelves over two
# fabric devices, from attach to rmmod. 16 MiB books, 1 GiB devices.
# Poisoned memory at the end (poison.sh).
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
M=/tmp/mnt
mkdir -p $M
BS=16
BIG=24M # more than one book

t_run "insmod lfs.ko" insmod "$LFS_KO"
t_run "attach /dev/pmem0 as IG 0" lfsctl attach /dev/pmem0 --ig 0 --book-size ${BS}M
t_run "attach /dev/pmem1 as IG 1" lfsctl attach /dev/pmem1 --ig 1 --book-size ${BS}M
fab=$(lfsctl fabric --json)
t_is "$(jq -c '[.[] | [.ig, .path, .book_size, .dax, .numa_node]]' <<<"$fab")" \
	"[[0,\"/dev/pmem0\",$((BS << 20)),true,0],[1,\"/dev/pmem1\",$((BS << 20)),true,1]]" \
	"fabric --json lists both devices"
t_is "$(jq '.[0].books' <<<"$fab")" $(($(blockdev --getsize64 /dev/pmem0) / (BS << 20))) \
	"IG 0 holds device size / book size books"
t_fails "a second attach of /dev/pmem0 is refused" lfsctl attach /dev/pmem0 --ig 5 --book-size ${BS}M
t_fails "mounting an attached fabric device is refused" mount /dev/pmem0 $M

# A shelf interleaving both devices.
books=$(for b in $(seq 0 9); do printf '0:%d,1:%d,' $b $b; done)
books=${books%,}
dev=$(lfsctl create data $books)
t_like "$dev" '^/dev/lfs[0-9]+$' "create prints the device path ($dev)"
disk=${dev#/dev/}
sys=/sys/block/$disk/lfs
t_ok "$([ -b "$dev" ]; echo $?)" "$dev is a block device"
t_is "$(cat $sys/name)" data "sysfs name"
t_is "$(cat $sys/uuid)" "$(lfsctl list --json | jq -r '.[0].uuid')" "sysfs uuid matches list --json"
t_is "$(cat $sys/book_size)" $((BS << 20)) "sysfs book_size"
t_is "$(cat $sys/dax)" 1 "sysfs dax"
t_is "$(paste -sd, $sys/books)" "$books" "sysfs books in shelf order"
t_is "$(cat /sys/block/$disk/queue/chunk_sectors)" $((BS << 11)) "chunk_sectors is the book size"
t_is "$(cat /sys/block/$disk/queue/dax)" 1 "queue is DAX-capable"
t_is "$(blockdev --getsize64 $dev)" $((20 * BS << 20)) "capacity is 20 books"
t_fails "rmmod is refused while a shelf exists" rmmod lfs
t_time "set up"

# ext4 with DAX; a file larger than a book survives a remount.
t_run "mkfs.ext4" mkfs.ext4 -q -b 4096 $dev
t_run "mount -o dax" mount -o dax $dev $M
t_like "$(grep " $M " /proc/mounts)" 'dax' "mounted with dax"
pattern 1 $BIG >$M/big
t_run "$BIG file written (more than one book)" cmp <(pattern 1 $BIG) $M/big
t_run "MAP_SHARED_VALIDATE|MAP_SYNC mapping allowed" mapsync $M/big
t_time "ext4"

before=$(lfs_state)
out=$(lfsctl remove data 2>&1)
t_ok "$([ $? -ne 0 ]; echo $?)" "remove refused while mounted"
t_like "$out" "open or mounted" "remove error explains why: $out"
out=$(lfsctl shrink data --books 2 2>&1)
t_ok "$([ $? -ne 0 ]; echo $?)" "shrink refused while mounted"
t_like "$out" "open or mounted" "shrink error explains why: $out"
t_is "$(lfs_state)" "$before" "nothing changed"
t_run "data intact after the refusals" cmp <(pattern 1 $BIG) $M/big

# Grow while mounted, with DAX faults and raw reads in flight.
fallocate -l ${BS}M $M/bg
( for i in 1 2 3; do mapsync --touch $M/bg ${BS}M || exit 1; done ) &
faults=$!
dd if=$dev of=/dev/null bs=1M count=$((20 * BS)) iflag=direct status=none &
reads=$!
t_run "extend by four books while mounted" lfsctl extend data 0:10-11,1:10-11
t_is "$(blockdev --getsize64 $dev)" $((24 * BS << 20)) "capacity is 24 books"
t_is "$(tail -n 4 $sys/books | paste -sd,)" "0:10,0:11,1:10,1:11" "new books at the tail"
blocks=$(stat -f -c %b $M)
t_run "resize2fs grows the mounted filesystem" resize2fs $dev
t_ok "$([ "$(stat -f -c %b $M)" -gt "$blocks" ]; echo $?)" "filesystem grew ($blocks -> $(stat -f -c %b $M) blocks)"
wait $faults
t_ok $? "DAX faults during the extend completed"
wait $reads
t_ok $? "raw reads during the extend completed"
t_run "data intact after the grow" cmp <(pattern 1 $BIG) $M/big
t_run "umount" umount $M
t_run "fsck clean" fsck.ext4 -fn $dev
t_run "mount again" mount -o dax $dev $M
t_run "data intact after remount" cmp <(pattern 1 $BIG) $M/big
umount $M
t_time "grow"

# PMD faults over 256 MiB of a fresh filesystem, on the shelf and (below) on
# raw pmem. Books start 2 MiB-aligned on the memory.
tr=$(tracing)
pmd_count() { # DEVICE: PMD faults (not fallbacks) touching a 256 MiB file
	mkfs.ext4 -q -b 4096 "$1" && mount -o dax "$1" $M && fallocate -l 256M $M/pmd || return 1
	echo 0 >$tr/tracing_on
	echo >$tr/trace
	echo 1 >$tr/events/fs_dax/dax_pmd_fault_done/enable
	echo 1 >$tr/tracing_on
	mapsync --touch $M/pmd 256M || return 1
	echo 0 >$tr/tracing_on
	echo 0 >$tr/events/fs_dax/dax_pmd_fault_done/enable
	umount $M
	grep dax_pmd_fault_done $tr/trace | grep -vc FALLBACK
}
shelf_pmd=$(pmd_count $dev)
t_time "PMD on the shelf"

# Raw I/O across book boundaries (3 MiB writes straddle them).
raw=$(lfsctl create raw 1:20,0:20,1:21,0:21)
t_like "$raw" '^/dev/lfs[0-9]+$' "second shelf: $raw"
t_run "$((4 * BS)) MiB written in 3 MiB direct writes" \
	dd if=<(pattern 3 $((4 * BS))M) of=$raw bs=3M iflag=fullblock oflag=direct status=none
t_run "read back equal" cmp <(pattern 3 $((4 * BS))M) $raw
# Reads and writes go through the fabric's DAX mapping (module parameter
# dax_io=1, the default) or are remapped to the fabric's block device
# (dax_io=0): each path must read what the other wrote, at any alignment.
dio=/sys/module/lfs/parameters/dax_io
t_is "$(cat $dio)" Y "dax_io is on by default"
echo 0 >$dio
t_run "remapped reads (dax_io=0) see what DAX-path writes wrote" cmp <(pattern 3 $((4 * BS))M) $raw
t_run "remapped 3 MiB writes of another pattern" \
	dd if=<(pattern 4 $((4 * BS))M) of=$raw bs=3M iflag=fullblock oflag=direct status=none
echo 1 >$dio
t_run "DAX-path reads (dax_io=1) see what remapped writes wrote" cmp <(pattern 4 $((4 * BS))M) $raw
# 1 KiB at sector offset 1 (not page-aligned) straddling each book boundary,
# on the DAX path; the remap path reads it back.
for i in 1 2 3; do
	dd if=<(pattern 5 1K $((i * BS))M) of=$raw bs=512 seek=$((i * BS * 2048 - 1)) count=2 \
		iflag=fullblock oflag=direct conv=notrunc status=none || echo "dd at book $i failed"
done >/tmp/unaligned.err 2>&1
t_is "$(cat /tmp/unaligned.err)" "" "unaligned 1 KiB DAX-path writes across boundaries"
echo 0 >$dio
t_run "remapped read of the unaligned writes" cmp <(for i in 1 2 3; do pattern 5 1K $((i * BS))M; done) \
	<(for i in 1 2 3; do dd if=$raw bs=512 skip=$((i * BS * 2048 - 1)) count=2 iflag=direct status=none; done)
echo 1 >$dio
t_run "write pattern 3 again (DAX path)" \
	dd if=<(pattern 3 $((4 * BS))M) of=$raw bs=3M iflag=fullblock oflag=direct status=none
exec 3<$raw
t_fails "shrink refused while open" lfsctl shrink raw --books 3
exec 3<&-
t_run "shrink to 3 books once closed" lfsctl shrink raw --books 3
t_is "$(blockdev --getsize64 $raw)" $((3 * BS << 20)) "capacity is 3 books"
t_run "first 3 books intact after shrink" cmp <(pattern 3 $((3 * BS))M) $raw
sum0=$(cmp <(pattern 3 $((3 * BS))M) $raw && echo same)
t_like "$(lfsctl zero 0:0 2>&1)" "0:0.*(not zeroed|shelf)" "zero skips a book in a shelf, saying so"
t_is "$(cmp <(pattern 3 $((3 * BS))M) $raw && echo same)" "$sum0" "  and the shelf's data is intact"
before_check=$(lfsctl list --json)
# check: which books read as zeroes, by reading only. 0:21, left by the
# shrink, holds pattern 3 until zeroed; 1:40, 0:40 and 0:41 were never
# written (the fabric files start as zeroes) until 0:41 gets one byte at its
# very end; 0:0 is in a shelf.
t_is "$(lfsctl check 0:0,0:21,1:40,0:40,0:41)" "$(printf '1:40\n0:40\n0:41')" \
	"check: never-written 1:40, 0:40, 0:41 read as zeroes; 0:0 (in a shelf) and 0:21 (data) do not"
t_run "zero the book freed by shrink" lfsctl zero 0:21
t_is "$(lfsctl check 0:21)" "0:21" "check: once zeroed, 0:21 reads as zeroes"
printf '\001' | dd of=/dev/pmem0 bs=1 seek=$((42 * BS * 1048576 - 1)) conv=notrunc,fsync status=none
t_is "$(lfsctl check 0:40,0:41)" "0:40" "one byte at the last address of 0:41 makes it not zero"
t_is "$(cmp <(lfsctl list --json) <(echo "$before_check"); echo $?)" 0 "check changed no shelf"
t_run "0:41's byte is still there (check wrote nothing)" \
	test "$(dd if=/dev/pmem0 bs=1 skip=$((42 * BS * 1048576 - 1)) count=1 status=none | od -An -tu1 | tr -d ' ')" = 1
t_like "$(lfsctl check 0:$(jq ".[0].books" <<<"$fab") 2>&1)" "beyond the end of interleave group 0" "check beyond the device: named"
# A long check (IG 1's books from 30 on, free, read 6 times: some 3 GiB)
# does not hold up other requests: the family runs requests in parallel and
# the check takes lfs_lock 64 pages at a time. Count the lists that complete
# while it runs; with requests serialised, two at most could (one begun
# before the check and one that ends after it).
last1=$(($(jq '.[1].books' <<<"$fab") - 1))
span=1:30-$last1
lfsctl check "$span,$span,$span,$span,$span,$span" >/tmp/long.check &
cpid=$!
lists=0
while kill -0 $cpid 2>/dev/null; do
	lfsctl list >/dev/null && lists=$((lists + 1))
done
wait $cpid
t_is "$?:$(wc -l </tmp/long.check)" "0:$((6 * (last1 - 29)))" "the long check read $((6 * (last1 - 29))) books, all zeroes"
t_ok "$([ "$lists" -ge 5 ]; echo $?)" "$lists lists completed while it ran"
# Removing a shelf that was mapped. A MAP_SYNC mapping of a file keeps the
# filesystem (lazily unmounted) and so the shelf open: remove is refused.
# Once the mapping ends the filesystem lets go, and remove tears the DAX
# device down with no page of it still referenced (from 6.15 fs-dax pages
# are refcounted folios; a leak shows as a WARN, which fails the run).
mapped=$(lfsctl create mapped 0:34,1:34,0:35,1:35)
t_like "$mapped" '^/dev/lfs[0-9]+$' "shelf 'mapped' for a held mapping: $mapped"
t_run "ext4 -o dax on it with a 32 MiB file" \
	sh -c "mkfs.ext4 -q -b 4096 $mapped && mount -o dax $mapped $M && fallocate -l 32M $M/held"
rm -f /tmp/hold.in && mkfifo /tmp/hold.in
mapsync --hold $M/held 32M </tmp/hold.in >/tmp/hold.out 2>&1 &
hpid=$!
exec 6>/tmp/hold.in
t_run "a MAP_SYNC mapping of the whole file is held" wait_for 60 grep -q '^mapped 8192 pages' /tmp/hold.out
t_run "lazy umount while it is mapped" umount -l $M
out=$(lfsctl remove mapped 2>&1)
t_ok "$([ $? -ne 0 ]; echo $?)" "remove refused while the mapping holds the filesystem"
t_like "$out" "open or mounted" "  and says why: $out"
exec 6>&-
wait $hpid
t_is "$?:$(tail -n 1 /tmp/hold.out)" "0:all 8192 pages intact" "the mapping kept its data until it ended"
mapped_open() { [ "$(lfsctl list --json mapped | jq '.[0].open')" = 0 ]; }
t_run "with the mapping gone the filesystem closes the shelf" wait_for 60 mapped_open
t_run "remove the shelf that was mapped" lfsctl remove mapped
t_run "its books make a new shelf at once" lfsctl create remapped 0:34,1:34,0:35,1:35
t_run "remove that one too" lfsctl remove remapped
t_run "remove raw" lfsctl remove raw
t_run "remove data" lfsctl remove data
t_is "$(lfsctl list --json)" "[]" "no shelves left"
# Remove answers before the kernel has deleted the disk (lfs_shelf_reap in
# driver/shelf.c): the name and the books are free at once.
old=$(lfsctl create quick 0:30) && lfsctl remove quick
t_ok $? "create and remove quick on book 0:30"
new=$(lfsctl create quick 0:30)
t_ok $? "quick again at once on the same book ($old, then $new)"
t_run "write pattern 5 through the new quick" \
	dd if=<(pattern 5 ${BS}M) of="$new" bs=1M oflag=direct status=none
t_run "pattern 5 reads back from the new quick" cmp <(pattern 5 ${BS}M) "$new"
t_run "remove quick" lfsctl remove quick
# zeroed: set by a create that asserts scrubbed books, cleared for good by
# the first open for writing or an extend; udev skips its probe while set.
zs() { cat /sys/block/${1#/dev/}/lfs/zeroed; }
z=$(lfsctl create fresh 0:31 --zeroed)
t_is "$(zs "$z")" 1 "create --zeroed: sysfs zeroed is 1"
t_is "$(lfsctl list --json fresh | jq -c '[.[].zeroed]')" "[true]" "list --json shows zeroed"
dd if="$z" of=/dev/null bs=1M count=1 iflag=direct status=none
t_is "$(zs "$z")" 1 "a read-only open keeps it"
exec 4<>"$z"
exec 4>&-
t_is "$(zs "$z")" 0 "an open for writing clears it, even with nothing written"
t_is "$(lfsctl list --json fresh | jq -c '[.[].zeroed]')" "[false]" "list --json follows"
exec 4<"$z"
t_is "$(zs "$z")" 0 "and it stays cleared"
exec 4<&-
t_run "remove fresh" lfsctl remove fresh
z=$(lfsctl create fresh 0:31)
t_is "$(zs "$z")" 0 "create without --zeroed: 0"
t_run "remove fresh again" lfsctl remove fresh
z=$(lfsctl create fresh 0:31 --zeroed) && lfsctl extend fresh 0:32
t_is "$(zs "$z")" 0 "extend clears it (the new books are not known to be zero)"
t_run "remove fresh a third time" lfsctl remove fresh
t_is "$(lfsctl list --json)" "[]" "no shelves left again"
t_run "detach /dev/pmem0" lfsctl detach /dev/pmem0
t_run "detach /dev/pmem1" lfsctl detach /dev/pmem1
t_is "$(lfsctl fabric --json)" "[]" "no fabric devices left"
t_time "raw"

# Each book's bytes are on its fabric device at the mapped offset.
i=0
for b in 1:20 0:20 1:21; do
	ig=${b%:*} n=${b#*:}
	t_run "book $b holds shelf bytes $((i * BS))M-$(((i + 1) * BS))M" \
		cmp <(dd if=/dev/pmem$ig bs=1M skip=$((n * BS)) count=$BS iflag=direct status=none) \
		<(pattern 3 ${BS}M $((i * BS))M)
	i=$((i + 1))
done
t_run "zeroed book 0:21 reads back as zeroes" \
	cmp <(dd if=/dev/pmem0 bs=1M skip=$((21 * BS)) count=$BS iflag=direct status=none) \
	<(head -c $((BS << 20)) /dev/zero)
t_time "fabric check"

raw_pmd=$(pmd_count /dev/pmem1)
t_diag "PMD faults over 256 MiB: shelf $shelf_pmd, raw pmem $raw_pmd (of 128)"
t_ok "$([ "${shelf_pmd:-0}" -ge "${raw_pmd:-1}" ] && [ "$shelf_pmd" -gt 0 ]; echo $?)" \
	"PMD faults on the shelf ($shelf_pmd) at least as many as on raw pmem ($raw_pmd)"
t_time "PMD on raw pmem"

. "$LFS_TOP/tests/driver/guest/poison.sh"

t_is "$(ls /sys/block | grep -c '^lfs')" 0 "no lfs disks left"
t_run "rmmod lfs" rmmod lfs
t_is "$(grep -cw ^lfs /proc/modules)" 0 "module gone"
t_done
