#!/bin/bash
# Guest side of tests/cxl/devdax.t (issue 32 item 1; docs/CXL.md): a
# volatile CXL RAM region (QEMU 10, vmrun --cxl-volatile) as a device-DAX
# fabric. Its dax device is bound to fsdev_dax where the kernel has it
# (7.x), else left unbound for lfs.ko to map itself (6.12); attached with
# lfsctl, reported volatile; a shelf on it is a DAX block device without
# MAP_SYNC: ext4 -o dax, bytes written and read back, DAX faults, direct I/O
# across books, zeroing; bad input refused. 6.1 has no RAM regions: there
# (LFS_DEVDAX=nvdimm) the device is the second NVDIMM's namespace made
# devdax, persistent, and MAP_SYNC is allowed.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
. "$LFS_TOP/tests/cxl/guest/lib.sh"
M=/tmp/mnt
mkdir -p $M
BS=4

for m in cxl_acpi cxl_pci cxl_port cxl_mem dax_cxl dax_pmem device_dax; do modprobe "$m" 2>/dev/null; done
udevadm settle 2>/dev/null || true
MODE=unbound
modprobe fsdev_dax 2>/dev/null && MODE=fsdev_dax
t_diag "$(uname -r): the dax device is $MODE"
if [ "${LFS_DEVDAX:-cxl}" = nvdimm ]; then
	VOL=false MEMORY=persistent
	dax=$(ndctl create-namespace -f -e namespace1.0 -m devdax -M mem -a 2M | jq -r '.daxregion.devices[0].chardev')
	t_like "$dax" '^dax[0-9]+\.[0-9]+$' "the second NVDIMM's namespace in devdax mode: $dax" || t_done
	t_is "$(basename "$(readlink /sys/bus/dax/devices/$dax/driver)")" device_dax "$dax bound to device_dax"
else
	VOL=true MEMORY=volatile
	mem=$(cxl_memdevs | head -n 1)
	region=$(cxl_make_ram_region "$mem")
	t_like "$region" '^region[0-9]+$' "a RAM region on $mem: $region" || t_done
	dax=$(daxctl list -r "${region#region}" -D | jq -r '.[0].chardev')
	t_like "$dax" '^dax[0-9]+\.[0-9]+$' "its dax device: $dax" || t_done
	t_run "$dax bound to device_dax" daxctl reconfigure-device -m devdax -f "$dax"
fi
size=$(cat /sys/bus/dax/devices/$dax/size)

t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done
t_fails "attach refuses /dev/$dax while device_dax has it" \
	lfsctl attach /dev/$dax --ig 0 --book-size ${BS}M
t_like "$(lfsctl attach /dev/$dax --ig 0 --book-size ${BS}M 2>&1)" "is not a device-DAX" \
	"  and says why"
t_like "$(lfsctl attach /dev/null --ig 0 --book-size ${BS}M 2>&1)" "is not a block device nor a device-DAX" \
	"attach refuses /dev/null (a character device, not a dax one)"
t_is "$(lfsctl fabric --json | jq length)" 0 "nothing attached after the refusals"

echo "$dax" >/sys/bus/dax/drivers/device_dax/unbind
if [ $MODE = fsdev_dax ]; then
	echo "$dax" >/sys/bus/dax/drivers/fsdev_dax/new_id 2>/dev/null
	[ -e /sys/bus/dax/devices/$dax/driver ] || echo "$dax" >/sys/bus/dax/drivers/fsdev_dax/bind
fi
drv=$(readlink /sys/bus/dax/devices/$dax/driver)
t_is "${drv:+$(basename "$drv")}" "${MODE#unbound}" "$dax is $MODE"

# --- attach, label, what FABRIC_GET says --------------------------------
t_run "label /dev/$dax (offset 2M)" lfsctl label /dev/$dax --ig 0 --book-size ${BS}M --offset 2M \
	--fabric 4c465300-0000-4000-8000-00000000d0a0
t_run "attach /dev/$dax as IG 0 with its label" lfsctl attach /dev/$dax --ig 0 --book-size ${BS}M \
	--offset 2M --fabric 4c465300-0000-4000-8000-00000000d0a0 || t_done
fab=$(lfsctl fabric --json)
t_is "$(jq -c '.[0] | [.path, .dax, .devdax, .volatile]' <<<"$fab")" "[\"/dev/$dax\",true,true,$VOL]" \
	"fabric --json: a DAX device-DAX fabric, $MEMORY"
