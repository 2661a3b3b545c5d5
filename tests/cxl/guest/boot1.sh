#!/bin/bash
# Guest side of tests/cxl/cxl.t, first boot on fresh files: the harness made
# a pmem region and an fsdax namespace on each of two CXL memory devices
# (tests/vm/guest-init); LFS attaches them beside an NVDIMM, builds shelves
# on CXL books alone and across CXL and NVDIMM books, ext4 -o dax and
# MAP_SYNC on both, raw bytes found on the CXL memory, and the udev rules.
# Leaves in the results share what the second boot checks.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
. "$LFS_TOP/tests/cxl/guest/lib.sh"
M=/tmp/mnt
mkdir -p $M
BS=16

# --- the devices the harness made -------------------------------------
read -r C0 C1 <<<"$LFS_CXL_PMEM"
t_is "$(wc -w <<<"$LFS_CXL_PMEM")" 2 "a pmem device on each CXL memory device: $LFS_CXL_PMEM" || t_done
i=0
for m in $(cxl_memdevs); do
	r=$(cxl_region_of "$m")
	c=$(jq -r .blockdev <<<"$(cxl_namespace_of "$r")")
	t_is "$c" "$(eval echo \$C$i)" "$m (serial order $i): region $r, fsdax namespace on /dev/$c"
	t_is "$(cxl list -R -r "$r" | jq -r '.[0].decode_state')" commit "  $r's decoders are committed"
	t_like "$(readlink -f /sys/block/$c)" '/nvdimm-bridge[0-9]+/ndbus[0-9]+/region[0-9]+/' \
		"  /dev/$c sits on the CXL nvdimm bridge"
	t_is "$(cat /sys/block/$c/queue/dax)" 1 "  /dev/$c is DAX-capable"
	ndctl list -r "$r" -N | jq -c --arg m "$m" --argjson s "$(cxl_serial_of "$m")" \
		'.[0] + {memdev: $m, serial: $s}' >>"$LFS_RESULTS/cxl-namespaces"
	i=$((i + 1))
done
t_like "$(readlink -f /sys/block/pmem0)" '/ACPI0012:00/ndbus[0-9]+/region[0-9]+/' "/dev/pmem0 is the NVDIMM (NFIT)"
t_diag "NUMA: $(for d in pmem0 $C0 $C1; do printf '%s node %s; ' $d "$(cat /sys/block/$d/device/numa_node)"; done)"

# --- LFS on them --------------------------------------------------------
t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done
t_run "attach CXL /dev/$C0 as IG 0" lfsctl attach /dev/$C0 --ig 0 --book-size ${BS}M
t_run "attach CXL /dev/$C1 as IG 1" lfsctl attach /dev/$C1 --ig 1 --book-size ${BS}M
t_run "attach NVDIMM /dev/pmem0 as IG 2" lfsctl attach /dev/pmem0 --ig 2 --book-size ${BS}M
fab=$(lfsctl fabric --json)
t_is "$(jq -c '[.[] | [.ig, .path, .dax]]' <<<"$fab")" \
	"[[0,\"/dev/$C0\",true],[1,\"/dev/$C1\",true],[2,\"/dev/pmem0\",true]]" "fabric --json: three DAX devices"
t_is "$(jq '.[0].books' <<<"$fab")" $(($(blockdev --getsize64 /dev/$C0) / (BS << 20))) \
	"IG 0 holds the CXL namespace's size / book size books"

cxl=$(lfsctl create cxl 0:0-3)
t_like "$cxl" '^/dev/lfs[0-9]+$' "shelf 'cxl' on CXL books alone: $cxl"
MIXED=0:4,2:0,1:0,0:5,2:1,1:1
mixed=$(lfsctl create mixed $MIXED)
t_like "$mixed" '^/dev/lfs[0-9]+$' "shelf 'mixed' across both CXL devices and the NVDIMM: $mixed"
for d in $cxl $mixed; do
	t_is "$(cat /sys/block/${d#/dev/}/lfs/dax):$(cat /sys/block/${d#/dev/}/queue/dax)" 1:1 "$d is a DAX shelf"
done
t_is "$(paste -sd, /sys/block/${mixed#/dev/}/lfs/books)" $MIXED "mixed's books in shelf order"

