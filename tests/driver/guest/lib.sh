# Shared by the guest scripts of tests/driver: paths, state snapshots and
# polling. Source after tests/lib/tap.sh.
LFSCTL=$LFS_TOP/lvmish/lfsctl/lfsctl
BIN=$LFS_TOP/build/driver-tests
export PATH=$BIN:$PATH

lfsctl() { "$LFSCTL" "$@"; }

# Everything the driver reports, for "nothing changed" checks.
lfs_state() {
	"$LFSCTL" fabric --json && "$LFSCTL" list --json
}

# wait_for SECONDS CMD...: poll CMD until it succeeds, at most SECONDS.
wait_for() {
	local limit=$1 start=$SECONDS
	shift
	until "$@"; do
		[ $((SECONDS - start)) -lt "$limit" ] || return 1
		sleep 0.1
	done
}

# Elapsed time, as a TAP comment.
t_time() { t_diag "$SECONDS s: $*"; }

# tracefs, for the fs_dax tracepoints.
tracing() {
	local t=/sys/kernel/tracing
	[ -e $t/trace ] || mount -t tracefs nodev $t || return 1
	echo $t
}
