#!/bin/bash
# LFS-TEST: host
# fence_command (docs/FENCING.md "Fencing outside the node"): before any
# other node takes over what a lapsed node held, the librarian runs the
# command for it and waits for its success without stopping its event loop.
# A failure or a timeout refuses the takeover naming the node and the
# command's status; a success lets every takeover of that node's
# activations through until the node is heard again. Bad settings are
# refused naming the value. Lease 2 s, grace 2 s: live for 4 s.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lmsg() { "$@" 2>&1 >/dev/null; }
now_ms() { date +%s%3N; }

# the settings refused, each named
bad() {
	printf 'librarian = { %s };\nfabric = { compact = { nodes = 2; books = 10; }; };\n' "$1" >"$T/bad.conf"
	local out rc
	out=$(timeout 10 "$LIB" -c "$T/bad.conf" --db "$T/never.db" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || { t_ok 1 "$3"; t_diag "exit $rc, output: $out"; return; }
	t_like "$out" "$2" "$3"
}
bad 'fence_command = [ "fence_ipmilan", "%n" ];' "bad.conf:1: fence_command\[0\] 'fence_ipmilan' must be an absolute path" \
	"a fence_command that is not an absolute path is refused, naming it"
bad 'fence_command = [ "/bin/true", "--plug=%q" ];' "bad.conf:1: fence_command\[1\] '--plug=%q': unknown escape '%q'" \
	"an unknown escape is refused, naming the argument"
bad 'fence_command = "/bin/true";' "bad.conf:1: 'fence_command' must be an array of strings" \
	"a fence_command that is a string is refused"
bad 'fence_command = ( "/bin/true", 3 );' "bad.conf:1: fence_command\[1\] must be a string" \
	"a fence_command argument that is not a string is refused"
bad 'fence_command = [ "/bin/true" ]; fence_timeout = 0;' "bad.conf:1: 'fence_timeout' = 0 is out of range \[1, 3600\]" \
	"fence_timeout 0 is refused, naming the value"
bad 'fence_timeout = 5;' "'fence_timeout' needs 'fence_command'" "fence_timeout without fence_command is refused"

# The fence agent: records its arguments; $T/fence.mode says what it does
# (ok: exit 0; fail: exit 3; hang: sleep with a child, killed at the timeout).
cat >"$T/fence.sh" <<'EOS'
#!/bin/bash
d=$(dirname "$0")
echo "$* $(date +%s%3N)" >>"$d/fence.log"
case $(cat "$d/fence.mode") in
ok) exit 0 ;;
fail) echo "fence.sh: no power switch answers for $1" >&2; exit 3 ;;
hang) sleep 60 & echo $! >"$d/fence.child"; wait ;;
esac
EOS
chmod +x "$T/fence.sh"
: >"$T/fence.log"
echo fail >"$T/fence.mode"

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" "share = \"rw\"; fence_command = [ \"$T/fence.sh\", \"%n\", \"--x=%%y\" ]; fence_timeout = 3;"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts with fence_command and fence_timeout 3 s"

for s in a b c d; do lc shelf.create "{\"name\":\"$s\",\"books\":1}" >/dev/null; done
ltls n1 shelf.activate '{"name":"a"}' >/dev/null
ltls n1 shelf.activate '{"name":"b"}' >/dev/null
ltls n1 shelf.activate '{"name":"c"}' >/dev/null
ltls n3 shelf.activate '{"name":"d"}' >/dev/null
take() { lmsg ltls n2 shelf.activate "{\"name\":\"$1\",\"takeover\":true}"; }
# until_not REGEX CMD...: run CMD every 0.1 s (at most 15 s) until its output does not match
until_not() {
	local re=$1 d=$((SECONDS + 15)) out
	shift
	while out=$("$@"); [[ $out =~ $re ]] && [ $SECONDS -lt $d ]; do sleep 0.1; done
	printf '%s\n' "$out"
}
e=$(take a)
t_like "$e" "EBUSY: cannot take over shelf 'a': it is active on node 'n1' \(rw\), which is live" "n1 is live: no fence yet"
t_is "$(wc -l <"$T/fence.log")" 0 "  and the fence_command did not run"

