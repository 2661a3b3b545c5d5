#!/bin/bash
# Guest side of tests/cxl/cxl.t, second boot on the same files (vmrun
# --cxl-raw: the harness made no region). What persists across a boot: the
# regions do not (QEMU, like a platform whose firmware programs no HDM
# decoder, starts every decoder disabled), the fsdax namespaces do (the
# label in each device's label storage area, the info block in its memory)
# once the same region is made again; so do the shelves' data.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
. "$LFS_TOP/tests/cxl/guest/lib.sh"
M=/tmp/mnt
mkdir -p $M
BS=16
MIXED=0:4,2:0,1:0,0:5,2:1,1:1

mems=$(cxl_memdevs)
t_is "$(wc -w <<<"$mems")" 2 "both CXL memory devices are there: $(echo $mems)" || t_done
t_is "$(cxl list -R | jq length)" 0 "no CXL region at boot"
t_is "$(ls /sys/block | grep '^pmem' | paste -sd' ')" pmem0 "no pmem device on CXL memory at boot, only the NVDIMM's"
t_is "$(cxl list -D -d root | jq -c '[.[] | .max_available_extent == .size] | unique')" '[true]' \
	"every fixed memory window is wholly free: no decoder was left programmed"

devs=()
for m in $mems; do
	r=$(cxl_make_region "$m")
	t_like "$r" '^region[0-9]+$' "cxl create-region on $m again: $r"
	want=$(jq -c --argjson s "$(cxl_serial_of "$m")" 'select(.serial == $s) | [.dev, .mode, .uuid, .size]' \
		"$LFS_RESULTS/cxl-namespaces")
	t_like "$want" '^\[' "  the first boot recorded a namespace on $m's device (serial $(cxl_serial_of "$m"))"
	have() { [ -n "$(cxl_namespace_of "$r")" ]; }
	wait_for 20 have
	ns=$(cxl_namespace_of "$r")
	t_is "$(jq -c '[.dev, .mode, .uuid, .size]' <<<"$ns")" "$want" \
		"  its fsdax namespace is back as it was, without ndctl create-namespace"
	devs+=("$(jq -r .blockdev <<<"$ns")")
done
C0=${devs[0]} C1=${devs[1]}

t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done
t_run "attach CXL /dev/$C0 as IG 0" lfsctl attach /dev/$C0 --ig 0 --book-size ${BS}M
t_run "attach CXL /dev/$C1 as IG 1" lfsctl attach /dev/$C1 --ig 1 --book-size ${BS}M
t_run "attach NVDIMM /dev/pmem0 as IG 2" lfsctl attach /dev/pmem0 --ig 2 --book-size ${BS}M
for s in "cxl 0:0-3" "mixed $MIXED"; do
	set -- $s
	dev=$(lfsctl create "$1" "$2")
	t_like "$dev" '^/dev/lfs[0-9]+$' "shelf '$1' made again of the same books: $dev"
	t_run "$1: mount -o dax" mount -o dax "$dev" $M || continue
	t_is "$(sha256sum <$M/data)" "$(cat "$LFS_RESULTS/$1.sha")" "$1: the file written in the first boot is intact"
	t_run "$1: MAP_SYNC mapping allowed" mapsync $M/data
	t_run "$1: umount" umount $M
	t_run "$1: fsck clean" fsck.ext4 -fn "$dev"
	t_run "remove $1" lfsctl remove "$1"
done
for d in $C0 $C1 pmem0; do
	t_run "detach /dev/$d" lfsctl detach /dev/$d
done
t_run "rmmod lfs" rmmod lfs
t_done
