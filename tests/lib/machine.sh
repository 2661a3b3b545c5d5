# The emulated Machine for host-side tests and the demo: several node VMs
# sharing the same fabric memory files, driven step by step from the host.
#   machine_init NODES FABRIC_NODES FABRIC_SIZE  create the fabric
#   machine_start_node I [vmrun options]          boot node I in the background
#                                                 (the first node started
#                                                 prepares the fabric; the
#                                                 others wait for that)
#   machine_wait_node I                           wait until it takes commands
#   node_exec I 'shell commands'                  run in node I, print output,
#                                                 return the exit status
#   machine_stop_node I                           power off, check the verdict
#   machine_kill_node I                           kill -9 its QEMU (a crash)
#   machine_cleanup                               stop everything, remove files
# Node I is named nodeI; its results share is $MACHINE_OUT/nodeI/share.
# MACHINE_MONITOR=1 (before machine_start_node) gives each node a QEMU
# monitor: tests/vm/vmmon $MACHINE_OUT/nodeI stop|cont.
MACHINE_OUT=
MACHINE_FABRIC=
MACHINE_FNODES=2
MACHINE_FSIZE=1G
MACHINE_CMD_TIMEOUT=${MACHINE_CMD_TIMEOUT:-300}
MACHINE_PREPARER=
declare -A MACHINE_PID
# Command numbers live in files, not variables: node_exec is often called in
# a command substitution (a subshell).

# machine_nap SECONDS: wait without starting a program (a read with a
# timeout on a FIFO nobody writes, opened by machine_init); the host polls
# for every command's answer, and a fork of sleep 20 times a second adds up
MACHINE_NAP_FD=
machine_nap() {
	if [ -n "$MACHINE_NAP_FD" ]; then
		read -r -t "$1" -u "$MACHINE_NAP_FD" _
		[ $? -gt 128 ] && return 0
	fi
	sleep "$1"
}

machine_init() {
	local top
	top=$(pwd)
	MACHINE_FNODES=$2
	MACHINE_FSIZE=$3
	MACHINE_OUT=$top/tests/out/machine-$(date +%Y%m%d-%H%M%S)-$$
	mkdir -p "$MACHINE_OUT" || return 1
	if [ -z "$MACHINE_NAP_FD" ] && mkfifo "$MACHINE_OUT/nap" && exec {MACHINE_NAP_FD}<>"$MACHINE_OUT/nap"; then
		rm -f "$MACHINE_OUT/nap"
	fi
	# shellcheck source=shmfabric.sh
	. "$top/tests/lib/shmfabric.sh"
	shm_fabric_reap
	MACHINE_FABRIC=$(shm_fabric_mkdir lfs-machine) || return 1
	MACHINE_PREPARER=
}

# The first node started converts the fabric's namespaces to fsdax while it
# boots (vmrun without --fabric-ready); every later one boots at the same
# time but loads its NVDIMM drivers only once that guest has said "booted"
# (vmrun --fabric-after): two guests rewriting the info blocks at once
# would corrupt them.
machine_start_node() {
	local i=$1 ready=()
	shift
	if [ -n "$MACHINE_PREPARER" ]; then
		ready=(--fabric-after "$MACHINE_OUT/node$MACHINE_PREPARER/share/booted")
	else
		MACHINE_PREPARER=$i
	fi
	mkdir -p "$MACHINE_OUT/node$i"
	tests/vm/vmrun --name "node$i" --out "$MACHINE_OUT/node$i" \
		--fabric-dir "$MACHINE_FABRIC" "${ready[@]}" \
		--fabric-nodes "$MACHINE_FNODES" --fabric-size "$MACHINE_FSIZE" \
		--env "LFS_NODE=node$i" --timeout 1800 ${MACHINE_MONITOR:+--monitor} --doorbell "$@" \
		tests/vm/guest/cmdloop.sh >"$MACHINE_OUT/node$i/vmrun.log" 2>&1 &
	MACHINE_PID[$i]=$!
	echo 0 >"$MACHINE_OUT/node$i/seq"
}

