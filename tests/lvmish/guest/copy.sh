# lfsvol copy (issue 33 item 2) in lifecycle.sh's first boot, with the agent
# running and every book FREE (sourced; L, wait_for, nozombie are the
# caller's). The bytes: cmp of the two devices and an ext4 -o dax file read
# back from the copy; the attributes; a read-only SRC left so; Ctrl-C
# removing DST; a copier killed leaving DST marked lfs.incomplete, which
# activate refuses until it is removed. The refusals that need no kernel
# are tests/lvmish/copy.t's.
copy_t0=$(date +%s%N)
t_run "create src -s 1b -p RandomBooks -a" L create src -s 1b -p RandomBooks -a
L attr set src user.app pg >/dev/null && L attr set src user.tier gold >/dev/null
mkfs.ext4 -q -b 4096 -L srcfs /dev/lfs/src && mount -o dax /dev/lfs/src /tmp/mnt &&
	head -c 8M /dev/urandom >/tmp/mnt/data
ssum=$(sha256sum </tmp/mnt/data)
umount /tmp/mnt
before=$(L list --json)
out=$(L copy src dst 2>&1)
t_is "$?" 7 "copy of a shelf active here read-write is refused (exit 7)"
t_like "$out" "shelf .src' is active on this node for writing" "  naming it: $out"
t_is "$(L list --json)" "$before" "  and nothing changed"
t_run "deactivate src" L deactivate src

out=$(L copy src dst --json 2>/tmp/copy.err)
t_is "$?" 0 "copy src dst" || t_diag "$(cat /tmp/copy.err)"
t_like "$(cat /tmp/copy.err)" "^copied shelf src to dst: 64 MiB in [0-9.]+ s, [0-9]+ MiB/s$" \
	"not on a terminal: one final line: $(cat /tmp/copy.err)"
t_is "$(jq -c '[.command, .source, .bytes, .shelf.name, .shelf.books, (.seconds | type), (.mib_per_s | type)]' <<<"$out")" \
	'["copy","src",67108864,"dst",1,"number","number"]' "copy --json: the result object"
attrs() { L attr list "$1" | grep -v '^lfs.allocation=' | sort | paste -sd' '; }
t_is "$(attrs dst)" "$(attrs src)" "dst has src's attributes: $(attrs dst)"
t_is "$(L list --json | jq -c '[.[] | select(.name == "src" or .name == "dst") | .activations]')" '[[],[]]' \
	"both are inactive afterwards, as src was"
t_run "activate src --shared, dst" L activate --shared src dst
t_ok "$(cmp /dev/lfs/src /dev/lfs/dst; echo $?)" "dst's bytes are src's (cmp of the devices)"
mount -o dax /dev/lfs/dst /tmp/mnt
t_is "$(sha256sum </tmp/mnt/data)" "$ssum" "ext4 -o dax mounted from dst: the file is intact"
umount /tmp/mnt
L deactivate dst >/dev/null
# on a terminal (script(1) gives it one) the progress line: done of total, percent, rate
out=$(script -qec "$LFSVOL_BIN -c $CONF copy src dst2" /dev/null)
t_ok $? "copy of src while it is active here read-only" || t_diag "$out"
t_like "$out" "copying src: 64 MiB of 64 MiB \(100%\), [0-9]+ MiB/s" \
	"on a terminal: a progress line, done of total and the rate"
t_is "$(L list --json | jq -c '[.[] | select(.name == "src" or .name == "dst2") | [.name, .activations[0].mode]]')" \
	'[["dst2",null],["src","ro"]]' "  src stays active read-only, dst2 is not active"

# Without the naming rule the copy waits (up to 10 s) for udev's
# /dev/lfs/DST once the kernel has DST, made with its lfs.incomplete mark:
# a signal sent then reaches the copy in the middle, every time.
# copy_to DST SIGNAL: start a copy, send it SIGNAL there; its exit status
copy_to() {
	# the program itself, not L in a subshell: the signal is for lfsvol
	"$LFSVOL_BIN" -c "$CONF" copy src "$1" >/tmp/copy.err 2>&1 &
	cpid=$!
	has_dst() { grep -qx "$1" /sys/block/lfs*/lfs/name; }
	wait_for 20 has_dst "$1" || t_diag "the kernel never had $1"
	kill -"$2" "$cpid"
	wait "$cpid"
}
mv /run/udev/rules.d/60-lfs.rules /tmp/60-lfs.rules.off && udevadm control --reload
before=$(L list --json | jq -c '[.[] | .name]')
copy_to dst3 INT
t_is "$?" 1 "Ctrl-C (SIGINT) ends a copy: exit 1"
t_like "$(cat /tmp/copy.err)" "interrupted by a signal" "  saying so"
t_like "$(cat /tmp/copy.err)" "removed the incomplete copy dst3" "  and removing dst3"
t_is "$(L list --json | jq -c '[.[] | .name]')" "$before" "  which is gone"
copy_to dst4 KILL
mv /tmp/60-lfs.rules.off /run/udev/rules.d/60-lfs.rules && udevadm control --reload
t_like "$(L attr get dst4 lfs.incomplete)" "^copy of src \($(L list --json | jq -r '.[] | select(.name == "src") | .uuid')\) by node node01 started at [0-9]+$" \
	"a copier killed leaves dst4 marked lfs.incomplete"
L deactivate dst4 >/dev/null 2>&1
out=$(L activate dst4 2>&1)
t_is "$?" 7 "activate refuses the incomplete dst4 (exit 7)"
t_like "$out" "shelf 'dst4' is incomplete \(lfs.incomplete: copy of src" "  saying why: $out"
t_run "remove -f dst4" L remove -f dst4

