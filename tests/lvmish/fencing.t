#!/bin/bash
# LFS-TEST: vm
# The node's side of fencing (issue 14, docs/FENCING.md), one node with two
# fabric devices and a librarian with a 4 s lease: fabric labels (devices
# swapped in lfs.conf are refused by the label check and no byte of either
# changes; an unlabelled device is refused with the hint to label it), every
# activation leased, the kernel fencing a leased shelf by itself after the
# lease when the agent is stopped (SIGSTOP) or killed (SIGKILL), no
# activation while the lease is expired, the agent fencing an activation the
# librarian no longer lists and every shelf when the node is set offline,
# and status showing fenced shelves, the lease and the renewal log.
# fence_action is eio: a fenced shelf still open fails its I/O (the reset
# action restarts the node: the lead's multi-node tests).
# Last, nodes follow the leader (docs/HA.md): two librarians on one
# PostgreSQL, lfs.conf listing both; the leader stopped (SIGSTOP) past its
# row's TTL: its acknowledgements renew nothing, the agent switches to the
# new leader within about one heartbeat interval of the takeover, and the
# kernel's lease never lapses.
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
FL_PIDS=()
fl_cleanup() {
	local p
	for p in "${FL_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	declare -F lt_pg_stop >/dev/null && lt_pg_stop
	rm -f "$FL_AUDIT"
}
trap 'em_cleanup; fl_cleanup' EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

LEASE=4
# the emulation's slack in the fence's time: 2 s, times the files tests/run
# runs side by side (LFS_VM_TIMEOUT_FACTOR)
SLACK=$((2 * ${LFS_VM_TIMEOUT_FACTOR:-1}))
# the two PostgreSQL librarians' ports, forwarded to the node from its boot
PA=$(em_free_port) PB=$(em_free_port)
[ "$PA" != "$PB" ] || PB=$(em_free_port)
# the audit trail: attach --init's free.forget is seen there
FL_AUDIT=$(mktemp /tmp/lfs-fencing-audit.XXXXXX)
EM_LIBRARIAN_MORE="audit_log = \"$FL_AUDIT\";" EM_FWD_MORE=$PA,$PB EM_DEVICES=2 EM_LEASE=$LEASE EM_GRACE=2 EM_FENCE_ACTION=eio em_start 1 1G 64M >&2
t_ok $? "librarian with a ${LEASE} s lease and one node with two fabric devices up ($MACHINE_OUT)" || t_done