# (1) the command fails: refused with EIO naming the node and the status
e=$(until_not "which is live" take a)
t_like "$e" "EBUSY: cannot take over shelf 'a' yet: node 'n1' is no longer live and is being fenced: fence_command '$T/fence.sh' \(pid [0-9]+\) running for [0-9.]+ s of fence_timeout 3 s; ask again" \
	"n1 lapsed: the first takeover starts the fence_command and is told to ask again"
# (the command was started; its first line may not be written yet: a bounded poll)
for _ in $(seq 1 100); do [ -s "$T/fence.log" ] && break; sleep 0.05; done
t_is "$(cut -d' ' -f1,2 "$T/fence.log")" "n1 --x=%y" "  the command ran once, with %n and %% substituted"
e=$(until_not "being fenced" take a)
t_like "$e" "EIO: cannot take over shelf 'a': fencing node 'n1' failed: fence_command '$T/fence.sh' exited with status 3 after [0-9]+ ms; refused until a fence succeeds" \
	"the command exited 3: the takeover is refused with EIO, naming the node, the command and its status"
t_is "$(lc shelf.get '{"name":"a","limit":0}' | jq -c '[.activations[].node]')" '["n1"]' "  'a' is still n1's"
t_like "$(cat "$T/server.log")" "fencing node 'n1' failed: fence_command '$T/fence.sh' exited with status 3" "  the log says so"
t_like "$(cat "$T/server.log")" "fence.sh: no power switch answers for n1" "  with the command's own output"

# (2) the command hangs: killed at fence_timeout, refused; the loop runs meanwhile
echo hang >"$T/fence.mode"
e=$(take a)
t0=$(now_ms)
t_like "$e" "EBUSY: cannot take over shelf 'a' yet: node 'n1' is no longer live and is being fenced" "the next takeover runs the command again"
t1=$(now_ms)
hb=$(ltls n4 heartbeat | jq -c .lease_time)
t2=$(now_ms)
t_is "$hb" 2 "  another node's heartbeat is answered while it runs ($((t2 - t1)) ms)"
t_like "$(take a)" "EBUSY: .*being fenced: fence_command '$T/fence.sh' \(pid [0-9]+\) running for" "  and it is still running after that"
e=$(until_not "being fenced" take a)
t3=$(now_ms)
t_like "$e" "EIO: cannot take over shelf 'a': fencing node 'n1' failed: fence_command '$T/fence.sh' timed out after 3 s \(fence_timeout\) and was killed" \
	"the command hung: killed at fence_timeout and the takeover refused ($((t3 - t0)) ms)"
child=$(cat "$T/fence.child")
# gone, or a zombie (killed; its parent, killed too, no longer reaps it)
st=$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null)
t_ok "$([ -z "$st" ] || [ "$st" = Z ]; echo $?)" "  its process group went with it (its child $child is gone: '${st:-no process}')"
t_is "$(lc shelf.get '{"name":"a","limit":0}' | jq -c '[.activations[].node]')" '["n1"]' "  'a' is still n1's"

# (3) the command succeeds: the takeover is granted, others of n1 at once
echo ok >"$T/fence.mode"
n=$(wc -l <"$T/fence.log")
e=$(take a)
t_like "$e" "EBUSY: cannot take over shelf 'a' yet: node 'n1' is no longer live and is being fenced" "with a working command the next takeover starts it"
r=$(until_not "being fenced" take a; ltls n2 shelf.activate '{"name":"a","takeover":true}')
t_is "$(jq -c '[.activations[].node]' <<<"$(tail -n 1 <<<"$r")")" '["n2"]' "once it succeeded, the takeover is granted"
t_like "$(cat "$T/server.log")" "node 'n1' is fenced: fence_command '$T/fence.sh' succeeded" "  the log says n1 is fenced"
r=$(ltls n2 shelf.activate '{"name":"b","takeover":true}')
t_is "$(jq -c '[.activations[].node]' <<<"$r")" '["n2"]' "n1's other shelf 'b' is taken over at once"
t_is "$(wc -l <"$T/fence.log")" $((n + 1)) "  with no second run of the command"

