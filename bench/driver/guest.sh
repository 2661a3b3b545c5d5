#!/bin/bash
# Guest side of bench/driver/run: fio on /dev/lfsN vs raw /dev/pmem0 vs a
# dm-linear device with the same book layout, then DAX mmap copy on ext4-dax
# over the shelf vs over raw pmem. Devices alternate within each repetition
# so that drift in the emulation hits all three alike.
set -u
. "$LFS_TOP/tests/driver/guest/lib.sh"
export PATH=$LFS_TOP/build/driver-bench:$PATH
REPS=${LFS_BENCH_REPS:-5}
RUNTIME=${LFS_BENCH_RUNTIME:-4}
BS_MB=64
out=$LFS_RESULTS/raw.txt
: >"$out"

insmod "$LFS_TOP/driver/lfs.ko" || exit 1
modprobe dm-mod || exit 1
nbooks=$(($(blockdev --getsize64 /dev/pmem1) / (BS_MB << 20)))
layout= table= i=0
for b in $(seq 0 $((nbooks - 1))); do
	for ig in 0 1; do
		layout+=${layout:+,}$ig:$b
		table+="$((i * BS_MB * 2048)) $((BS_MB * 2048)) linear /dev/pmem$ig $((b * BS_MB * 2048))"$'\n'
		i=$((i + 1))
	done
done
echo "# $i books of $BS_MB MiB alternating pmem0/pmem1" >>"$out"

lfs_up() {
	lfsctl attach /dev/pmem0 --ig 0 --book-size ${BS_MB}M &&
		lfsctl attach /dev/pmem1 --ig 1 --book-size ${BS_MB}M &&
		lfsctl create bench "$layout"
}
lfs_down() {
	lfsctl remove bench && lfsctl detach /dev/pmem0 && lfsctl detach /dev/pmem1
}
dm_up() {
	printf '%s' "$table" | dmsetup create lfsbench >/dev/null &&
		echo /dev/dm-$(dmsetup info -c --noheadings -o minor lfsbench | tr -d ' ')
}
dm_down() { dmsetup remove lfsbench; }

# fio_one DEV NAME RW BS JOBS -> IOPS or MiB/s
fio_one() {
	local dev=$1 rw=$3 bs=$4 jobs=$5 key
	case $rw in *read) key=read ;; *) key=write ;; esac
	fio --name=$2 --filename="$dev" --direct=1 --ioengine=psync --rw="$rw" --bs="$bs" \
		--size=1G --numjobs="$jobs" --group_reporting --runtime="$RUNTIME" --time_based \
		--ramp_time=1 --output-format=json 2>/dev/null |
		jq -r --arg k "$key" --arg bs "$bs" \
			'.jobs[0][$k] | if $bs == "4k" then .iops else .bw_bytes / 1048576 end'
}

WORKLOADS="randread:4k:1 randread:4k:2 randwrite:4k:1 read:1M:1 write:1M:1"
run_fio() { # LABEL DEV
	local w rw bs jobs
	for w in $WORKLOADS; do
		IFS=: read -r rw bs jobs <<<"$w"
		echo "fio $1 $rw-$bs-j$jobs $(fio_one "$2" "$1" "$rw" "$bs" "$jobs")" >>"$out"
	done
}

# Touch all fabric memory once: the first write to a page of a backing file
# costs the host an allocation, which must not land in any measurement.
for p in /dev/pmem0 /dev/pmem1; do
	dd if=/dev/zero of=$p bs=1M count=$(($(blockdev --getsize64 $p) >> 20)) oflag=direct \
		status=none || exit 1
done
# Warm up: the first runs after boot are much slower.
lfs_up >/dev/null || exit 1
fio_one /dev/lfs0 warm read 1M 1 >/dev/null
fio_one /dev/lfs0 warm randread 4k 1 >/dev/null
lfs_down

bench_lfs() { dev=$(lfs_up) && run_fio lfs "$dev" && lfs_down; }
bench_dm() { dev=$(dm_up) && run_fio dm "$dev" && dm_down; }
bench_raw() { run_fio raw /dev/pmem0; }
# The order rotates so that no device always runs first or last.
orders=("lfs dm raw" "dm raw lfs" "raw lfs dm")
for rep in $(seq "$REPS"); do
	for d in ${orders[$(((rep - 1) % 3))]}; do
		bench_$d || exit 1
	done
	echo "# repetition $rep done" >>"$out"
done

# DAX mmap copy on ext4 -o dax: 256 MiB file, 8 passes.
M=/tmp/mnt
mkdir -p $M
mmap_on() { # LABEL DEV
	mkfs.ext4 -q -F -b 4096 "$2" && mount -o dax "$2" $M && fallocate -l 256M $M/f &&
		echo "mmap $1 $(mmapcopy $M/f 256M 8)" >>"$out"
	umount $M
}
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then
		dev=$(lfs_up) && mmap_on lfs "$dev" && lfs_down || exit 1
		mmap_on raw /dev/pmem0
	else
		mmap_on raw /dev/pmem0
		dev=$(lfs_up) && mmap_on lfs "$dev" && lfs_down || exit 1
	fi
done
cat "$out"
