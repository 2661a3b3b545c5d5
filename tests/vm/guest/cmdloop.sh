#!/bin/bash
# Guest side of tests/lib/machine.sh: run the host's commands one at a time.
# The host drops cmd/N.sh into the results share (atomically, by rename); this
# loop runs it and leaves cmd/N.out and then cmd/N.rc. A command file holding
# only "#exit" ends the loop and so powers the guest off.
dir=$LFS_RESULTS/cmd
mkdir -p "$dir"
echo ready >"$dir/ready.tmp" && mv "$dir/ready.tmp" "$dir/ready"
# The wait between looks is a read with a timeout on a FIFO nobody writes:
# a builtin, where forking sleep 20 times a second cost an idle guest
# under TCG more than half a host core.
fifo=$(mktemp -u /tmp/cmdloop.XXXXXX)
mkfifo "$fifo" && exec 3<>"$fifo" && rm -f "$fifo" || exit 1
n=1
while :; do
	f=$dir/$n.sh
	# Waiting here is bounded by vmrun's --timeout.
	until [ -e "$f" ]; do read -r -t 0.05 -u 3 _; done
	[ "$(head -c 5 "$f")" = "#exit" ] && exit 0
	(cd "$LFS_TOP" && bash "$f" 3<&-) </dev/null >"$dir/$n.out.tmp" 2>&1
	echo $? >"$dir/$n.rc.tmp"
	mv "$dir/$n.out.tmp" "$dir/$n.out"
	mv "$dir/$n.rc.tmp" "$dir/$n.rc"
	n=$((n + 1))
done
