# Shared by tests/fencing/*.t and bench/fencing: two nodes of the emulated
# Machine (tests/lib/emachine.sh, source it first), node1 holding a shelf and
# writing into it, node1 losing its lease (cut off, agent stopped or killed),
# node2 taking the shelf over. Times are the host's, in ms:
#   FW_CUT       just before the host asked node1 to lose its lease
#   FW_FENCE     when the host saw node1's fence (the shelf's sysfs state
#                read "fenced" in the guest, or node1's QEMU exited: reset)
#   FW_TAKE      when node2 sent the takeover request that was granted
#                (the grant is later: FW_TAKE - FW_FENCE is a lower bound
#                of the margin between fence and takeover)
#   FW_REFUSED   the first refusal node2 got, FW_TRIES its attempts
fw_now() { date +%s%3N; }
FW_WATCHERS=()

# n I 'commands': em_node with lfsctl, wait_for SECONDS CMD... (a bounded
# poll) and state NAME (the shelf's sysfs state) defined
fw_node() {
	em_node "$1" "lfsctl() { \$LFS_TOP/lvmish/lfsctl/lfsctl \"\$@\"; }
wait_for() {
	local end=\$(( \$(date +%s%N) / 1000000 + \$1 * 1000 ))
	shift
	until \"\$@\"; do
		[ \$(( \$(date +%s%N) / 1000000 )) -lt \$end ] || return 1
		nap 0.05
	done
}
state() { cat /sys/block/\$(basename \$(readlink -f /dev/lfs/\$1))/lfs/state 2>/dev/null; }
$2"
}

# fw_host_watch FILE: in the background, write the host's time to FILE.host
# once FILE exists (polled every 10 ms, for at most 120 s; machine_nap: no
# program start per look)
fw_host_watch() {
	(
		for ((i = 0; i < 12000; i++)); do
			[ -e "$1" ] && { fw_now >"$1.host"; exit 0; }
			machine_nap 0.01
		done
	) &
	FW_WATCHERS+=($!)
}

