#!/bin/bash
# The librarian's threads under ThreadSanitizer: the event loop, the lease
# thread (beat.c) and the checkpoint thread share the lease state, the
# connections they hand over and the catalogue's WAL. beat.t (the hand-over,
# a loop stuck in a request, node states, liveness) and fence.t (heartbeats,
# probes, nodes set offline while they heartbeat) run against the TSan build
# (librarian/build-tsan, made by `make`); any report fails.
. tests/lib/tap.sh

TSAN_BIN=librarian/build-tsan/librarian
[ -x "$TSAN_BIN" ] || { echo "Bail out! $TSAN_BIN not built (run make)"; exit 1; }
R=$(mktemp -d /tmp/lfs-tsan.XXXXXX)
trap 'rm -rf "$R"' EXIT
export TSAN_OPTIONS="log_path=$R/tsan halt_on_error=0"
for t in beat fence; do
	out=$(LIBRARIAN_BIN=$TSAN_BIN bash "tests/librarian/$t.t" 2>&1)
	pass=$(grep -c '^ok ' <<<"$out")
	fail=$(grep -c '^not ok ' <<<"$out")
	t_ok "$([ "$fail" = 0 ] && [ "$pass" -gt 10 ]; echo $?)" \
		"$t.t passes against the ThreadSanitizer build ($pass passed, $fail failed)"
	[ "$fail" = 0 ] || grep -A3 '^not ok' <<<"$out" | head -n 20 | sed 's/^/#   /'
done
reports=$(ls "$R"/tsan.* 2>/dev/null)
t_is "$(cat /dev/null $reports | grep -c 'WARNING: ThreadSanitizer')" "0" "no ThreadSanitizer report"
[ -z "$reports" ] || cat $reports | head -n 60 | sed 's/^/#   /'
t_done
