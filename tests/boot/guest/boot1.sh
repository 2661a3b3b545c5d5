#!/bin/bash
# Guest side of tests/boot/boot.t, first boot: the installed tools make the
# shelves and write data; the librarian and the agent run as units.
. "$LFS_TOP/tests/boot/guest/lib.sh"

t_is "$(cat /proc/1/comm)" systemd "PID 1 is systemd"
t_is "$(boot_state)" running "the boot finished and no unit failed"
check_units "first boot"
t_ok "$(wait_for 60 both_attached; echo $?)" "the units attached both fabric devices (IG 0 and IG 1 by NUMA node)"
check_assembled "first boot"

t_run "lfsvol create auto1 -s 128M -a" "$L" create auto1 -s 128M -a
t_run "lfsvol create manual1 -s 64M -a" "$L" create manual1 -s 64M -a
t_ok "$([ -b /dev/lfs/auto1 ] && [ -b /dev/lfs/manual1 ]; echo $?)" "/dev/lfs/auto1 and /dev/lfs/manual1 are there"
t_run "mkfs.ext4 on auto1" mkfs.ext4 -q -b 4096 /dev/lfs/auto1
mkdir -p /tmp/mnt
t_run "mount -o dax" mount -o dax /dev/lfs/auto1 /tmp/mnt
t_like "$(grep ' /tmp/mnt ' /proc/mounts)" dax "mounted with dax"
head -c 8M /dev/urandom >/tmp/mnt/data
sha256sum </tmp/mnt/data >"$LFS_RESULTS/auto1.sha"
t_run "umount" umount /tmp/mnt
head -c 1M /dev/urandom >/tmp/raw
t_run "write 1 MiB to manual1" dd if=/tmp/raw of=/dev/lfs/manual1 bs=1M oflag=direct conv=fsync status=none
sha256sum </tmp/raw >"$LFS_RESULTS/manual1.sha"
# The administrator marks one shelf auto_activate, the other explicitly not.
cat >>/etc/lfs/lfs.conf <<EOC
shelves = (
	{ name = "auto1"; auto_activate = true; },
	{ name = "manual1"; auto_activate = false; }
);
EOC
t_run "lfsvol accepts the edited lfs.conf" "$L" status
"$L" list --json | jq -r '.[] | select(.name == "auto1") | .uuid' >"$LFS_RESULTS/auto1.uuid"
t_like "$(cat "$LFS_RESULTS/auto1.uuid")" '^[0-9a-f-]{36}$' "auto1 has a UUID"
check_units "first boot, after the work"
sync
t_done