t_is "$(jq '.[0].size' <<<"$fab"):$(jq '.[0].books' <<<"$fab")" "$size:$(((size - (2 << 20)) / (BS << 20)))" \
	"  its size is the dax device's, its books (size - offset) / book size"
t_like "$(lfsctl fabric)" "/dev/$dax .* $MEMORY " "lfsctl fabric's table says $MEMORY"
t_fails "a second attach of /dev/$dax is refused" lfsctl attach /dev/$dax --ig 1 --book-size ${BS}M

# --- a shelf on it ------------------------------------------------------
sh=$(lfsctl create vol 0:0-3)
t_like "$sh" '^/dev/lfs[0-9]+$' "shelf 'vol' on the device-DAX: $sh"
t_is "$(cat /sys/block/${sh#/dev/}/lfs/dax):$(cat /sys/block/${sh#/dev/}/queue/dax)" 1:1 "$sh is a DAX shelf"
t_fails "detach refused while the shelf holds books" lfsctl detach /dev/$dax
t_run "mkfs.ext4 -b 4096" mkfs.ext4 -q -b 4096 -N 64 "$sh"
t_run "mount -o dax" mount -o dax "$sh" $M
t_like "$(grep " $M " /proc/mounts)" 'dax' "mounted with dax"
pattern 5 8M >$M/data
t_run "8M written through ext4 read back equal" cmp <(pattern 5 8M) $M/data
if [ $VOL = true ]; then
	t_fails "MAP_SYNC refused: the memory is volatile" mapsync $M/data
else
	t_run "MAP_SYNC allowed: the memory is persistent" mapsync $M/data
fi
t_run "plain DAX mmap: faults over the whole file" mapsync --touch $M/data 8M
t_run "umount" umount $M
t_run "fsck clean" fsck.ext4 -fn "$sh"

# raw direct I/O across book boundaries, FUA too, read back
t_run "12M in 3M direct writes" dd if=<(pattern 6 12M) of=$sh bs=3M iflag=fullblock oflag=direct status=none
t_run "  read back equal" cmp <(pattern 6 12M) <(dd if=$sh bs=1M count=12 iflag=direct status=none)
t_run "4M in O_DIRECT|O_SYNC writes (FUA)" dd if=<(pattern 8 4M) of=$sh bs=1M count=4 iflag=fullblock oflag=direct,sync \
	status=none
t_run "  read back equal" cmp <(pattern 8 4M) <(dd if=$sh bs=1M count=4 iflag=direct status=none)
t_run "remove vol" lfsctl remove vol

# the bytes stay on the device: the same books as another shelf
sh=$(lfsctl create again 0:0-3)
t_run "a new shelf of the same books reads them" cmp <(pattern 8 4M) <(dd if=$sh bs=1M count=4 status=none)
t_run "remove again" lfsctl remove again
t_run "zero books 0:0-3" lfsctl zero 0:0-3
t_is "$(lfsctl check 0:0-3 | paste -sd,)" "0:0,0:1,0:2,0:3" "they read as zeroes (check)"

# --- teardown, and detach after an unbind ----------------------------------
if [ $MODE = unbound ]; then
	t_fails "device_dax cannot bind $dax while it is attached" \
		sh -c "echo $dax >/sys/bus/dax/drivers/device_dax/bind"
	t_run "detach /dev/$dax" lfsctl detach /dev/$dax
	# (device_dax cannot bind it again now: 6.12's dev_dax_probe keeps the
	# page map of the failed probe and refuses "pre-populated page map")
	t_run "  its range was given back: attach again" \
		lfsctl attach /dev/$dax --ig 0 --book-size ${BS}M --offset 2M
	t_run "  detach" lfsctl detach /dev/$dax
	t_run "rmmod lfs" rmmod lfs
	t_done
fi
t_run "detach /dev/$dax" lfsctl detach /dev/$dax
t_run "attach again" lfsctl attach /dev/$dax --ig 0 --book-size ${BS}M --offset 2M
sh=$(lfsctl create gone 0:1)
echo "$dax" >/sys/bus/dax/drivers/fsdev_dax/unbind
t_is "$(readlink /sys/bus/dax/devices/$dax/driver)" "" "fsdev_dax unbound under an active shelf"
t_fails "  the shelf's reads fail" dd if=$sh of=/dev/null bs=4k count=1 iflag=direct status=none
t_run "  remove it" lfsctl remove gone
t_run "  detach the fabric by its path" lfsctl detach /dev/$dax
t_run "rmmod lfs" rmmod lfs
t_done