# The node agent copies the bytes, in a process of its own: the copy
# outlives its command. --max-rate 16M makes a 64 MiB copy last 4 s;
# status is asked until it shows the copy running (the check fails if the
# copy is over first), and then at once something stops mid-copy.
agent_t0=$(date +%s%N)
L deactivate src >/dev/null
# bg_copy DST CMD...: a copy of src to DST in the background ($cpid);
# once status shows it running, CMD (a function: $cpid is set by then)
bg_copy() {
	local dst=$1 i seen=no
	shift
	"$LFSVOL_BIN" -c "$CONF" copy --max-rate 16M src "$dst" >/tmp/copy.err 2>&1 &
	cpid=$!
	for i in $(seq 300); do
		if L status --json | jq -e --arg d "$dst" \
			'.[0].agent.copies[] | select(.dest == $d and .state == "running" and .bytes < .total and .total == 67108864)' \
			>/dev/null; then
			seen=yes
			"$@"
			break
		fi
		kill -0 "$cpid" 2>/dev/null || break
	done
	t_is "$seen" yes "lfsvol status --json shows the agent's copy of src to $dst running, bytes of total"
}
kill_copier() { kill -KILL "$cpid"; }
bg_copy dst5 kill_copier
wait "$cpid" 2>/dev/null
t_like "$(L status | grep 'agent: copy')" \
	"^agent: copy src to dst5: [0-9.]+ [KMG]?i?B of 64 MiB \([0-9 ]+%\), [0-9]+ MiB/s, (running|done)$" \
	"lfsvol copy killed (SIGKILL): lfsvol status shows the agent's copy: $(L status | grep 'agent: copy')"
t_like "$(L attr get dst5 lfs.incomplete)" "^copy of src" "  and dst5 is still marked"
out=$(L copy --wait dst5 2>&1)
t_is "$?" 0 "copy --wait dst5 follows the agent's copy to its end" || t_diag "$out"
t_like "$out" "^copied shelf src to dst5: 64 MiB in [0-9.]+ s, [0-9]+ MiB/s$" "  $out"
t_is "$(L attr list dst5 | grep -c '^lfs.incomplete=')" 0 "  and takes the mark off dst5"
t_is "$(L list --json | jq -c '[.[] | select(.name == "src" or .name == "dst5") | .activations]')" '[[],[]]' \
	"  and puts both back as they were (inactive)"
t_is "$(L status --json | jq -c '.[0].agent.copies')" '[]' "  and the agent forgets the copy"
L activate --shared src dst5 >/dev/null
t_ok "$(cmp /dev/lfs/src /dev/lfs/dst5; echo $?)" "dst5's bytes are src's (cmp), copied by the agent after its command died"
L deactivate src dst5 >/dev/null
t_diag "  lap: SIGKILL + --wait $(( ($(date +%s%N) - agent_t0) / 1000000 )) ms"

# Ctrl-C of lfsvol copy during the agent's copy: the agent stops it, DST goes
before=$(L list --json | jq -c '[.[] | [.name, .activations]]')
int_copier() { kill -INT "$cpid"; }
bg_copy dst7 int_copier
wait "$cpid"
t_is "$?" 1 "Ctrl-C (SIGINT) during the agent's copy: exit 1"
out=$(tr '\n' ' ' </tmp/copy.err)
t_like "$out" "stopped the node agent's copy.*removed the incomplete copy dst7" \
	"  the agent's copy stopped, dst7 removed: $out"
t_is "$(L list --json | jq -c '[.[] | [.name, .activations]]')" "$before" "  shelves and activations as before"
t_is "$(L status --json | jq -c '.[0].agent.copies')" '[]' "  and the agent has forgotten the copy"

t_diag "  lap: + Ctrl-C $(( ($(date +%s%N) - agent_t0) / 1000000 )) ms"

# The agent stopped (restarted) mid-copy: its copy stops, the command says
# so, and dst6 stays marked, refused by activate
bg_copy dst6 kill "$apid"
wait "$apid"
t_is "$?" 0 "the agent stops cleanly (SIGTERM) in the middle of a copy"
t_diag "  lap: + agent stopped $(( ($(date +%s%N) - agent_t0) / 1000000 )) ms"
wait "$cpid"
t_is "$?" 1 "  lfsvol copy fails (exit 1)"
t_like "$(cat /tmp/copy.err)" "the node agent went away during the copy: shelf .dst6' stays marked lfs.incomplete" \
	"  saying dst6 stays marked"
"$LFSVOL_BIN" -c "$CONF" agent >>/tmp/agent.log 2>&1 &
apid=$!
agent_up() { [ -S /run/lfs/agent.sock ] && [ "$(jq .pid /run/lfs/agent.json 2>/dev/null)" = "$apid" ]; }
t_ok "$(wait_for 60 agent_up; echo $?)" "the agent starts again"
t_diag "  lap: + agent started $(( ($(date +%s%N) - agent_t0) / 1000000 )) ms"
out=$(L copy --wait dst6 2>&1)
t_is "$?" 6 "copy --wait dst6: the new agent has no such copy (exit 6)"
t_like "$out" "remove -f dst6" "  and says to remove dst6"
L deactivate dst6 src >/dev/null
out=$(L activate dst6 2>&1)
t_is "$?" 7 "activate refuses dst6, whose copy the agent's restart stopped (exit 7)"
t_run "remove -f dst6" L remove -f dst6
t_diag "the agent's copy checks took $(( ($(date +%s%N) - agent_t0) / 1000000 )) ms"
for s in src dst dst2 dst5; do L remove -f "$s" >/dev/null || t_diag "remove $s failed"; done
t_ok "$(wait_for 300 nozombie; echo $?)" "the agent zeroes the copies' books"
t_diag "the copy checks took $(( ($(date +%s%N) - copy_t0) / 1000000 )) ms"
