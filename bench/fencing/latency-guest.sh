#!/bin/bash
# Guest side of bench/fencing/latency: the kernel's fence latency (from the
# lease's deadline to every covered object refusing writes and stores, as
# LFS_CMD_LEASE_GET reports it) with SHELVES active leased shelves and FILES
# open /lfs files, MAPPED of them mapped (a page stored into, then held),
# and, with STUCK=1, one write() stuck in a userfaultfd page nobody serves
# beside a file stored into every 20 ms (tests/namespace/stuckio.c). The
# lease (LEASE ms, fence action eio) is renewed by the test upcall server
# (tests/namespace/upcalld.c) and left to lapse EVENTS times; each lapse
# is a new lease epoch, so the shelves and files are made anew each time.
# One line per lapse in $LFS_RESULTS/latency.txt:
#   event N refused_ns R done_ns D lapses K
# (K > 1: more lapses than this one since the set-up, e.g. a renewal late
# under load; R and D are the last one's.) The kernel's log line of each
# lapse (timer, work, refused, end) is in $LFS_RESULTS/dmesg-fence.txt.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"
EVENTS=${LFS_BENCH_EVENTS:-20} SHELVES=${LFS_BENCH_SHELVES:-100}
FILES=${LFS_BENCH_FILES:-100} MAPPED=${LFS_BENCH_MAPPED:-10}
STUCK=${LFS_BENCH_STUCK:-1} LEASE=${LFS_BENCH_LEASE:-4000}
out=$LFS_RESULTS/latency.txt
: >"$LFS_RESULTS/dmesg-fence.txt"
t_fail() { t_ok 1 "$*"; }
: >"$out"
lease_field() { nlraw -p lease_get | sed -n "s/^$1=//p"; }
renewed() { nlraw -p lease_get | grep -q 'lease_left=[1-9]'; }
count_over() { [ "$(lease_field fence_count)" -gt "$1" ]; }

# shelves_up: SHELVES leased shelves of one book each on IG 1 (the files'
# books are on IG 0: upcalld puts a file's first book on its first IG).
shelves_up() {
	local i
	for ((i = 0; i < SHELVES; i++)); do
		lfsctl create "fb$i" "1:$i" --leased >/dev/null || return 1
	done
}
shelves_down() {
	local i
	for ((i = 0; i < SHELVES; i++)); do lfsctl remove "fb$i" >/dev/null || return 1; done
}
# files_up: FILES - MAPPED files held open by this shell, MAPPED by fsops.
files_up() {
	local i fd
	fds=()
	for ((i = MAPPED; i < FILES; i++)); do
		exec {fd}<>"$L/f$i" || return 1
		fds+=("$fd")
	done
	for ((i = 0; i < MAPPED; i++)); do
		mkfifo "/tmp/m$i.in"
		fsops open "$L/f$i" rw mmap 4096 shared store 0 1 wait <"/tmp/m$i.in" >"/tmp/m$i.out" 2>&1 &
		exec {fd}>"/tmp/m$i.in"
		mfds+=("$fd")
	done
	for ((i = 0; i < MAPPED; i++)); do
		wait_for 30 grep -q '^ok$' <(sed -n 3p "/tmp/m$i.out") || return 1
	done
}
files_down() {
	local fd
	for fd in "${fds[@]}" "${mfds[@]}"; do exec {fd}>&-; done
	fds=() mfds=()
	wait
	rm -f /tmp/m*.in
}

t_run "lfs.ko, IG 0 and 1" ns_setup
t_run "the server renews a $LEASE ms lease (fence action eio), OPEN is leased" \
	up_start --lease "$LEASE" --leased --fence-action eio
t_run "mount" ns_mount
t_run "$FILES files of 4 KiB" sh -c "for i in \$(seq 0 $((FILES - 1))); do \
	fsops open $L/f\$i rwc pwrite 0 4096 0 >/dev/null || exit 1; done"
t_run "g and h (stuckio)" sh -c "fsops open $L/g rwc pwrite 0 4096 0 >/dev/null && \
	fsops open $L/h rwc pwrite 0 4096 0 >/dev/null"
for ((e = 1; e <= EVENTS; e++)); do
	up_fault
	wait_for 30 renewed || { t_fail "event $e: the lease was not renewed"; break; }
	shelves_up || { t_fail "event $e: creating the shelves"; break; }
	files_up || { t_fail "event $e: opening the files"; break; }
	if [ "$STUCK" = 1 ]; then
		mkfifo /tmp/s.in
		stuckio $L/g $L/h </tmp/s.in >/tmp/s.out 2>&1 &
		exec {sfd}>/tmp/s.in
		wait_for 30 grep -qx stuck /tmp/s.out || { t_fail "event $e: stuckio"; break; }
	fi
	# a renewal late under load may have made a lapse of its own already
	c0=$(lease_field fence_count)
	up_fault norenew
	wait_for 30 count_over "$c0" || { t_fail "event $e: no fence measured"; break; }
	lapses=$(($(lease_field fence_count) - c0))
	printf 'event %d refused_ns %s done_ns %s lapses %d\n' "$e" "$(lease_field fence_last_ns)" \
		"$(lease_field fence_done_last_ns)" "$lapses" >>"$out"
	if [ "$STUCK" = 1 ]; then
		wait_for 30 grep -qx fenced /tmp/s.out
		echo go >&$sfd
		exec {sfd}>&-
		rm -f /tmp/s.in
	fi
	dmesg | grep 'fence of the lease' | tail -n "$lapses" >>"$LFS_RESULTS/dmesg-fence.txt"
	files_down
	shelves_down || { t_fail "event $e: removing the shelves"; break; }
done
t_is "$(wc -l <"$out")" "$EVENTS" "$EVENTS lapses measured"
nlraw -p lease_get >"$LFS_RESULTS/lease_get.txt"
up_fault
t_run "umount" umount $L
up_stop
t_done
