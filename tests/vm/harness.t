#!/bin/bash
# LFS-TEST: vm
# The harness itself: a failing guest script, a guest kernel WARN and a hung
# guest each fail the run with a message naming the cause; a guest kernel
# that fails while booting, before the guest script, is booted again once
# (a WARN from the script's own doing is not). How a guest boots: the
# kernel at its PVH entry, or the bzImage; a fabric that must be fsdax
# already, and a VM that waits for another to convert it.
. tests/lib/tap.sh

expect_failure() {
	local desc=$1 pattern=$2 out rc
	shift 2
	out=$(tests/vm/vmrun --fabric-nodes 0 "$@" 2>&1)
	rc=$?
	t_ok "$([ "$rc" -ne 0 ]; echo $?)" "$desc: vmrun fails (exit $rc)"
	t_like "$out" "$pattern" "$desc: the message names the cause" ||
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/#   /'
	t_like "$out" "console log: /" "$desc: the console log path is printed"
	last=$out
}

expect_failure "failing guest script" \
	"guest script 'tests/vm/guest/fail.sh' failed with exit status 3" \
	--timeout 120 tests/vm/guest/fail.sh
first=$last
expect_failure "guest kernel WARN" \
	"guest kernel failure: .*(WARNING: CPU|Kernel panic).*" \
	--timeout 120 tests/vm/guest/warn.sh
[[ $last != *"booting again"* ]]
t_ok $? "guest kernel WARN: not booted again (the guest script had started)"
out=$PWD/tests/out/harness-$$-bootfail
rm -rf "$out"
expect_failure "guest kernel failing while booting" \
	"guest kernel failure: .*Kernel panic.*" \
	--timeout 120 --out "$out" --append rdinit=/nonexistent tests/vm/guest/true.sh
t_like "$last" "the guest kernel failed while booting, before any LFS code ran .*booting again, once" \
	"  it was booted again, once, and said so"
t_ok "$(grep -q 'Kernel panic' "$out/console.log.1"; echo $?)" "  the first boot's console is kept (console.log.1)"
t_ok "$(grep -q 'Kernel panic' "$out/console.log"; echo $?)" "  the second boot failed the same way: the run fails"
rm -rf "$out"
# (10 s: the timeout runs from QEMU's start whether the guest booted or
# not; it was 30, a minute of waiting beside another file)
expect_failure "hung guest" \
	"guest hung: no power-off within the $((10 * ${LFS_VM_TIMEOUT_FACTOR:-1}))s timeout" \
	--timeout 10 tests/vm/guest/hang.sh

# --- how a guest boots --------------------------------------------------------
t_like "$first" "booting 'fail' on [^ ]+ \(PVH; " "a guest boots with the kernel at its PVH entry point (the first run above)"
out=$(LFS_VM_BZIMAGE=1 tests/vm/vmrun --fabric-nodes 0 --timeout 120 tests/vm/guest/true.sh 2>&1)
t_ok $? "with LFS_VM_BZIMAGE=1, the same kernel boots from its bzImage"
t_like "$out" "booting 'true' on [^ ]+ \(bzImage; " "  vmrun says so"

# --- fabric files converted by one VM, used by another -------------------------
fab=$(mktemp -d /dev/shm/lfs-harness.XXXXXX)
vm=(tests/vm/vmrun --fabric-nodes 1 --fabric-size 256M --fabric-dir "$fab" --timeout 120)
out=$("${vm[@]}" --fabric-ready tests/vm/guest/true.sh 2>&1)
t_ok "$([ $? -ne 0 ]; echo $?)" "--fabric-ready on a new fabric file: vmrun fails"
t_like "$out" "guest setup failed: fabric setup failed: namespace0.0 is raw, not fsdax" "  naming the namespace and its mode"
a=$PWD/tests/out/harness-$$-a
rm -rf "$a" "$fab"/*
"${vm[@]}" --name a --out "$a" tests/vm/guest/true.sh >/dev/null 2>&1 &
apid=$!
out=$("${vm[@]}" --name b --fabric-after "$a/share/booted" tests/vm/guest/true.sh 2>&1)
t_ok $? "a VM started with another on a new fabric file waits for it (--fabric-after) and finds fsdax" ||
	printf '%s\n' "$out" | tail -n 3 | sed 's/^/#   /'
wait "$apid"
t_ok $? "  the other VM converted it"
out=$("${vm[@]}" --fabric-after /etc/hostname tests/vm/guest/true.sh 2>&1)
t_like "$out" "--fabric-after '/etc/hostname' must lie inside the project tree" "--fabric-after outside the project tree is refused"
rm -rf "$a" "$fab"
t_done
