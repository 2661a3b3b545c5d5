#!/bin/bash
# Guest side of bench/driver/run. One shelf layout over pmem0 and pmem1
# (64 MiB books alternating between them), measured four ways on the same
# memory: as /dev/lfsN (reads and writes through the fabric's DAX mapping,
# the default), as /dev/lfsN with every bio remapped (dax_io=0, "lfsr"), as a
# dm-linear device with the same table, and as the raw devices. In this emulation raw pmem devices differ in speed from
# each other (an artefact of TCG, not of the devices), so the raw baseline is
# both devices the shelf spreads its I/O over, pmem0 and pmem1, and each is
# also reported on its own.
#
# A cycle runs the five set-ups one after the other, in rotating order; each
# runs one fio process with the four workloads, one second each. Host load
# swings throughput over seconds, so each run also reports its median
# latency: a 4k I/O takes microseconds, far less than a host time slice, so
# most I/Os run undisturbed and the median shows what each stack costs.
set -u
. "$LFS_TOP/tests/driver/guest/lib.sh"
export PATH=$LFS_TOP/build/driver-bench:$PATH
CYCLES=${LFS_BENCH_CYCLES:-10}
BS_MB=64
out=$LFS_RESULTS/raw.txt
: >"$out"

insmod "$LFS_KO" || exit 1
modprobe dm-mod || exit 1

# Touch all fabric memory once: the first write to a page of a backing file
# costs the host an allocation, which must not land in any measurement.
for p in /dev/pmem0 /dev/pmem1; do
	dd if=/dev/zero of=$p bs=1M count=$(($(blockdev --getsize64 $p) >> 20)) oflag=direct \
		status=none || exit 1
done

nbooks=$(($(blockdev --getsize64 /dev/pmem1) / (BS_MB << 20)))
layout= table= n=0
for b in $(seq 0 $((nbooks - 1))); do
	for ig in 0 1; do
		layout+=${layout:+,}$ig:$b
		table+="$((n * BS_MB * 2048)) $((BS_MB * 2048)) linear /dev/pmem$ig $((b * BS_MB * 2048))"$'\n'
		n=$((n + 1))
	done
done
SPAN=$((nbooks * BS_MB - BS_MB)) # fits on a raw device too
echo "# $n books of $BS_MB MiB alternating pmem0/pmem1; fio psync direct=1 over $SPAN MiB," \
	"1 s per workload, $CYCLES cycles" >>"$out"

lfs_up() {
	lfsctl attach /dev/pmem0 --ig 0 --book-size ${BS_MB}M >/dev/null &&
		lfsctl attach /dev/pmem1 --ig 1 --book-size ${BS_MB}M >/dev/null &&
		lfsctl create bench "$layout"
}
lfs_down() { lfsctl remove bench && lfsctl detach /dev/pmem0 && lfsctl detach /dev/pmem1; }
dm_up() {
	printf '%s' "$table" | dmsetup create lfsbench >/dev/null &&
		echo /dev/dm-$(dmsetup info -c --noheadings -o minor lfsbench | tr -d ' ')
}
dm_down() { dmsetup remove lfsbench; }

# fio_run LABEL DEV: one line per workload, "fio LABEL WORKLOAD VALUE P50_US"
# with VALUE in IOPS for 4k and MiB/s for 1M.
fio_run() {
	fio --direct=1 --ioengine=psync --size=${SPAN}M --runtime=1 --time_based --stonewall \
		--filename="$2" --output-format=json \
		--name=randread-4k --rw=randread --bs=4k --name=randwrite-4k --rw=randwrite --bs=4k \
		--name=read-1M --rw=read --bs=1M --name=write-1M --rw=write --bs=1M 2>/dev/null |
		jq -r --arg l "$1" '.jobs[] | (if .read.io_bytes > 0 then .read else .write end) as $d |
			"fio \($l) \(.jobname) \(if (.jobname | test("4k")) then $d.iops else $d.bw_bytes / 1048576 end) \($d.clat_ns.percentile["50.000000"] / 1000)"'
}

run_lfs() { local d; d=$(lfs_up) && fio_run lfs "$d" && lfs_down; }
# the same shelf with every bio remapped to the fabric device (dax_io=0)
run_lfsr() {
	local d
	echo 0 >/sys/module/lfs/parameters/dax_io &&
		d=$(lfs_up) && fio_run lfsr "$d" && lfs_down &&
		echo 1 >/sys/module/lfs/parameters/dax_io
}
run_dm() { local d; d=$(dm_up) && fio_run dm "$d" && dm_down; }
run_raw0() { fio_run raw0 /dev/pmem0; }
run_raw1() { fio_run raw1 /dev/pmem1; }

run_raw0 >/dev/null # warm up
orders=("lfs lfsr dm raw0 raw1" "lfsr dm raw0 raw1 lfs" "dm raw0 raw1 lfs lfsr"
	"raw0 raw1 lfs lfsr dm" "raw1 lfs lfsr dm raw0")
for c in $(seq "$CYCLES"); do
	for s in ${orders[$(((c - 1) % 5))]}; do
		run_$s | sed "s/^fio /fio $c /" >>"$out" || exit 1
	done
done

# 4 KiB random writes in alternating batches (altwrite): 1,000 writes to the
# shelf, then to pmem0, then to pmem1, 600 rounds, so that all three see
# the same host load; the median batch resolves about 1% where fio's
# one-second runs resolve about 3%.
d=$(lfs_up) && altwrite $SPAN 1000 "${LFS_BENCH_ALT_ROUNDS:-600}" "$d" /dev/pmem0 /dev/pmem1 |
	sed "s|^altwrite $d |altwrite lfs |; s|^altwrite /dev/pmem|altwrite raw|" >>"$out" && lfs_down || exit 1

# DAX mmap copy on ext4 -o dax: a 128 MiB file, 4 passes, on the shelf and
# on each raw device, in rotating order.
M=/tmp/mnt
mkdir -p $M
mmap_on() { # LABEL DEV
	mkfs.ext4 -q -F -b 4096 "$2" && mount -o dax "$2" $M && fallocate -l 128M $M/f &&
		echo "mmap $c $1 $(mmapcopy $M/f 128M 8)" >>"$out"
	umount $M
}
mmap_lfs() { local d; d=$(lfs_up) && mmap_on lfs "$d" && lfs_down; }
mmap_raw0() { mmap_on raw0 /dev/pmem0; }
mmap_raw1() { mmap_on raw1 /dev/pmem1; }
morders=("lfs raw0 raw1" "raw0 raw1 lfs" "raw1 lfs raw0")
for c in $(seq "${LFS_BENCH_MMAP_CYCLES:-6}"); do
	for s in ${morders[$(((c - 1) % 3))]}; do
		mmap_$s || exit 1
	done
done
cat "$out"
