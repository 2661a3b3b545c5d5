#!/bin/bash
# Guest side of bench/lvmish/bench-lfsvol.sh: LVM2 on pmem0 and lfsvol on
# pmem1, interleaved per iteration, with systemd-udevd running.
. "$LFS_TOP/tests/lvmish/guest/common.sh"
N=${BENCH_N:-15}
K=${BENCH_TRACES:-5}
T=$LFS_RESULTS/times
: >"$T"
# timeit LABEL FILE CMD...: spawn-to-exit time of CMD, appended to FILE (ms).
# Not `date` around the command: under TCG each fork+exec of the shell costs
# about as much as a whole lfsvol command.
TI=$LFS_TOP/build/lvmish-bench/timeit
# lfsvol as installed on a local disk: the project tree is a 9p mount
# without page cache, while lvm runs from the cached root filesystem.
mkdir -p /tmp/bin
cp "$LFS_TOP/lvmish/lfsvol/lfsvol" "$LFS_TOP/build/lvmish-bench/tlsphase" /tmp/bin/ || exit 1
LFSVOL_BIN=/tmp/bin/lfsvol
L() { "$LFSVOL_BIN" -c "$CONF" "$@"; }

write_conf
# LFS gets IG 1 (/dev/pmem1) only, LVM2 gets /dev/pmem0; no auto shelves;
# generous timeouts: the host may be loaded.
cat >"$CONF" <<EOC
librarian = "$LFS_LIBRARIAN";
node = "node01";
key_file = "/tmp/node01.key";
connect_timeout = 60;
reply_timeout = 60;
fabric = ( { ig = 1; device = "/dev/pmem1"; } );
agent = { state_dir = "/run/lfs"; };
EOC
start_udev || exit 1
# only the naming rules: no agent pass may run in the middle of a measurement
rm -f /run/udev/rules.d/61-lfs-assemble.rules
udevadm control --reload

# LVM2 with udev_sync on, archives off (the root is read-only).
export LVM_SYSTEM_DIR=/tmp/lvm
mkdir -p /tmp/lvm /run/lock/lvm
cat >/tmp/lvm/lvm.conf <<EOC
devices { filter = [ "a|^/dev/pmem0$|", "r|.*|" ] }
backup { backup = 0 archive = 0 }
activation { udev_sync = 1 udev_rules = 1 monitoring = 0 }
EOC
pvcreate -q -y /dev/pmem0 && vgcreate -q vgb /dev/pmem0 || exit 1
insmod "${LFS_KO:-$LFS_TOP/driver/lfs.ko}" || exit 1
# new fabric memory is labelled once: every attach checks the label
L attach --init >/dev/null || exit 1
# The librarian takes new memory as unknown (new_books = "unknown") and
# allocates only books known to read as zeroes: the running agent's check
# reads every never-used book and, the device being labelled, zeroes those
# that hold anything else. Books 2N..4N-1 hold leftover bytes (1 MiB of
# random data at the start of each, at the fabric's 2 MiB data offset),
# written before any agent ran: the check zeroes them (loop 3 and the loop
# without the agent get them). The others read as zeroes (loops 1 and 2).
for b in $(seq $((2 * N)) $((4 * N - 1))); do
	head -c 1M /dev/urandom | dd of=/dev/pmem1 bs=1M seek=$((2 + b * 64)) oflag=direct conv=notrunc \
		status=none || exit 1
done
L agent --once || exit 1

# lvm_ops NAME LABEL-SUFFIX (the suffix of the lfsvol loop it runs beside)
lvm_ops() {
	$TI lvcreate$2 "$T" lvcreate -q -y -L 64M -n lv$1 vgb || exit 1
	[ -b /dev/vgb/lv$1 ] || { echo "no /dev/vgb/lv$1"; exit 1; }
	$TI lvchange_an$2 "$T" lvchange -q -an vgb/lv$1 || exit 1
	$TI lvchange_ay$2 "$T" lvchange -q -ay vgb/lv$1 || exit 1
	[ -b /dev/vgb/lv$1 ] || { echo "no /dev/vgb/lv$1 after -ay"; exit 1; }
}

# lfs_ops NAME LABEL-SUFFIX ZEROED: ZEROED (0/1) is what the new shelf's
# sysfs zeroed attribute must say (scrubbed books or not)
lfs_ops() {
	$TI lfsvol_create_a$2 "$T" "$LFSVOL_BIN" -c "$CONF" create $1 -s 64M -p RequestIG --ig 1 -a ||
		exit 1
	[ -b /dev/lfs/$1 ] || { echo "no /dev/lfs/$1"; exit 1; }
	z=$(cat "/sys/block/$(basename "$(readlink -f "/dev/lfs/$1")")/lfs/zeroed")
	[ "$z" = "$3" ] || { echo "/dev/lfs/$1: zeroed is $z, not $3"; exit 1; }
	$TI lfsvol_deactivate$2 "$T" "$LFSVOL_BIN" -c "$CONF" deactivate $1 || exit 1
	[ ! -e /dev/lfs/$1 ] || { echo "/dev/lfs/$1 still there after deactivate"; exit 1; }
	$TI lfsvol_activate$2 "$T" "$LFSVOL_BIN" -c "$CONF" activate $1 || exit 1
	[ -b /dev/lfs/$1 ] || { echo "no /dev/lfs/$1 after activate"; exit 1; }
}

