#!/bin/bash
# Guest side of tests/boot/boot.t, second boot on the same fabric: nothing
# but the shipped units and udev rules has run. The auto_activate shelf is
# back with its data, the other is not; then a fabric device that comes
# and goes while the agent is stopped shows udev's hand-off to
# lfs-assemble@.service on its own.
. "$LFS_TOP/tests/boot/guest/lib.sh"
LFSCTL=/usr/local/sbin/lfsctl

t_is "$(boot_state)" running "the boot finished and no unit failed"
t_ok "$(wait_for 60 test -b /dev/lfs/auto1; echo $?)" "/dev/lfs/auto1 is back"
t_is "$(readlink -f /dev/disk/by-id/lfs-"$(cat "$LFS_RESULTS/auto1.uuid")")" "$(readlink -f /dev/lfs/auto1)" \
	"/dev/disk/by-id/lfs-UUID leads to it"
mkdir -p /tmp/mnt
t_run "mount -o dax" mount -o dax /dev/lfs/auto1 /tmp/mnt
t_is "$(sha256sum </tmp/mnt/data)" "$(cat "$LFS_RESULTS/auto1.sha")" "auto1's data is intact"
t_run "umount" umount /tmp/mnt
t_ok "$([ ! -e /dev/lfs/manual1 ]; echo $?)" "manual1 (auto_activate = false) is not active"
t_is "$("$L" status --json | jq -c '[.[0].active[].name]')" '["auto1"]' "lfsvol status: auto1 alone is active here"
t_is "$("$L" list --json | jq -r '[.[].name] | sort | join(" ")')" "auto1 manual1" "the librarian still has both shelves"
check_units "second boot"
check_assembled "second boot"
t_is "$(journalctl -b -u systemd-udevd.service --no-pager | grep -ci 'lfsvol\|lfs-assemble')" 0 \
	"udevd logged nothing about lfsvol or lfs-assemble"

# The fabric devices go and come back with the agent stopped: only udev's
# SYSTEMD_WANTS can bring auto1 back.
t_run "systemctl stop lfs-agent.service" systemctl stop lfs-agent.service
t_run "lfsvol deactivate auto1" "$L" deactivate auto1
for d in pmem0 pmem1; do
	t_run "lfsctl detach /dev/$d" "$LFSCTL" detach /dev/$d
done
declare -A inv nd
for d in pmem0 pmem1; do
	inv[$d]=$(systemctl show -p InvocationID --value "lfs-assemble@$d.service")
	nd[$d]=$(basename "$(readlink -f /sys/block/$d/device)")
	t_run "unbind ${nd[$d]} ($d) from nd_pmem" sh -c "echo ${nd[$d]} >/sys/bus/nd/drivers/nd_pmem/unbind"
done
# pmem0 alone first: auto1 has books on IG 1 too, so pmem0's pass must wait
# for pmem1 (and succeed), not fail and be restarted.
ran_again() { [ "$(systemctl show -p InvocationID --value "lfs-assemble@$1.service")" != "${inv[$1]}" ]; }
ended() { [ "$(systemctl show -p ActiveState --value "lfs-assemble@$1.service")" = inactive ]; }
t_run "bind ${nd[pmem0]} (pmem0) again" sh -c "echo ${nd[pmem0]} >/sys/bus/nd/drivers/nd_pmem/bind"
pass_done() { ran_again "$1" && ended "$1"; }
t_ok "$(wait_for 30 pass_done pmem0; echo $?)" \
	"pmem0 alone: lfs-assemble@pmem0.service ran and ended"
t_is "$(systemctl show -p Result,NRestarts,ExecMainStatus --value lfs-assemble@pmem0.service | tr '\n' ' ')" \
	"success 0 0 " "pmem0 alone: its pass succeeded the first time"
t_ok "$([ ! -e /dev/lfs/auto1 ]; echo $?)" "pmem0 alone: auto1 (books on IG 1 too) waits"
t_is "$(journalctl -b -u lfs-assemble@pmem0.service --no-pager | grep -c "shelf \`auto1' waits for IG 1")" 1 \
	"pmem0 alone: the pass said auto1 waits for IG 1"
t_is "$("$L" list --json | jq -c '[.[] | select(.name == "auto1") | .activations | length]')" '[0]' \
	"pmem0 alone: the librarian holds no activation of auto1"
t_run "bind ${nd[pmem1]} (pmem1) again" sh -c "echo ${nd[pmem1]} >/sys/bus/nd/drivers/nd_pmem/bind"
t_ok "$(wait_for 60 test -b /dev/lfs/auto1; echo $?)" "/dev/lfs/auto1 is back, by udev and lfs-assemble@ alone"
for d in pmem0 pmem1; do
	t_ok "$(wait_for 30 sh -c "[ \"\$(systemctl show -p ActiveState --value lfs-assemble@$d.service)\" = inactive ]"; echo $?)" \
		"lfs-assemble@$d.service ran and ended"
	t_ok "$([ "$(systemctl show -p InvocationID --value "lfs-assemble@$d.service")" != "${inv[$d]}" ]; echo $?)" \
		"lfs-assemble@$d.service ran again for the new $d"
done
check_assembled "the devices back"
t_is "$(systemctl is-active lfs-agent.service)" inactive "the agent stayed stopped meanwhile"
t_is "$("$L" status --json | jq -c '[[.[0].active[].name], [.[0].fabric[].ig]]')" '[["auto1"],[0,1]]' \
	"both devices attached again and auto1 active"
t_run "systemctl start lfs-agent.service" systemctl start lfs-agent.service
check_units "second boot, at the end"
t_is "$(systemctl is-system-running)" running "systemctl is-system-running: running"
t_done
