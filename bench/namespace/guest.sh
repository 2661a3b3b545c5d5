#!/bin/bash
# Guest side of bench/namespace/run: the data path of the Library File
# System against raw pmem and ext4 -o dax on /dev/lfsN, on the same two
# fabric devices (pmem0, pmem1) and the same layout as bench/driver (30
# books of 64 MiB alternating between them). The filesystem is served by
# the test upcall server (tests/namespace/upcalld.c: no librarian, its
# default policy puts book k on IG k mod 2); the data path never leaves the
# kernel, so the server does not matter once the file is open.
#   fio: psync, direct=1, 4k random read/write, 1 MiB sequential read/write,
#        1 s each over SPAN MiB; set-ups: the /lfs file (lfsfile), a file of
#        ext4 -o dax on the shelf written once first (ext4: no unwritten
#        extents to convert), /dev/pmem0 and /dev/pmem1 (raw);
#   mmap copy: build/driver-bench/mmapcopy on a 128 MiB file: /lfs itself,
#        ext4 -o dax on the shelf, ext4 -o dax on each raw device.
export PATH=$LFS_TOP/lvmish/lfsctl:$LFS_TOP/build/driver-bench:$LFS_TOP/build/tests:$PATH
CYCLES=${LFS_BENCH_CYCLES:-10}
BS_MB=64
out=$LFS_RESULTS/raw.txt
: >"$out"
insmod "$LFS_KO" || exit 1
for p in /dev/pmem0 /dev/pmem1; do
	dd if=/dev/zero of=$p bs=1M count=$(($(blockdev --getsize64 $p) >> 20)) oflag=direct \
		status=none || exit 1
done
nbooks=$(($(blockdev --getsize64 /dev/pmem1) / (BS_MB << 20)))
NB=$((nbooks * 2)) layout=
for b in $(seq 0 $((nbooks - 1))); do layout+=${layout:+,}0:$b,1:$b; done
SPAN=$((nbooks * BS_MB - BS_MB))
echo "# $NB books of $BS_MB MiB alternating pmem0/pmem1; fio psync direct=1 over $SPAN MiB, 1 s per workload, $CYCLES cycles" >>"$out"
L=/tmp/lfs M=/tmp/mnt
mkdir -p $L $M

attach() {
	lfsctl attach /dev/pmem0 --ig 0 --book-size ${BS_MB}M >/dev/null &&
		lfsctl attach /dev/pmem1 --ig 1 --book-size ${BS_MB}M >/dev/null
}
detach() { lfsctl detach /dev/pmem0 && lfsctl detach /dev/pmem1; }
# the /lfs file of NB books, served by upcalld
file_up() {
	attach || return 1
	rm -f /tmp/up.state
	upcalld --state /tmp/up.state >/tmp/upcalld.out 2>&1 &
	echo $! >/tmp/up.pid
	# a poll with a bound, not a pause: a loaded TCG guest may take seconds
	for _ in $(seq 600); do grep -q ready /tmp/upcalld.out && break; sleep 0.1; done
	grep -q ready /tmp/upcalld.out || { echo "guest.sh: upcalld not ready after 60 s" >&2; return 1; }
	mount -t lfs lfs $L && truncate -s $((NB * BS_MB))M $L/bench &&
		[ "$(getfattr --absolute-names -n user.LFS.Interleave --only-values $L/bench | cut -c1-7)" = 0,1,0,1 ] ||
		{ echo "guest.sh: the /lfs file did not come up" >&2; return 1; }
}
file_down() {
	local rc=0
	rm -f $L/bench && umount $L && kill "$(cat /tmp/up.pid)" && wait "$(cat /tmp/up.pid)" 2>/dev/null || rc=1
	detach && return $rc
}
shelf_up() { attach && lfsctl create bench "$layout" >/dev/null && echo /dev/lfs0; }
shelf_down() { lfsctl remove bench && detach; }

fio_run() { # LABEL FILE
	fio --direct=1 --ioengine=psync --size=${SPAN}M --runtime=1 --time_based --stonewall \
		--filename="$2" --output-format=json \
		--name=randread-4k --rw=randread --bs=4k --name=randwrite-4k --rw=randwrite --bs=4k \
		--name=read-1M --rw=read --bs=1M --name=write-1M --rw=write --bs=1M 2>/dev/null |
		jq -r --arg l "$1" '.jobs[] | (if .read.io_bytes > 0 then .read else .write end) as $d |
			"fio \($l) \(.jobname) \(if (.jobname | test("4k")) then $d.iops else $d.bw_bytes / 1048576 end) \($d.clat_ns.percentile["50.000000"] / 1000)"'
}
run_lfsfile() { file_up && fio_run lfsfile $L/bench && file_down; }
run_ext4() {
	local d
	d=$(shelf_up) && mkfs.ext4 -q -F -b 4096 "$d" && mount -o dax "$d" $M &&
		dd if=/dev/zero of=$M/f bs=1M count=$SPAN oflag=direct status=none &&
		fio_run ext4 $M/f && umount $M && shelf_down
}
run_raw0() { fio_run raw0 /dev/pmem0; }
run_raw1() { fio_run raw1 /dev/pmem1; }

run_raw0 >/dev/null # warm up
orders=("lfsfile ext4 raw0 raw1" "ext4 raw0 raw1 lfsfile" "raw0 raw1 lfsfile ext4" "raw1 lfsfile ext4 raw0")
for c in $(seq "$CYCLES"); do
	for s in ${orders[$(((c - 1) % 4))]}; do
		run_$s | sed "s/^fio /fio $c /" >>"$out" || exit 1
	done
done

mmap_line() { # LABEL FILE: one "mmap" line, or a failure that names the setup
	local r
	r=$(mmapcopy "$2" 128M 8) && [[ $r =~ ^[0-9.]+\ [0-9.]+$ ]] ||
		{ echo "guest.sh: mmapcopy on $1 ($2) failed: '$r'" >&2; return 1; }
	echo "mmap $c $1 $r" >>"$out"
}
mmap_ext4() { # LABEL DEV
	local rc=1
	mkfs.ext4 -q -F -b 4096 "$2" && mount -o dax "$2" $M && fallocate -l 128M $M/f &&
		mmap_line "$1" $M/f && rc=0
	umount $M && return $rc
}
mmap_lfsfile() {
	local rc=1
	file_up && mmap_line lfsfile $L/bench && rc=0
	file_down && return $rc
}
mmap_ext4s() { local d; d=$(shelf_up) && mmap_ext4 ext4 "$d" && shelf_down; }
mmap_raw0() { mmap_ext4 raw0 /dev/pmem0; }
mmap_raw1() { mmap_ext4 raw1 /dev/pmem1; }
morders=("lfsfile ext4s raw0 raw1" "ext4s raw0 raw1 lfsfile" "raw0 raw1 lfsfile ext4s" "raw1 lfsfile ext4s raw0")
for c in $(seq "${LFS_BENCH_MMAP_CYCLES:-6}"); do
	for s in ${morders[$(((c - 1) % 4))]}; do
		mmap_$s || exit 1
	done
done
cat "$out"
