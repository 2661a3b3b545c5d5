#!/bin/bash
# LFS-TEST: vm
# The harness itself: a failing guest script, a guest kernel WARN and a hung
# guest each fail the run with a message naming the cause; a guest kernel
# that fails while booting, before the guest script, is booted again once
# (a WARN from the script's own doing is not).
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
expect_failure "hung guest" \
	"guest hung: no power-off within the 30s timeout" \
	--timeout 30 tests/vm/guest/hang.sh
t_done
