#!/bin/bash
# Fabric files of a run killed with SIGKILL (no clean-up) are removed by the
# next run: tests/lib/shmfabric.sh, used by tests/vm/vmrun and machine.sh.
. tests/lib/tap.sh
. tests/lib/shmfabric.sh
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT

# a run that was killed: its owner process is gone
dead=$(bash -c '. tests/lib/shmfabric.sh; d=$(shm_fabric_mkdir lfs-machine "$1"); echo x >"$d/fam0.img"; echo "$d"' _ "$base")
t_ok "$([ -f "$dead/fam0.img" ]; echo $?)" "a run's fabric dir with a file in it: $dead"
# a run still going (this shell owns it)
live=$(shm_fabric_mkdir lfs-fabric "$base")
t_like "$(cat "$live/owner")" "^$$ [0-9]+$" "the owner file names this shell's pid and start time"
# a reused pid: alive, but another process than the one that made the dir
reused=$(mktemp -d "$base/lfs-machine.XXXXXX")
echo "$$ 1" >"$reused/owner"
# not ours to judge: no owner file, or another name
noowner=$(mktemp -d "$base/lfs-fabric.XXXXXX")
other=$(mktemp -d "$base/other.XXXXXX")
echo "999999999 1" >"$other/owner"

shm_fabric_reap "$base"
t_ok "$([ ! -e "$dead" ]; echo $?)" "the dead run's dir is removed"
t_ok "$([ -d "$live" ]; echo $?)" "the live run's dir stays"
t_ok "$([ ! -e "$reused" ]; echo $?)" "a dir whose owner pid now belongs to another process is removed"
t_ok "$([ -d "$noowner" ] && [ -d "$other" ]; echo $?)" "dirs without an owner file, or of another name, stay"
t_done