# ext4 -o dax, a file larger than a book, MAP_SYNC: on each shelf.
fs_check() { # DEVICE NAME SIZE SEED
	t_run "$2: mkfs.ext4 -b 4096" mkfs.ext4 -q -b 4096 "$1" || return
	t_run "$2: mount -o dax" mount -o dax "$1" $M || return
	t_like "$(grep " $M " /proc/mounts)" 'dax' "$2: mounted with dax"
	pattern "$4" "$3" >$M/data
	t_run "$2: $3 written through the filesystem read back equal" cmp <(pattern "$4" "$3") $M/data
	t_run "$2: MAP_SHARED_VALIDATE|MAP_SYNC mapping allowed" mapsync $M/data
	t_run "$2: DAX faults over the whole file" mapsync --touch $M/data "$3"
	sha256sum <$M/data >"$LFS_RESULTS/$2.sha"
	t_run "$2: umount" umount $M
	t_run "$2: fsck clean" fsck.ext4 -fn "$1"
}
fs_check $cxl cxl 24M 1
fs_check $mixed mixed 40M 2

# Raw direct I/O in 3 MiB writes across the book boundaries of CXL books,
# through both I/O paths, then the bytes on the CXL devices themselves.
raw=$(lfsctl create raw 1:10,0:10,1:11)
t_like "$raw" '^/dev/lfs[0-9]+$' "shelf 'raw' on CXL books: $raw"
t_run "48 MiB written in 3 MiB direct writes" \
	dd if=<(pattern 3 48M) of=$raw bs=3M iflag=fullblock oflag=direct status=none
t_run "read back equal (DAX path)" cmp <(pattern 3 48M) $raw
echo 0 >/sys/module/lfs/parameters/dax_io
t_run "read back equal (remapped to the CXL pmem device, dax_io=0)" cmp <(pattern 3 48M) $raw
echo 1 >/sys/module/lfs/parameters/dax_io
t_run "remove raw" lfsctl remove raw
i=0
for b in 1:10 0:10 1:11; do
	dev=$C0
	[ "${b%:*}" = 1 ] && dev=$C1
	t_run "book $b holds shelf bytes $((i * BS))M-$(((i + 1) * BS))M on /dev/$dev" \
		cmp <(dd if=/dev/$dev bs=1M skip=$((${b#*:} * BS)) count=$BS iflag=direct status=none) \
		<(pattern 3 ${BS}M $((i * BS))M)
	i=$((i + 1))
done

# --- udev --------------------------------------------------------------
t_run "udevd starts with the LFS rules" start_udev_recording
for d in $C0 $C1 pmem0; do
	t_like "$(cat /tmp/assembly.log 2>/dev/null)" "add /dev/$d( |$)" \
		"61-lfs-assemble.rules runs the agent pass for /dev/$d"
done
for n in cxl mixed; do
	dev=$(eval echo \$$n)
	t_is "$(readlink -f /dev/lfs/$n)" "$dev" "/dev/lfs/$n (60-lfs.rules)"
	t_is "$(readlink -f "/dev/disk/by-id/lfs-$(cat /sys/block/${dev#/dev/}/lfs/uuid)")" "$dev" \
		"  and /dev/disk/by-id/lfs-UUID"
	t_is "$(udevadm info --query=property "$dev" | sed -n 's/^ID_FS_TYPE=//p')" ext4 "  udev probed its ext4"
done
for c in $C0 $C1; do
	u=$(ndctl list -N | jq -r --arg c "$c" '.[] | select(.blockdev == $c) | .uuid')
	t_is "$(readlink -f "/dev/disk/by-id/pmem-$u")" /dev/$c \
		"/dev/disk/by-id/pmem-UUID names CXL /dev/$c by its namespace (stable across probe order)"
done
udevadm control --exit

# --- teardown -----------------------------------------------------------
t_run "remove cxl" lfsctl remove cxl
t_run "remove mixed" lfsctl remove mixed
for d in $C0 $C1 pmem0; do
	t_run "detach /dev/$d" lfsctl detach /dev/$d
done
t_run "rmmod lfs" rmmod lfs
t_done