# fw_watch_stop: end the host's watchers still polling (one that waits for
# a fence that must not come polls for 120 s, 100 sleeps a second)
fw_watch_stop() {
	[ ${#FW_WATCHERS[@]} -gt 0 ] && kill "${FW_WATCHERS[@]}" 2>/dev/null
	FW_WATCHERS=()
	return 0
}

# fw_qemu_watch I FILE: write the host's time to FILE once node I's QEMU ended
fw_qemu_watch() {
	local pid
	pid=$(machine_qemu_pid "$1")
	(
		for ((i = 0; i < 12000; i++)); do
			kill -0 "$pid" 2>/dev/null || { fw_now >"$2"; exit 0; }
			machine_nap 0.01
		done
	) &
	FW_WATCHERS+=($!)
}

# fw_fence_watch NAME TAG: in node1, a watcher that creates TAG in the
# results share when shelf NAME reads fenced (the sysfs state says so as soon
# as the node's lease ran out); the host times it (TAG.host). It reads the
# state every FW_WATCH_MS ms (default 50; bench/fencing sets 10) for at most
# 120 s with no fork (read -t on a FIFO no one writes), at SCHED_FIFO 5:
# above the writer, below the agent's renewals.
fw_fence_watch() {
	local f=$MACHINE_OUT/node1/share/$2
	rm -f "$f" "$f.host"
	fw_node 1 "sf=/sys/block/\$(basename \$(readlink -f /dev/lfs/$1))/lfs/state
rm -f /tmp/never.$2 && mkfifo /tmp/never.$2
setsid chrt -f 5 bash -c 'exec 3<>/tmp/never.$2
for ((i = 0; i < 120000 / $((${FW_WATCH_MS:-50})); i++)); do
	read -r s <\"\$0\"
	[ \"\$s\" = fenced ] && { : >\"\$1\"; exit 0; }
	read -t $(printf '0.%03d' "${FW_WATCH_MS:-50}") -u 3
done' \"\$sf\" \"\$LFS_RESULTS/$2\" </dev/null >/dev/null 2>&1 &" >/dev/null
	fw_host_watch "$f"
}

# fw_writer NAME: node FW_HOLDER (default 1) writes an increasing counter with O_DIRECT at the
# start of /dev/lfs/NAME, 5 ms between writes (FW_PAUSE_US; without pause
# the writer keeps node1's CPU busy, a host core under TCG), with
# tests/driver/fencewrite.c; its
# last value that reached the device is in /tmp/NAME.state, its verdict in
# /tmp/NAME.out. Returns once the first write is done. It runs at nice 19:
# the guest has one CPU (TCG), and the shell commands of the test and the
# fence watcher (SCHED_FIFO) must not wait behind it to be timed right.
fw_writer() {
	fw_node "${FW_HOLDER:-1}" "setsid nice -n 19 env FENCEWRITE_PAUSE_US=${FW_PAUSE_US:-5000} fencewrite direct /dev/lfs/$1 /tmp/$1.state </dev/null >/tmp/$1.out 2>&1 &
echo \$! >/tmp/$1.pid
wait_for 20 test -s /tmp/$1.state"
}

# fw_takeover NAME [SECONDS]: node FW_TAKER (default 2) asks for a takeover of NAME until it is
# granted (at most SECONDS, default 60; FW_TAKE_PAUSE, default 0.5 s,
# between tries: bench/fencing sets 0 to time the grant closely): sets FW_TAKE,
# FW_REFUSED, FW_TRIES
fw_takeover() {
	local end=$(($(fw_now) + ${2:-60} * 1000)) t out
	FW_TAKE= FW_REFUSED= FW_TRIES=0
	while [ "$(fw_now)" -lt "$end" ]; do
		t=$(fw_now)
		FW_TRIES=$((FW_TRIES + 1))
		if out=$(em_node "${FW_TAKER:-2}" "L activate $1 --takeover 2>&1"); then
			FW_TAKE=$t
			return 0
		fi
		[ -n "$FW_REFUSED" ] || FW_REFUSED=$out
		# each try is a program start in node2: pace them
		[ "${FW_TAKE_PAUSE:-0.5}" = 0 ] || machine_nap "${FW_TAKE_PAUSE:-0.5}"
	done
	return 1
}

# fw_block I NAME: the first 16 bytes of /dev/lfs/NAME in node I, read with
# O_DIRECT: the counter (decimal) and the magic; dd's error if it fails
fw_block() {
	fw_node "$1" "dd if=/dev/lfs/$2 of=/tmp/blk bs=4096 count=1 iflag=direct status=none 2>&1 &&
echo \$(od -An -tu8 -N8 /tmp/blk | tr -d ' ') \$(tail -c +9 /tmp/blk | head -c 8 | tr -d '\\0')"
}

# fw_mark I PATH [DD OPTIONS]: node I writes the block of node2's marker
# (counter 0, magic node2mrk) at the start of PATH
fw_mark() {
	fw_node "$1" "{ printf '\\0\\0\\0\\0\\0\\0\\0\\0node2mrk'; head -c 4080 /dev/zero; } |
dd of=$2 bs=4096 count=1 status=none ${3:-oflag=direct}"
}

# fw_lose HOW: node1 loses its lease: cut (eth0 down: the librarian is out of
# reach), stop (SIGSTOP to its agent), kill (SIGKILL to its agent)
fw_lose() {
	case $1 in
	cut) fw_node 1 'ip link set eth0 down' ;;
	stop) em_agent_stop 1 STOP ;;
	kill) fw_node 1 'kill -KILL $(cat /tmp/agent.pid)' ;;
	esac
}

# fw_restore HOW: undo fw_lose; returns once node1 renews its lease again
fw_restore() {
	case $1 in
	cut) fw_node 1 'ip link set eth0 up' ;;
	stop) em_agent_stop 1 CONT ;;
	kill) fw_node 1 "wait_for 20 sh -c '! kill -0 \$(cat /tmp/agent.pid) 2>/dev/null'" && em_agent_start 1 >/dev/null ;;
	esac || return 1
	fw_node 1 "wait_for 30 sh -c '\$LFS_TOP/lvmish/lfsctl/lfsctl lease | grep -q \"ends in\"'"
}

# fw_start: the librarian and two nodes (1 GiB of fabric each, 16 MiB books),
# fence action eio. The lease (4 s: a lapse needs 4 s without a renewal) and
# the grace (the margin between node1's fence and node2's takeover that the
# checks see from the host) grow with the files tests/run runs side by side
# (LFS_VM_TIMEOUT_FACTOR), which slow the guests. Sets LEASE, GRACE, SHARE
# (node1's share directory) and MARK (node2's marker record); ends the test
# if they do not come up.
fw_start() {
	LEASE=$((4 * ${LFS_VM_TIMEOUT_FACTOR:-1})) GRACE=$((3 * ${LFS_VM_TIMEOUT_FACTOR:-1}))
	EM_LEASE=$LEASE EM_GRACE=$GRACE EM_FENCE_ACTION=eio em_start 2 1G 16M >&2
	t_ok $? "librarian (lease ${LEASE} s, grace ${GRACE} s) and two nodes up ($MACHINE_OUT)" || t_done
	SHARE=$MACHINE_OUT/node1/share
	MARK="0 node2mrk"
}
