# TAP helpers for shell tests (host and guest). Source it, then:
#   t_ok COND_RC "description"          record a result from an exit code
#   t_run "description" CMD [ARGS...]   run a command, pass if it exits 0
#   t_fails "description" CMD [ARGS...] pass if the command exits non-zero
#   t_is GOT WANT "description"         string equality, shows both on failure
#   t_like GOT REGEX "description"      extended-regex match
#   t_diag "text"                       a comment line
#   t_skip "why"                        a check not run here (TAP "# SKIP why")
#   t_done                              print the plan, exit 0 iff all passed
# LFS_TAP_TIMES=1 prints "# Ns", the seconds since the start, before each check.
# Every failure prints what was expected and what was seen.

T_N=0
T_FAILED=0

t_diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

t_ok() {
	local rc=$1
	shift
	T_N=$((T_N + 1))
	[ -z "${LFS_TAP_TIMES:-}" ] || printf '# %ss\n' "$SECONDS"
	if [ "$rc" -eq 0 ]; then
		printf 'ok %d - %s\n' "$T_N" "$*"
	else
		printf 'not ok %d - %s\n' "$T_N" "$*"
		T_FAILED=$((T_FAILED + 1))
	fi
	return "$rc"
}

t_run() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	t_ok "$rc" "$desc" || {
		t_diag "command failed (exit $rc): $*"
		printf '%s\n' "$out" | sed 's/^/#   /' | tail -n 20
	}
	return "$rc"
}

t_fails() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		t_ok 0 "$desc"
		return 0
	fi
	t_ok 1 "$desc"
	t_diag "expected failure but command succeeded: $*"
	printf '%s\n' "$out" | sed 's/^/#   /' | tail -n 20
	return 1
}

t_is() {
	if [ "$1" = "$2" ]; then
		t_ok 0 "$3"
		return 0
	fi
	t_ok 1 "$3"
	t_diag "expected: '$2'"
	t_diag "     got: '$1'"
	return 1
}

t_like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		t_ok 0 "$3"
		return 0
	fi
	t_ok 1 "$3"
	t_diag "expected to match: $2"
	t_diag "                got: $1"
	return 1
}

t_skip() {
	T_N=$((T_N + 1))
	printf 'ok %d # SKIP %s\n' "$T_N" "$*"
}

t_done() {
	printf '1..%d\n' "$T_N"
	[ "$T_N" -gt 0 ] || { t_diag "no test ran"; exit 1; }
	[ "$T_FAILED" -eq 0 ]
	exit $?
}