# n1 'commands': run in node1 with L (lfsvol), lfsctl, the test helpers and
# wait_for SECONDS CMD... (a bounded poll)
n1() {
	em_node 1 "lfsctl() { \$LFS_TOP/lvmish/lfsctl/lfsctl \"\$@\"; }
wait_for() {
	local end=\$(( \$(date +%s%N) / 1000000 + \$1 * 1000 ))
	shift
	until \"\$@\"; do
		[ \$(( \$(date +%s%N) / 1000000 )) -lt \$end ] || return 1
		sleep 0.1
	done
}
state() { cat /sys/block/\$(basename \$(readlink -f /dev/lfs/\$1))/lfs/state; }
fenced() { [ \"\$(state \$1)\" = fenced ]; }
leased() { lfsctl lease | grep -q 'ends in'; }
$1"
}
sums() { sha256sum "$MACHINE_FABRIC"/fam0.img "$MACHINE_FABRIC"/fam1.img | cut -c1-64 | paste -sd' '; }

# --- labels ---------------------------------------------------------------
fabric=$(em_admin auth | jq -r .fabric_uuid)
t_like "$fabric" '^[0-9a-f-]{36}$' "the librarian's fabric UUID: $fabric"
t_is "$(n1 'lfsctl fabric --json | jq -c "[.[] | [.ig, .fabric_uuid]]"')" "[[0,\"$fabric\"],[1,\"$fabric\"]]" \
	"attach --init labelled both devices for this fabric and attached them"
n1 'kill $(cat /tmp/agent.pid); wait_for 10 sh -c "! kill -0 $(cat /tmp/agent.pid) 2>/dev/null"
lfsctl detach /dev/pmem0 && lfsctl detach /dev/pmem1' >/dev/null
before=$(sums)
# lfs.conf with the two devices swapped: IG 0 on NUMA node 1, IG 1 on node 0
out=$(n1 'sed "s/ig = 0; numa_node = 0;/ig = 0; numa_node = 1;/; s/ig = 1; numa_node = 1;/ig = 1; numa_node = 0;/" \
	/tmp/lfs.conf >/tmp/swap.conf && grep -c "ig = 0; numa_node = 1;" /tmp/swap.conf && L -c /tmp/swap.conf attach; echo "exit=$?"')
t_like "$out" "attaching /dev/pmem1 as IG 0: kernel reports: '/dev/pmem1' is labelled IG 1, not IG 0" \
	"swapped devices: attach is refused by the label check, naming both IGs"
t_like "$out" "attaching /dev/pmem0 as IG 1: kernel reports: '/dev/pmem0' is labelled IG 0, not IG 1" \
	"  both of them"
t_like "$out" "label it with .lfsvol attach --init'.* fix that entry \(nothing was written to the device\)" \
	"  with what to do"
t_like "$out" "exit=7" "  exit status 7"
out=$(n1 'L -c /tmp/swap.conf agent --once; echo "exit=$?"')
t_like "$out" "'/dev/pmem1' is labelled IG 1, not IG 0" "the agent's pass is refused in the same way"
t_like "$out" "^exit=1$" "  and fails"
t_is "$(n1 'lfsctl fabric --json | jq length')" 0 "neither device is attached"
t_is "$(sums)" "$before" "no byte of either device changed (sha256 of both fabric files on the host)"

# an unlabelled device: refused, and attach --init labels it
n1 'dd if=/dev/zero of=/dev/pmem1 bs=4096 count=1 oflag=direct status=none'
before=$(sums)
out=$(n1 'L attach; echo "exit=$?"')
t_like "$out" "'/dev/pmem1' carries no label \(lfsvol attach --init writes it\)" \
	"a device without a label is refused: $(grep -o "kernel reports.*label[^;]*" <<<"$out" | head -n 1)"
t_like "$out" "attached /dev/pmem0 as IG 0 \(its label matches\)" "  the labelled one is attached"
t_is "$(sums)" "$before" "  and nothing was written"
out=$(n1 'L attach --init')
t_like "$out" "labelled /dev/pmem1 as IG 1 of fabric $fabric" "attach --init labels it: $(head -n 1 <<<"$out")"
# the memory behind the new label is new to the catalogue (a replaced
# device, volatile memory that lost its contents): lfsvol told the librarian
# first (free.forget; with new_books = "zero" here its books stay known zero:
# tests/librarian/checkfree.t has the "unknown" case)
t_is "$(jq -c 'select(.op == "free.forget") | [.who, .args.ig, .result]' "$FL_AUDIT" | tail -n 1)" \
	'["node1",1,"ok"]' "  after telling the librarian IG 1's memory is new (free.forget in the audit trail)"
t_like "$out" "IG 1: /dev/pmem1 attached, 15 books, labelled" "  and attaches it"
em_agent_start 1 >/dev/null
t_ok $? "the agent starts again and renews the lease"

# --- every activation is leased ---------------------------------------------
out=$(n1 'L create s1 -s 2b -a >/dev/null && L create s2 -s 1b >/dev/null && lfsctl list --json | jq -c ".[] | [.name, .state, .leased]"')
t_is "$out" '["s1","active",true]' "create -a makes a leased, active shelf"
j=$(n1 'L status --json')
t_is "$(jq -c '.[0].lease | [.enforced, .expired, .fence_action]' <<<"$j")" '[true,false,"eio"]' \
	"status --json: the lease is enforced, not expired, fence action eio"
t_ok "$(jq '.[0].lease.left_ms > 0 and .[0].lease.left_ms <= 4000' <<<"$j" | grep -q true; echo $?)" \
	"  lease left: $(jq .[0].lease.left_ms <<<"$j") ms of $((LEASE * 1000))"
t_is "$(n1 'jq .fence_watchdog_ms /run/lfs/renewal.json
$LFS_TOP/build/driver-tests/nlraw -p lease_get | sed -n "s/^fence_watchdog_ms=//p"' | tr '\n' ' ')" "1500 1500 " \
	"  the agent gives the kernel three quarters of fence_grace (2 s) as the fence watchdog's bound"
# the fence latency of the lapses so far (docs/FENCING.md): none may have come yet
lat0=$(jq '.[0].lease.fence_latency.count // 0' <<<"$j")

# --- SIGSTOP: the kernel fences by itself -----------------------------------
out=$(n1 'fencewrite direct /dev/lfs/s1 /tmp/s1.state >/tmp/w1.out 2>&1 & w=$!
wait_for 10 test -s /tmp/s1.state
t0=$(date +%s%N); kill -STOP $(cat /tmp/agent.pid)
wait $w; t1=$(date +%s%N)
echo "$(cat /tmp/w1.out); $(( (t1 - t0) / 1000000 )) ms; $(state s1)"')
ms=$(sed -n 's/.*; \([0-9]*\) ms; .*/\1/p' <<<"$out")
t_like "$out" "^error EIO after [0-9]+; [0-9]+ ms; fenced$" "agent stopped (SIGSTOP): the writer got EIO and s1 is fenced: $out"
t_ok "$([ -n "$ms" ] && [ "$ms" -ge $(((LEASE - 2) * 1000)) ] && [ "$ms" -le $(((LEASE + SLACK) * 1000)) ]; echo $?)" \
	"  ${ms} ms after the stop: the ${LEASE} s lease of the last renewal, 2 s earlier to $SLACK s later (emulation)"
j=$(n1 'L status --json')
t_is "$(jq -c '.[0] | [.fenced, .lease.expired, .lease.fenced]' <<<"$j")" '[["s1"],true,1]' \
	"status --json while the agent is stopped: s1 fenced, the lease expired"
t_like "$(n1 'L status')" "FENCED: s1 as /dev/lfs[0-9]+, 2 books \(I/O fails" "status names the fenced shelf"
# status reports the fence latency of that lapse as lfsctl lease does
out=$(n1 "wait_for 10 sh -c '[ \$(\$LFS_TOP/lvmish/lfsctl/lfsctl lease --json | jq \".fence_latency.count // 0\") -gt $lat0 ]'
lfsctl lease --json | jq -c .fence_latency; L status --json | jq -c '.[0].lease.fence_latency'; L status | grep '^fence latency'")
lj=$(sed -n 1p <<<"$out") sj=$(sed -n 2p <<<"$out")
t_is "$(jq -c 'del(.histogram)' <<<"$sj")" "$lj" "status --json after the lapse: fence_latency as lfsctl lease reports it ($lj)"
t_is "$(jq '[.count > '"$lat0"', .last_ns > 0, .last_ns <= .max_ns, .done_last_ns >= .last_ns, .done_last_ns <= .done_max_ns, (.histogram | length) == 8, (.histogram | add) == .count] | all' <<<"$sj")" true \
	"  count past $lat0, 0 < last <= max, done >= refused, 8 histogram buckets adding up to the count"
ms() { printf '%d.%03d ms' $(($1 / 1000000)) $(($1 / 1000 % 1000)); }
t_is "$(sed -n 3p <<<"$out")" "$(printf 'fence latency: last %s, max %s over %d lapses (fence ended after last %s, max %s)' \
	"$(ms "$(jq .last_ns <<<"$sj")")" "$(ms "$(jq .max_ns <<<"$sj")")" "$(jq .count <<<"$sj")" \
	"$(ms "$(jq .done_last_ns <<<"$sj")")" "$(ms "$(jq .done_max_ns <<<"$sj")")")" \
	"  status prints the same values"
# the same as Prometheus metrics (docs/METRICS.md, "The node"): promtool (the host's) accepts them
prom=$(n1 'L status --prometheus')
t_is "$(promtool check metrics <<<"$prom" 2>&1; echo "rc=$?")" "rc=0" "status --prometheus: promtool check metrics accepts it"
pv() { awk -v n="$1" '$1 == n { print $2 }' <<<"$prom"; }
t_is "$(pv lfs_node_fence_lapses_total) $(pv lfs_node_lease_expired) $(pv 'lfs_node_shelves{state="fenced"}') $(pv lfs_agent_up)" \
	"$(jq .count <<<"$sj") 1 1 1" "  lapses as status --json counts them, the lease expired, s1 fenced, the agent's state read"
# the agent is stopped: its renewal log stands still
rtt=$(n1 'cat /run/lfs/renewal.json' | jq -r '"\(.heartbeat_rtt_last_us) \(.heartbeat_rtt_max_us)"')
t_ok "$(awk -v l="${rtt% *}" -v m="${rtt#* }" -v pl="$(pv lfs_agent_heartbeat_rtt_seconds)" -v pm="$(pv lfs_agent_heartbeat_rtt_max_seconds)" \
	'BEGIN { exit !(l > 0 && m >= l && pl * 1e6 - l < 1 && l - pl * 1e6 < 1 && pm * 1e6 - m < 1 && m - pm * 1e6 < 1) }'; echo $?)" \
	"  heartbeat round trips: last $(pv lfs_agent_heartbeat_rtt_seconds) s, max $(pv lfs_agent_heartbeat_rtt_max_seconds) s, as renewal.json has them (us: $rtt)"
out=$(n1 'L activate s2; echo "exit=$?"')
t_like "$out" "this node's lease expired .* no activation until the node agent renews the lease" \
	"no activation while the lease is expired"
t_like "$out" "^exit=7$" "  exit status 7"
r0=$(n1 'jq .renewals /run/lfs/renewal.json')
n1 'kill -CONT $(cat /tmp/agent.pid); wait_for 10 leased'
t_is "$?" 0 "SIGCONT: the agent renews again"
t_ok "$(n1 "wait_for 10 sh -c '[ \$(jq .renewals /run/lfs/renewal.json) -gt $r0 ]'"; echo $?)" \
	"  its renewal log counts on ($r0 renewals before)"
t_is "$(n1 'state s1')" fenced "  s1 stays fenced"
out=$(n1 'L activate s1')
t_like "$out" "shelf s1 was fenced here .*; removed it to activate it again" "activate s1 makes the fenced shelf anew"
t_is "$(n1 'state s1')" active "  s1 is active again"

# --- SIGKILL --------------------------------------------------------------
out=$(n1 'fencewrite direct /dev/lfs/s1 /tmp/s1b.state >/tmp/w2.out 2>&1 & w=$!
wait_for 10 test -s /tmp/s1b.state
t0=$(date +%s%N); kill -KILL $(cat /tmp/agent.pid)
wait $w; t1=$(date +%s%N)
echo "$(cat /tmp/w2.out); $(( (t1 - t0) / 1000000 )) ms; $(state s1)"')
ms=$(sed -n 's/.*; \([0-9]*\) ms; .*/\1/p' <<<"$out")
t_like "$out" "^error EIO after [0-9]+; [0-9]+ ms; fenced$" "agent killed (SIGKILL): the writer got EIO, s1 is fenced: $out"
t_ok "$([ -n "$ms" ] && [ "$ms" -le $(((LEASE + SLACK) * 1000)) ]; echo $?)" "  ${ms} ms after the kill: at most the lease and $SLACK s of emulation"
em_agent_start 1 >/dev/null
t_ok $? "a new agent renews the lease"
# a backup while s2 is not active (the next part restores it)
"$LIBRARIAN_BIN" backup -c "$EM_DIR/librarian.conf" "$EM_DIR/older.db" >/dev/null
t_is "$(n1 'L activate s1 s2 >/dev/null && echo $(state s1) $(state s2)')" "active active" \
	"and s1 (made anew) and s2 can be activated"

# --- the librarian no longer lists an activation ----------------------------
# The catalogue is restored from the older backup (man librarian(8)): it has no
# activation of s2. (The admin's shelf.deactivate of a live node's shelf waits
# for its lease, docs/FENCING.md, so it cannot be the way here.)
em_librarian_stop
cp "$EM_DIR/older.db" "$EM_DIR/catalogue.db" && rm -f "$EM_DIR/catalogue.db-wal" "$EM_DIR/catalogue.db-shm"
em_librarian_start
t_ok "$(n1 'wait_for 5 fenced s2'; echo $?)" "the catalogue restored from a backup without s2's activation: the agent fences s2 at the next heartbeat"
t_like "$(n1 'L status')" "agent: fenced s2: the librarian no longer lists it as active on this node" \
	"  status: the renewal log names it"
t_is "$(n1 'state s1')" active "  s1, still listed, is not fenced"

# --- the node set offline -------------------------------------------------
em_admin node.set_state '{"node":"node1","state":"offline"}' >/dev/null
t_ok "$(n1 'wait_for 5 fenced s1'; echo $?)" "node set offline: the agent fences every leased shelf (s1)"
j=$(n1 'L status --json')
t_is "$(jq -c '.[0].agent.renewal | [.probing, (.fenced | map(.name))]' <<<"$j")" '[true,["s2","s1"]]' \
	"  it probes (heartbeat \"lease\": false); the log names both fenced shelves"
r0=$(jq .[0].agent.renewal.renewals <<<"$j")
offline() { em_admin geometry | jq -e '.. | objects | select(.name? == "node1") | .state == "offline"' >/dev/null; }
for ((t = 0; t < 200; t++)); do offline && break; sleep 0.1; done
t_ok "$(offline; echo $?)" "the librarian ends the node's fencing after lease + grace"
t_is "$(n1 'jq .renewals /run/lfs/renewal.json')" "$r0" "  no renewal meanwhile ($r0)"
em_admin node.set_state '{"node":"node1","state":"online"}' >/dev/null
t_ok "$(n1 'wait_for 10 sh -c "[ \$(jq .probing /run/lfs/renewal.json) = false ]" && wait_for 10 leased'; echo $?)" \
	"node set online: a probe is accepted and the agent renews again"
out=$(n1 'L deactivate s1 s2 && L activate s1 >/dev/null && state s1')
t_like "$out" "deactivated shelf s1 \(it was fenced here; the librarian has no activation of it for this node" \
	"the fenced shelves are deactivated (the librarian ended their activations)"
t_like "$out" "deactivated shelf s2 \(it was fenced here" "  both"
t_like "$out" "active$" "  and s1 is activated again"

# --- no agent -------------------------------------------------------------
out=$(n1 'kill $(cat /tmp/agent.pid); wait_for 10 sh -c "! kill -0 $(cat /tmp/agent.pid) 2>/dev/null"
L create s3 -s 1b -a 2>&1; echo "exit=$?"; wait_for 10 fenced s3 && echo "s3 fenced"')
t_like "$out" "warning: no node agent answers on /run/lfs/agent.sock: shelf s3 will be fenced when this node's lease runs out, in [0-9] s, unless .lfsvol agent' starts" \
	"without an agent, create -a says the shelf will be fenced"
t_like "$out" "exit=0" "  and succeeds"
t_like "$out" "s3 fenced" "  and the kernel fences it when the lease runs out"
em_agent_start 1 >/dev/null
j=$(n1 'L status --json')
t_is "$(jq -c '.[0].agent.renewal | [.late, .heartbeat_interval, .lease_time, .fence_action]' <<<"$j")" \
	"[0,1,$LEASE,\"eio\"]" "a new agent's log: no late renewal, interval 1 s, lease $LEASE s, eio"
t_diag "renewal log: $(jq -c '.[0].agent.renewal | {renewals, renewals_by_ack, longest_gap_ms, late}' <<<"$j")"
n1 'L deactivate --all >/dev/null; kill $(cat /tmp/agent.pid)' >/dev/null
. tests/lvmish/follow.sh
machine_stop_node 1
t_ok $? "the node powers off with no kernel warning"
t_done