# Poll (bounded) for a file to appear (TEST -s: to hold something); fail
# early if node I's VM has ended.
machine_wait_file() {
	local i=$1 f=$2 limit=$3 test=${4:--e} t
	for ((t = 0; t < limit * 20; t++)); do
		[ "$test" "$f" ] && return 0
		kill -0 "${MACHINE_PID[$i]}" 2>/dev/null || {
			[ "$test" "$f" ] && return 0
			echo "machine: node$i ended unexpectedly; see $MACHINE_OUT/node$i/vmrun.log" >&2
			tail -n 5 "$MACHINE_OUT/node$i/vmrun.log" >&2
			return 1
		}
		machine_nap 0.05
	done
	echo "machine: node$i: timed out after ${limit}s waiting for $f" >&2
	return 1
}

machine_wait_node() {
	machine_wait_file "$1" "$MACHINE_OUT/node$1/share/cmd/ready" 300
}

machine_next_seq() {
	local f=$MACHINE_OUT/node$1/seq n
	n=$(($(cat "$f") + 1))
	echo "$n" >"$f"
	echo "$n"
}

node_exec() {
	local i=$1 cmd=$2 n dir
	dir=$MACHINE_OUT/node$i/share/cmd
	n=$(machine_next_seq "$i")
	printf '%s\n' "$cmd" >"$dir/$n.sh.tmp" && mv "$dir/$n.sh.tmp" "$dir/$n.sh" || return 1
	machine_ring "$i"
	# the guest writes N.rc in place once N.out is complete: wait until it
	# holds the status, not only until it exists
	machine_wait_file "$i" "$dir/$n.rc" "$MACHINE_CMD_TIMEOUT" -s || return 1
	cat "$dir/$n.out"
	return "$(cat "$dir/$n.rc")"
}

# Wake node I's command loop (vmrun --doorbell). Opened read-write, a FIFO
# never blocks the opener, even once QEMU is gone.
machine_ring() {
	printf '\n' 1<>"$MACHINE_OUT/node$1/doorbell.in" 2>/dev/null
	return 0
}

machine_qemu_pid() {
	cat "$MACHINE_OUT/node$1/qemu.pid" 2>/dev/null
}

# Power node I off and return vmrun's verdict (a guest WARN fails it).
machine_stop_node() {
	local i=$1 dir n rc
	[ -n "${MACHINE_PID[$i]:-}" ] || return 0
	dir=$MACHINE_OUT/node$i/share/cmd
	n=$(machine_next_seq "$i")
	if kill -0 "${MACHINE_PID[$i]}" 2>/dev/null; then
		echo "#exit" >"$dir/$n.sh.tmp" && mv "$dir/$n.sh.tmp" "$dir/$n.sh" && machine_ring "$i"
	fi
	wait "${MACHINE_PID[$i]}"
	rc=$?
	unset "MACHINE_PID[$i]"
	[ "$rc" -eq 0 ] || { echo "machine: node$i failed:" >&2; grep -E '^not ok|console log' "$MACHINE_OUT/node$i/vmrun.log" >&2; }
	return "$rc"
}

machine_kill_node() {
	local i=$1 pid
	pid=$(machine_qemu_pid "$i")
	[ -n "$pid" ] && kill -9 "$pid"
	wait "${MACHINE_PID[$i]}" 2>/dev/null
	unset "MACHINE_PID[$i]"
}

machine_cleanup() {
	local i pid
	for i in "${!MACHINE_PID[@]}"; do
		pid=$(machine_qemu_pid "$i")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
		wait "${MACHINE_PID[$i]}" 2>/dev/null
	done
	[ -n "$MACHINE_FABRIC" ] && rm -rf "$MACHINE_FABRIC"
	MACHINE_FABRIC=
}
