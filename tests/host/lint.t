#!/bin/bash
# Kernel code passes checkpatch.pl (taken from Debian's linux-source-6.1).
. tests/lib/tap.sh
out=$(tools/lint 2>&1)
rc=$?
t_ok "$rc" "checkpatch.pl --no-tree is clean on driver/ ($(git ls-files 'driver/*.[ch]' | wc -l) files)" ||
	printf '%s\n' "$out" | head -n 30 | sed 's/^/#   /'
t_done
