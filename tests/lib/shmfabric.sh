# Emulated fabric memory lives in files under /dev/shm (RAM). A run killed
# with SIGKILL cannot remove its own: each directory records its owner
# (pid and process start time), and the next run removes the directories
# whose owner is gone.
#   shm_fabric_mkdir PREFIX [DIR]  create DIR/PREFIX.XXXXXX (DIR: /dev/shm)
#                                  owned by $$, print it
#   shm_fabric_reap [DIR]      remove stale lfs-machine.* and lfs-fabric.* dirs in DIR

# The start time (in clock ticks since boot) of process PID, or nothing.
shm_fabric_start() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	# the fields after the command name (which may hold spaces and parentheses)
	stat=${stat##*) }
	set -- $stat
	echo "${20}"
}

shm_fabric_mkdir() {
	local d
	d=$(mktemp -d "${2:-/dev/shm}/$1.XXXXXX") || return 1
	echo "$$ $(shm_fabric_start $$)" >"$d/owner" || { rm -rf "$d"; return 1; }
	echo "$d"
}

shm_fabric_reap() {
	local dir=${1:-/dev/shm} d pid start
	for d in "$dir"/lfs-machine.* "$dir"/lfs-fabric.*; do
		[ -d "$d" ] && [ -O "$d" ] && [ -f "$d/owner" ] || continue
		read -r pid start <"$d/owner" || continue
		[[ $pid =~ ^[0-9]+$ ]] || continue
		# alive and the same process (not a new one with the same pid): keep
		[ "$(shm_fabric_start "$pid")" = "$start" ] && continue
		rm -rf "$d"
	done
}
