#!/bin/bash
# Guest side of bench/driver/run. Three devices set up at once: /dev/lfsN (a
# shelf over pmem1 and pmem2), a dm-linear device with the same book layout
# over pmem3 and pmem4, and raw /dev/pmem0. For each workload one fio process
# runs 1-second jobs on lfs, dm, raw, lfs, dm, raw, ... one after the other
# (stonewall), so that the three are always measured seconds apart and slow
# drifts of the emulation (host load, TCG) cancel out in the per-cycle ratios.
# Host load makes throughput over a second swing wildly, so each run also
# reports its median latency: a 4k I/O takes microseconds, far less than a
# host time slice, so most I/Os run undisturbed and the median shows what
# the stack costs. Then DAX mmap copy on ext4 -o dax over the shelf and over
# raw pmem0, alternating chunk by chunk.
set -u
. "$LFS_TOP/tests/driver/guest/lib.sh"
export PATH=$LFS_TOP/build/driver-bench:$PATH
CYCLES=${LFS_BENCH_CYCLES:-15}
BS_MB=64
out=$LFS_RESULTS/raw.txt
: >"$out"

insmod "$LFS_TOP/driver/lfs.ko" || exit 1
modprobe dm-mod || exit 1

# Touch all fabric memory once: the first write to a page of a backing file
# costs the host an allocation, which must not land in any measurement.
for i in 0 1 2 3 4; do
	p=/dev/pmem$i
	dd if=/dev/zero of=$p bs=1M count=$(($(blockdev --getsize64 $p) >> 20)) oflag=direct \
		status=none || exit 1
done

nbooks=$(($(blockdev --getsize64 /dev/pmem1) / (BS_MB << 20)))
layout= table= n=0
for b in $(seq 0 $((nbooks - 1))); do
	for ig in 1 2; do
		layout+=${layout:+,}$ig:$b
		table+="$((n * BS_MB * 2048)) $((BS_MB * 2048)) linear /dev/pmem$((ig + 2)) $((b * BS_MB * 2048))"$'\n'
		n=$((n + 1))
	done
done
lfsctl attach /dev/pmem1 --ig 1 --book-size ${BS_MB}M || exit 1
lfsctl attach /dev/pmem2 --ig 2 --book-size ${BS_MB}M || exit 1
lfs=$(lfsctl create bench "$layout") || exit 1
printf '%s' "$table" | dmsetup create lfsbench || exit 1
dm=/dev/dm-$(dmsetup info -c --noheadings -o minor lfsbench | tr -d ' ')
span=$((n * BS_MB - BS_MB))
echo "# $n books of $BS_MB MiB: $lfs over pmem1/pmem2, $dm (dm-linear) over pmem3/pmem4," \
	"raw /dev/pmem0; fio psync direct=1 over ${span} MiB, $CYCLES cycles of 1 s per device" >>"$out"

# fio_cycles RW BS: one line per cycle, for lfs, dm and raw in turn the
# throughput (IOPS for 4k, MiB/s otherwise) and the median latency in us.
fio_cycles() {
	local rw=$1 bs=$2 key args=() i
	case $rw in *read) key=read ;; *) key=write ;; esac
	for i in $(seq "$CYCLES"); do
		args+=(--name=lfs --filename="$lfs" --name=dm --filename="$dm"
			--name=raw --filename=/dev/pmem0)
	done
	fio --direct=1 --ioengine=psync --rw="$rw" --bs="$bs" --size=${span}M --runtime=1 \
		--time_based --stonewall --output-format=json "${args[@]}" 2>/dev/null |
		jq -r --arg k "$key" --arg bs "$bs" \
			'[.jobs[] | .[$k] | (if $bs == "4k" then .iops else .bw_bytes / 1048576 end),
			  .clat_ns.percentile["50.000000"] / 1000] |
			 range(0; length; 6) as $i | .[$i:$i + 6] | @tsv'
}

fio_cycles read 1M >/dev/null # warm up
for w in randread:4k randwrite:4k read:1M write:1M; do
	IFS=: read -r rw bs <<<"$w"
	fio_cycles "$rw" "$bs" | sed "s/^/fio $rw-$bs /" >>"$out"
done

# DAX mmap copy: a 128 MiB file on each filesystem, alternating pass by pass.
dmsetup remove lfsbench
mkdir -p /tmp/a /tmp/b
for d in "$lfs:/tmp/a" "/dev/pmem0:/tmp/b"; do
	mkfs.ext4 -q -F -b 4096 "${d%%:*}" && mount -o dax "${d%%:*}" "${d#*:}" &&
		fallocate -l 128M "${d#*:}/f" || exit 1
done
mmapcopy /tmp/a/f /tmp/b/f 128M $((CYCLES / 3 + 1)) | sed 's/^/mmap /' >>"$out"
umount /tmp/a /tmp/b
lfsctl remove bench && lfsctl detach /dev/pmem1 && lfsctl detach /dev/pmem2
cat "$out"
