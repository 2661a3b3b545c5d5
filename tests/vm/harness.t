#!/bin/bash
# LFS-TEST: vm
# The harness itself: a failing guest script, a guest kernel WARN and a hung
# guest each fail the run with a message naming the cause.
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
}

expect_failure "failing guest script" \
	"guest script 'tests/vm/guest/fail.sh' failed with exit status 3" \
	--timeout 120 tests/vm/guest/fail.sh
expect_failure "guest kernel WARN" \
	"guest kernel failure: .*(WARNING: CPU|Kernel panic).*" \
	--timeout 120 tests/vm/guest/warn.sh
expect_failure "hung guest" \
	"guest hung: no power-off within the 30s timeout" \
	--timeout 30 tests/vm/guest/hang.sh
t_done
