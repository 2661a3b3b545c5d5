#!/bin/bash
# Guest side of tests/host/dkms.t: the kernel KVER booted, load the
# dkms-built module KO (a path in the project tree), make a shelf on the
# fabric device, write and read back, remove it, unload.
. "$LFS_TOP/tests/lib/tap.sh"
ko=$LFS_TOP/$1
kver=$2
LFSCTL=$LFS_TOP/lvmish/lfsctl/lfsctl

t_is "$(uname -r)" "$kver" "booted $kver"
t_run "insmod the dkms-built $(basename "$ko")" insmod "$ko" || t_done
t_is "$(cat /sys/module/lfs/srcversion)" "$(modinfo -F srcversion "$ko")" "the loaded lfs is that module"
t_run "attach /dev/pmem0 as IG 0" "$LFSCTL" attach /dev/pmem0 --ig 0 --book-size 64M
dev=$("$LFSCTL" create dkms 0:1,0:3 2>&1)
t_like "$dev" "^/dev/lfs[0-9]+$" "create a shelf of two books: $dev" || t_done
head -c 4M /dev/urandom >/tmp/data
t_run "write 4 MiB across the two books" dd if=/tmp/data of="$dev" bs=1M seek=62 oflag=direct conv=fsync status=none
t_is "$(dd if="$dev" bs=1M skip=62 count=4 iflag=direct status=none | sha256sum)" "$(sha256sum </tmp/data)" \
	"the bytes read back are those written"
t_is "$(dd if=/dev/pmem0 bs=1M skip=$((64 * 3)) count=2 iflag=direct status=none | sha256sum)" \
	"$(tail -c 2M /tmp/data | sha256sum)" "the second half lies in book 0:3 on /dev/pmem0"
t_run "remove the shelf" "$LFSCTL" remove dkms
t_run "detach /dev/pmem0" "$LFSCTL" detach /dev/pmem0
t_run "rmmod lfs" rmmod lfs
t_done
