# Shared by the guest scripts of tests/namespace: the module, two fabric
# devices of 2 MiB books, the test upcall server (upcalld) and the
# filesystem at $L. Source after tests/lib/tap.sh.
. "$LFS_TOP/tests/driver/guest/lib.sh"
export PATH=$LFS_TOP/build/tests:$PATH
L=/tmp/lfs # the guest's / is read-only
UP_STATE=/tmp/upcalld.state
UP_FAULT=/tmp/upcalld.fault
UP_LOG=/tmp/upcalld.log
UP_PIDFILE=/tmp/upcalld.pid
BOOK=$((2 << 20))

# ns_setup: lfs.ko, IG 0 = /dev/pmem0 and IG 1 = /dev/pmem1 (2 MiB books
# after a 2 MiB offset), the mount point.
ns_setup() {
	insmod "$LFS_KO" || return 1
	lfsctl attach /dev/pmem0 --ig 0 --book-size 2M --offset 2M >/dev/null || return 1
	lfsctl attach /dev/pmem1 --ig 1 --book-size 2M --offset 2M >/dev/null || return 1
	mkdir -p $L
}

# up_start [UPCALLD OPTIONS]: start the server, wait until it is registered.
# Its pid is in $UP_PIDFILE (t_run runs commands in a subshell).
up_start() {
	: >$UP_FAULT
	: >/tmp/upcalld.out
	upcalld --state $UP_STATE --fault $UP_FAULT --log $UP_LOG "$@" >/tmp/upcalld.out 2>&1 &
	echo $! >$UP_PIDFILE
	wait_for 60 grep -q ready /tmp/upcalld.out
}

up_pid() { cat $UP_PIDFILE 2>/dev/null; }

# up_kill SIGNAL: signal the server; for a deadly one, wait until it is gone.
up_kill() {
	local pid
	pid=$(up_pid)
	[ -n "$pid" ] || return 0
	kill -CONT "$pid" 2>/dev/null
	kill "-$1" "$pid" 2>/dev/null
	[ "$1" = STOP ] || [ "$1" = CONT ] && return 0
	wait_for 10 sh -c "[ ! -e /proc/$pid ] || grep -q '^[0-9]* (.*) Z' /proc/$pid/stat"
	rm -f $UP_PIDFILE
}

# up_stop: SIGTERM and wait (a stopped server is continued first).
up_stop() { up_kill TERM; }

# up_fault LINE...: the server's misbehaviour from its next request on.
up_fault() { printf '%s\n' "$@" >$UP_FAULT; }

# up_state FIELD: a field of LFS_CMD_UPCALL_GET (up_portid, up_pending...).
up_state() { nlraw -p up_get | sed -n "s/^$1=//p"; }

# errno_of CMD...: the errno name a command's failure printed (strace-free:
# the C helper fsops prints "ok" or "error ENAME").
# fs CMD...: run a command, print its output (stdout and stderr) on one line.
fs() { "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }

# ns_mount [OPTIONS]: mount the filesystem at $L.
ns_mount() { mount -t lfs ${1:+-o "$1"} lfs $L; }

# PMD faults (not fallbacks) while CMD runs.
pmd_faults() {
	local tr
	tr=$(tracing) || return 1
	echo 0 >$tr/tracing_on
	echo >$tr/trace
	echo 1 >$tr/events/fs_dax/dax_pmd_fault_done/enable
	echo 1 >$tr/tracing_on
	"$@" >/dev/null
	echo 0 >$tr/tracing_on
	echo 0 >$tr/events/fs_dax/dax_pmd_fault_done/enable
	grep dax_pmd_fault_done $tr/trace | grep -vc FALLBACK
}

# ns_teardown: nothing pending or active, unmount, unload.
ns_check_idle() {
	t_is "$(up_state up_pending) $(up_state nr_active)" "0 0" "$1: no upcall pending, no file active"
}