# traces FILE NAME...: create -a, deactivate and activate of each NAME with
# LFSVOL_TRACE=1, from spawn to exit (TIMEIT_TRACE), appended to FILE (in
# the guest's tmpfs: a line written to the 9p share costs about 1 ms)
traces() {
	local f=$1 n
	shift
	for n in "$@"; do
		for c in "create $n -s 64M -p RequestIG --ig 1 -a" "deactivate $n" "activate $n"; do
			echo "== ${c%% *}" >>"$f"
			# shellcheck disable=SC2086
			TIMEIT_TRACE=1 LFSVOL_TRACE=1 $TI trace /dev/null "$LFSVOL_BIN" -c "$CONF" $c \
				2>>"$f" || exit 1
		done
	done
}

# remove_zeroed NAME...: remove the shelves, and wait until the agent (or
# scrub, without it) has zeroed their books: they are then FREE and known zero.
remove_zeroed() {
	local n j
	for n in "$@"; do L remove "$n" >/dev/null || exit 1; done
	if [ "${1:-}" ] && [ -n "$apid" ]; then
		for j in $(seq 600); do
			[ "$(L fabric --json | jq '.[0].zombie')" = 0 ] && return 0
			sleep 0.1
		done
		echo "the agent did not zero the removed books"; exit 1
	fi
	L scrub >/dev/null || exit 1
}

# The deployment: lfs-agent.service running for a long time, each lfsvol
# command borrowing its librarian session. LVM2 and lfsvol alternate, so a
# changing host load hits both alike.
"$LFSVOL_BIN" -c "$CONF" agent >>/tmp/agent.log 2>&1 &
apid=$!
for j in $(seq 300); do [ -S /run/lfs/agent.sock ] && break; sleep 0.1; done
# the agent's start-up pass (attach, heartbeat, scrub) runs no command: wait
L status >/dev/null || exit 1
# and its check of the never-used books must be over before any
# measurement: it found the untouched ones zero and zeroed the others
nfree=$(jq '.[] | select(.ig == 1) | .books' < <("$LFS_TOP/lvmish/lfsctl/lfsctl" fabric --json))
t0=$SECONDS
for j in $(seq 3000); do
	L status --json | jq -r '.[0].agent.check' | grep -q '^idle' && break
	sleep 0.1
done
got=$(L status --json | jq -c '.[0].agent | [.checked_zero, .zeroed_free, .checked_other]')
L status --json | jq -r '"# agent check: \(.[0].agent.check)"'
tail -n 20 /tmp/agent.log | sed 's/^/# agent.log: /'
echo "# agent check of never-used books: [found zero, zeroed, neither] = $got in $((SECONDS - t0)) s"
want="[$((nfree - 2 * N)),$((2 * N)),0]"
[ "$got" = "$want" ] || { echo "check found $got, not $want"; exit 1; }
# The pool in steady state: a used book comes back ZOMBIE, the agent zeroes
# it and the librarian then knows it reads as zeroes. Books 0..N-1 of IG 1 go
# through that cycle once. The librarian hands out the lowest free books
# first (RequestIG), so the first loop's shelves get the scrubbed books, the
# second loop's those found zero, the third loop's those zeroed by the check.
L create warm -s "${N}b" -p RequestIG --ig 1 >/dev/null || exit 1
remove_zeroed warm
for i in $(seq "$N"); do
	lvm_ops "$i" ""
	lfs_ops a$i "" 1
done
for i in $(seq "$N"); do
	lvm_ops "f$i" _fresh
	lfs_ops f$i _fresh 1
done
for i in $(seq "$N"); do
	lvm_ops "u$i" _dirty
	lfs_ops u$i _dirty 1
done
# Traces with the agent, on scrubbed books: loop 1's first K shelves go,
# the agent zeroes their books, the traced shelves get them.
mapfile -t tn < <(seq -f "t%g" "$K")
remove_zeroed $(seq -f "a%g" "$K")
traces /tmp/trace-agent "${tn[@]}"
remove_zeroed "${tn[@]}"
kill "$apid"
wait "$apid"
apid=
# Traces without the agent, on the scrubbed books the traced shelves had.
traces /tmp/trace-plain "${tn[@]}"
# The plain path: no agent, a TLS session of lfsvol's own per command
# (books that held leftover bytes, zeroed by the check, as loop 3), beside
# LVM2 again.
for i in $(seq "$N"); do
	lvm_ops "n$i" _plain
	lfs_ops n$i _plain 1
done
# Where a session of lfsvol's own goes (tlsphase), K times each way.
host=${LFS_LIBRARIAN%:*} port=${LFS_LIBRARIAN#*:}
for i in $(seq "$K"); do
	for m in lib raw pipelined tcp; do
		/tmp/bin/tlsphase $m "$host" "$port" node01 /tmp/node01.key | sed "s/^/$m /" \
			>>/tmp/tlsphase || exit 1
	done
done
# Start-up: --help, no librarian, no kernel (BENCH_STARTUP runs).
for i in $(seq "${BENCH_STARTUP:-20}"); do $TI lfsvol_help "$LFS_RESULTS/startup" "$LFSVOL_BIN" --help || exit 1; done
cp /tmp/trace-agent /tmp/trace-plain /tmp/tlsphase "$LFS_RESULTS/" || exit 1
echo "ok 1 - benchmark ran"
