#!/bin/bash
# Guest side of tests/driver/bigbooks.t: production-sized 8 GiB books. Two
# fabric devices of a little more than 8 GiB (sparse files on the host) give
# one book each; a shelf of both is 16 GiB. Raw data at its start, across
# the boundary between the books (byte 2^33, past any 32-bit offset) and at
# its end, found at the right place of each device; then ext4 -o dax over
# the whole shelf, a file spanning both books, MAP_SYNC, a remount.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
M=/tmp/mnt
mkdir -p $M
G8=$((8 << 30))
K512=$((512 << 10))
MB=$((1 << 20))

t_run "insmod lfs.ko" insmod "$LFS_KO"
for i in 0 1; do
	t_run "attach /dev/pmem$i ($(blockdev --getsize64 /dev/pmem$i) bytes) as IG $i with 8G books" \
		lfsctl attach /dev/pmem$i --ig $i --book-size 8G
done
t_is "$(lfsctl fabric --json | jq -c '[.[] | [.ig, .book_size, .books, .dax]]')" \
	"[[0,$G8,1,true],[1,$G8,1,true]]" "fabric: one DAX book of 8 GiB on each device"
dev=$(lfsctl create big 0:0,1:0)
t_like "$dev" '^/dev/lfs[0-9]+$' "create big 0:0,1:0: $dev"
sys=/sys/block/${dev#/dev/}
t_is "$(blockdev --getsize64 "$dev") $(cat $sys/lfs/book_size) $(cat $sys/lfs/dax) $(cat $sys/queue/chunk_sectors)" \
	"$((2 * G8)) $G8 1 $((G8 >> 9))" "16 GiB, book size 8 GiB, DAX, chunk_sectors one book"
t_time "set up"

# The expected bytes, once: 1 MiB each for the start, the boundary, the end.
for i in 1 2 3; do pattern $i $MB >/tmp/p$i; done
# put FILE OFFSET: FILE at byte OFFSET of the shelf, direct I/O
put() { dd if="$1" of="$dev" bs=$K512 seek="$2" oflag=direct,seek_bytes status=none; }
t_run "write 1 MiB at the start" put /tmp/p1 0
t_run "write 1 MiB across the boundary of the books (byte 8 GiB - 512 KiB)" put /tmp/p2 $((G8 - K512))
t_run "write the last 1 MiB" put /tmp/p3 $((2 * G8 - MB))
out=$(dd if=/tmp/p1 of="$dev" bs=4096 count=1 seek=$((2 * G8 / 4096)) oflag=direct status=none 2>&1)
t_like "$out" "No space left on device" "a write past the end fails: $out"
echo 3 >/proc/sys/vm/drop_caches
# same FILE DEV OFFSET [BYTES]: BYTES (default all) of FILE equal DEV's at OFFSET
same() { cmp -n "${4:-$MB}" -i "0:$3" "$1" "$2"; }
t_run "  the start reads back" same /tmp/p1 "$dev" 0
t_run "  the boundary reads back" same /tmp/p2 "$dev" $((G8 - K512))
t_run "  the end reads back" same /tmp/p3 "$dev" $((2 * G8 - MB))
t_run "on /dev/pmem0: the start at byte 0" same /tmp/p1 /dev/pmem0 0
t_run "  the boundary's first half at the end of its book (8 GiB - 512 KiB)" \
	same /tmp/p2 /dev/pmem0 $((G8 - K512)) $K512
t_run "on /dev/pmem1: the boundary's second half at byte 0" \
	cmp -n $K512 -i $K512:0 /tmp/p2 /dev/pmem1
t_run "  the end at the end of its book" same /tmp/p3 /dev/pmem1 $((G8 - MB))
t_time "raw I/O"

# ext4 over both books: few inodes and a small journal keep mkfs short; no
# background inode table zeroing.
t_run "mkfs.ext4 on 16 GiB" mkfs.ext4 -q -F -b 4096 -N 1024 -J size=4 -E nodiscard "$dev"
t_run "mount -o dax" mount -o dax,noinit_itable "$dev" $M
t_like "$(grep " $M " /proc/mounts)" 'dax' "mounted with dax"
t_run "fallocate a 15 GiB file (both books)" fallocate -l 15G $M/f
fput() { dd if="$1" of=$M/f bs=$K512 seek="$2" oflag=seek_bytes conv=notrunc,fsync status=none; }
t_run "write 1 MiB at file offsets 0, 8 GiB - 512 KiB and 15 GiB - 1 MiB" eval \
	"fput /tmp/p1 0 && fput /tmp/p2 $((G8 - K512)) && fput /tmp/p3 $(((15 << 30) - MB))"
t_run "MAP_SHARED_VALIDATE|MAP_SYNC mapping of it allowed" mapsync $M/f
# The highest physical block of any extent: ext4 may place the file's last
# logical extent low on the disk, so the last line of filefrag is not it.
last=$(filefrag -v $M/f | awk '$1 ~ /^[0-9]+:$/ { sub(/:$/, "", $5); if ($5 + 0 > m) m = $5 + 0 } END { print m + 0 }')
t_ok "$([ "$last" -ge $((G8 / 4096)) ]; echo $?)" "  its blocks reach the second book (highest physical block $last)"
t_run "umount" umount $M
t_run "mount -o dax again" mount -o dax,noinit_itable "$dev" $M
t_is "$(stat -c %s $M/f)" $((15 << 30)) "the file is 15 GiB"
t_run "  its bytes at 0 are intact (the first page mapped with MAP_SYNC)" same /tmp/p1 $M/f 0
t_run "  at 8 GiB - 512 KiB" same /tmp/p2 $M/f $((G8 - K512))
t_run "  at 15 GiB - 1 MiB" same /tmp/p3 $M/f $(((15 << 30) - MB))
t_run "umount" umount $M
t_time "ext4"

t_run "remove the shelf" lfsctl remove big
t_run "detach both devices" eval "lfsctl detach /dev/pmem0 && lfsctl detach /dev/pmem1"
t_run "rmmod lfs" rmmod lfs
t_done