# (4) a forced destroy waits for the fence too (n3, silent as long)
e=$(lmsg lc shelf.destroy '{"name":"d","force":true}')
t_like "$e" "EBUSY: cannot destroy shelf 'd' yet: node 'n3' is no longer live and is being fenced" "a forced destroy of a lapsed node's shelf starts its fence"
e=$(until_not "being fenced" lmsg lc shelf.destroy '{"name":"d","force":true}')
t_is "$e" "" "  and goes through once it succeeded"
t_is "$(grep -c '^n3 ' "$T/fence.log")" 1 "  the command ran for n3"

# (5) n1 heard again: live, and a later lapse needs a new fence; meanwhile
# n5 and n6 take shelves, n6 is set offline while live (fencing)
lc shelf.create '{"name":"e","books":1}' >/dev/null
lc shelf.create '{"name":"f","books":1}' >/dev/null
ltls n5 shelf.activate '{"name":"e"}' >/dev/null
ltls n6 shelf.activate '{"name":"f"}' >/dev/null
t_is "$(lc node.set_state '{"node":"n6","state":"offline"}' | jq -r .state)" fencing "n6 set offline while live: fencing"
ltls n1 heartbeat >/dev/null
t_like "$(take c)" "EBUSY: cannot take over shelf 'c': it is active on node 'n1' \(rw\), which is live" "n1 heard again: live, its fence is spent"
n=$(grep -c '^n1 ' "$T/fence.log")
e=$(until_not "which is live" take c)
t_like "$e" "being fenced" "n1 lapsed again: the takeover of 'c' runs a new fence"
r=$(until_not "being fenced" take c; ltls n2 shelf.activate '{"name":"c","takeover":true}')
t_is "$(jq -c '[.activations[].node]' <<<"$(tail -n 1 <<<"$r")")" '["n2"]' "  and is granted after it"
t_is "$(grep -c '^n1 ' "$T/fence.log")" $((n + 1)) "  the command ran once more for n1"

# (6) a node that is no longer live is set offline only once fenced
e=$(until_not "^$" lmsg lc node.set_state '{"node":"n5","state":"offline"}')
t_like "$e" "EBUSY: cannot set node 'n5' offline yet: node 'n5' is no longer live and is being fenced" \
	"n5 lapsed: setting it offline starts its fence"
r=$(until_not "being fenced" lmsg lc node.set_state '{"node":"n5","state":"offline"}'; lc node.set_state '{"node":"n5","state":"offline"}')
t_is "$(tail -n 1 <<<"$r" | jq -r .state)" offline "  and goes through once it succeeded"
t_is "$(lc shelf.get '{"name":"e","limit":0}' | jq -c '[.activations[].node]')" '[]' "  n5's activation of 'e' ended with it"

# (7) a fencing node's activations are released only once it is fenced
f6() { lc shelf.get '{"name":"f","limit":0}' | jq -c '[.activations[].node]'; }
t_is "$(until_not '"n6"' f6)" '[]' "n6 (set offline while live): its activation of 'f' is released once its lease ended"
t_ok "$(grep -q '^n6 ' "$T/fence.log"; echo $?)" "  the command ran for n6"
t_like "$(cat "$T/server.log")" "node 'n6' is fenced: fence_command" "  after the fence succeeded"

lt_stop
t_ok $? "the librarian stops cleanly"
lt_done
