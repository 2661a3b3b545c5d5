#!/bin/bash
# Guest side of tests/lvmish/lifecycle.t, second boot on the same fabric:
# udev and lfs.conf alone bring back the auto shelf with its data.
. "$LFS_TOP/tests/lvmish/guest/common.sh"
write_conf

t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done
t_run "udevd starts with the LFS rules (no other step)" start_udev
t_ok "$(wait_for 30 test -b /dev/lfs/auto1; echo $?)" "/dev/lfs/auto1 is back after the reboot"
# The node agent (lfs-agent.service) keeps the lease that the activation
# took; it starts here, after udev, so that udev alone is seen to activate
"$LFSVOL_BIN" -c "$CONF" agent >/tmp/agent.log 2>&1 &
apid=$!
leased() { "$LFS_TOP/lvmish/lfsctl/lfsctl" lease | grep -q 'ends in'; }
t_ok "$(wait_for 60 leased; echo $?)" "the agent renews the node's lease"
t_is "$(cat "/sys/block/$(basename "$(readlink -f /dev/lfs/auto1)")/lfs/state")" active "auto1 is active, not fenced"
t_is "$(readlink -f /dev/disk/by-id/lfs-"$(cat "$LFS_RESULTS/auto1.uuid")")" "$(readlink -f /dev/lfs/auto1)" \
	"/dev/disk/by-id/lfs-UUID leads to it"
mkdir -p /tmp/mnt
t_run "mount -o dax" mount -o dax /dev/lfs/auto1 /tmp/mnt
t_is "$(sha256sum </tmp/mnt/data)" "$(cat "$LFS_RESULTS/auto1.sha")" "auto1's data is intact"
umount /tmp/mnt
t_ok "$([ ! -e /dev/lfs/manual ]; echo $?)" "the shelf not marked auto_activate stays inactive"

# repeated events change nothing
udevadm trigger --subsystem-match=block --sysname-match='pmem*' --action=change
udevadm trigger --subsystem-match=block --sysname-match='pmem*' --action=add
udevadm settle --timeout=120
t_is "$(L status --json | jq -c '.[0] | [.active[].name], (.fabric | length)' | tr '\n' ' ')" '["auto1"] 2 ' \
	"repeated fabric events: still one auto1 and two fabric devices"
t_is "$(ls /sys/block | grep -c '^lfs')" 1 "one lfs block device"
t_run "deactivate auto1" L deactivate auto1
t_run "activate auto1 --shared" L activate auto1 --shared
disk=$(basename "$(readlink -f /dev/lfs/auto1)")
t_is "$(cat /sys/block/"$disk"/ro)" 1 "a shared activation is a read-only device"
t_is "$(L list --json | jq -c '.[] | select(.name == "auto1") | .activations')" '[{"node":"node01","mode":"ro"}]' \
	"the librarian records the shared (ro) activation"
t_run "deactivate --all" L deactivate --all
# activate attaches a configured fabric device that is missing (here: the
# kernel refuses the shelf's books on the detached IG 1 with ENODEV first)
t_run "detach /dev/pmem1 behind lfsvol's back" "$LFS_TOP/lvmish/lfsctl/lfsctl" detach /dev/pmem1
t_run "activate auto1 with IG 1 detached" L activate auto1
t_is "$(L status --json | jq -c '.[0] | [[.active[].name], [.fabric[].ig]]')" '[["auto1"],[0,1]]' \
	"activate attached IG 1 again and auto1 is active"
t_run "deactivate auto1 again" L deactivate auto1

# The librarian now gives each IG a 16th book that the 15-book devices do
# not hold (lifecycle.t restarted it so): the agent's check of never-used
# books passes over 0:15 and 1:15 and still ends its sweep.
checked() { L status --json | jq -r '.[0].agent.check' | grep -q '^idle'; }
t_ok "$(wait_for 120 checked; echo $?)" "the agent's check ends with books beyond the devices"
t_is "$(L status --json | jq -c '.[0].agent | [.checked_zero, .checked_other, .checked_skipped]')" "[0,0,2]" \
	"it read none and passed over the two (0:15, 1:15)"
t_like "$(L status)" "check of FREE books: idle: .*; 2 passed over in this sweep" "status says so"
t_is "$(L fabric --json | jq '.[0].zombie')" 0 "no book went ZOMBIE (nothing was written)"
kill "$apid"
wait "$apid"
t_is "$?" 0 "the agent ends on SIGTERM"
t_done
