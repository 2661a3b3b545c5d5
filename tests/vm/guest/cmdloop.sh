#!/bin/bash
# Guest side of tests/lib/machine.sh: run the host's commands one at a time.
# The host drops cmd/N.sh into the results share (atomically, by rename); this
# loop runs it and leaves cmd/N.out and then cmd/N.rc (the host waits for a
# non-empty N.rc, so N.out is complete by then). A command file holding
# only "#exit" ends the loop and so powers the guest off.
#
# Under TCG every program start costs 70-200 ms (bash 180, head 150, mv
# 200), which once made a round trip 1.1 s for `true'. So the loop starts
# none: it reads with builtins, runs the command sourced in a subshell (a
# fork, 10 ms, where `bash FILE' is an exec) and writes the files in place.
# A command sees a fresh subshell: its own variables and traps, `exit' ends
# it only; $$ is this loop's pid (use $BASHPID). `nap SECONDS' waits
# without a program start, as the loop does (fd 3: a FIFO nobody writes).
__cl_dir=$LFS_RESULTS/cmd
mkdir -p "$__cl_dir"
echo ready >"$__cl_dir/ready.tmp" && mv "$__cl_dir/ready.tmp" "$__cl_dir/ready"
# The wait between looks is a read with a timeout on a FIFO nobody writes:
# a builtin, where forking sleep 20 times a second cost an idle guest
# under TCG more than half a host core. Looking itself costs: a stat over
# 9p 20 times a second kept an idle guest at 0.19 of a host core (0.006
# with the loop blocked). So with vmrun --doorbell the loop blocks on the
# virtio port the host rings after it drops a command (machine.sh
# node_exec), and looks once a second besides, in case a ring was lost.
__cl_fifo=$(mktemp -u /tmp/cmdloop.XXXXXX)
mkfifo "$__cl_fifo" && exec 3<>"$__cl_fifo" && rm -f "$__cl_fifo" || exit 1
unset __cl_fifo
__cl_bell=
if [ -n "${LFS_DOORBELL_DEV:-}" ] && exec 4<"$LFS_DOORBELL_DEV"; then
	__cl_bell=1
fi
# (0 once the time is up, as sleep; sleep itself where fd 3 is not the FIFO)
nap() {
	read -r -t "$1" -u 3 _ 2>/dev/null
	[ $? -gt 128 ] || sleep "$1"
}
__cl_n=1
while :; do
	__cl_f=$__cl_dir/$__cl_n.sh
	# Waiting here is bounded by vmrun's --timeout.
	until [ -e "$__cl_f" ]; do
		if [ -n "$__cl_bell" ]; then
			# (end of file, not a timeout: poll as without the port)
			read -r -t 1 -u 4 _ || { [ $? -gt 128 ] || nap 0.05; }
		else
			nap 0.05
		fi
	done
	__cl_first=
	IFS= read -r -n 5 __cl_first <"$__cl_f"
	[ "$__cl_first" = "#exit" ] && exit 0
	(
		cd "$LFS_TOP" || exit
		__cl_f=$__cl_f
		unset __cl_dir __cl_n __cl_first __cl_bell
		exec 4<&-
		. "$__cl_f"
	) </dev/null >"$__cl_dir/$__cl_n.out" 2>&1
	echo $? >"$__cl_dir/$__cl_n.rc"
	__cl_n=$((__cl_n + 1))
done
