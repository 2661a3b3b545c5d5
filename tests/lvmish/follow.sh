# Nodes follow the leader (docs/HA.md), sourced by tests/lvmish/fencing.t at
# the end of its boot (node1 up, its agent stopped; PA and PB forwarded to
# the node at 10.0.2.100). Two librarians, fa and fb, share one PostgreSQL
# catalogue (tests/librarian/lib-pg.sh: a cluster of the test's own); the
# node's lfs.conf lists both. fa leads; SIGSTOP of fa past its row's TTL:
# fb takes over (epoch 2). The agent renewed only on fa's replies (never on
# an acknowledgement: a stopped leader's TCP stack, or here QEMU's, still
# acknowledges), leaves fa after one unanswered interval and renews on fb
# within about one interval of the takeover; the kernel's lease never
# lapses. After SIGCONT fa is a standby and the agent stays on fb.
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$PGBIN/initdb" ]; then
	t_ok 0 "# SKIP nodes follow the leader: no $PGBIN/initdb (postgresql-15)"
	return 0
fi
FL_LEASE=$((8 * ${LFS_VM_TIMEOUT_FACTOR:-1})) # ttl + refresh + interval < lease
FL_DIR=$MACHINE_OUT/follow
mkdir -p "$FL_DIR"
T=$FL_DIR/fencing . tests/librarian/lib-pg.sh
[ "$(id -u)" = 0 ] && chmod 755 "$FL_DIR"

# fl_conf NAME PORT: the emulation's librarian.conf on the PostgreSQL catalogue
fl_conf() {
	local db=${LT_DB//&/\\&}
	sed -e "s#database = .*#database = \"$db\"; name = \"$1\"; leader_ttl_ms = 3000; leader_refresh_ms = 500;#" \
		-e "s#listen = .*#listen = [ \"127.0.0.1:$2\", \"unix:$FL_DIR/$1.sock\" ];#" \
		-e "s#lease_time = .*#lease_time = $FL_LEASE;#" "$EM_DIR/librarian.conf" >"$FL_DIR/$1.conf"
}
fl_role() {
	"$LIBRARIAN_BIN" client --connect "unix:$FL_DIR/$1.sock" --timeout 2000 auth 2>/dev/null |
		jq -r '"\(.role) \(.epoch)"'
}
# fl_until NAME "ROLE EPOCH" SECONDS: a bounded poll of the librarian's auth reply
fl_until() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(fl_role "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
fl_ms() { echo $(($(date +%s%N) / 1000000)); }
# fl_wait EPOCH PORT: the agent renews through 10.0.2.100:PORT at EPOCH (bounded: 30 s)
fl_wait() {
	n1 "wait_for 30 sh -c 'jq -e --arg l \"connected to 10.0.2.100:$2\" \".epoch == $1 and .librarian == \\\$l\" /run/lfs/renewal.json >/dev/null'"
}
fl_start() {
	"$LIBRARIAN_BIN" -c "$FL_DIR/$1.conf" >>"$FL_DIR/$1.log" 2>&1 &
	FL_PIDS+=($!)
	eval "FL_$1=$!"
}

fl_conf fa "$PA"
fl_conf fb "$PB"
fl_start fa
fl_until fa "leader 1" 30
t_ok $? "nodes follow the leader: librarian fa on PostgreSQL leads (epoch 1)"
fl_start fb
fl_until fb "standby 0" 30
t_ok $? "  fb on the same catalogue is a standby"
t_is "$("$LIBRARIAN_BIN" client --connect "unix:$FL_DIR/fb.sock" auth | jq -c '[.leader.name, .leader.epoch, .leader.addresses]')" \
	"[\"fa\",1,[\"127.0.0.1:$PA\"]]" "  its auth reply names the leader"

# the node's lfs.conf lists both librarians, the standby first
n1 "cp /tmp/lfs.conf /tmp/lfs.conf.one
sed -i 's#^librarian = .*#librarian = [ \"10.0.2.100:$PB\", \"10.0.2.100:$PA\" ];#' /tmp/lfs.conf"
em_agent_start 1 >/dev/null
t_ok $? "the agent with lfs.conf listing fb then fa renews the lease"
j=$(n1 'cat /run/lfs/renewal.json')
t_is "$(jq -c '[.librarian, .leader_row, .epoch]' <<<"$j")" "[\"connected to 10.0.2.100:$PA\",true,1]" \
	"  through fa, the leader (the standby fb was passed over): renewing only on fa's replies"
t_like "$(n1 'L list 2>&1; echo "exit=$?"')" "exit=0" "  lfsvol's own session finds the leader through the list too"
lapses=$(n1 'lfsctl lease --json | jq ".fence_latency.count // 0"')

kill -STOP "$FL_fa"
stop=$(fl_ms)
fl_until fb "leader 2" 30
t_ok $? "fa stopped (SIGSTOP): fb takes over (epoch 2) $(($(fl_ms) - stop)) ms after the stop (row TTL 3000 ms)"
take=$(fl_ms)
fl_wait 2 "$PB"
t_ok $? "  the agent renews through fb"
sw=$(($(fl_ms) - take))
t_ok "$([ "$sw" -le $((1000 + SLACK * 1000)) ]; echo $?)" \
	"  $sw ms after the takeover: one heartbeat interval (1 s), $SLACK s of emulation"
j=$(n1 'cat /run/lfs/renewal.json')
t_is "$(jq .renewals_by_ack <<<"$j")" 0 "  no renewal on an acknowledgement (the stopped fa's were never counted)"
t_ok "$(jq -e ".longest_gap_ms < $FL_LEASE * 1000" <<<"$j" >/dev/null; echo $?)" \
	"  the longest gap between renewals, $(jq .longest_gap_ms <<<"$j") ms, is shorter than the $FL_LEASE s lease"
t_like "$(n1 'lfsctl lease')" "lease $((FL_LEASE * 1000)) ms, ends in" "  the kernel's lease runs"
t_is "$(n1 'lfsctl lease --json | jq ".fence_latency.count // 0"')" "$lapses" "  and never lapsed"
t_like "$(n1 'cat /tmp/agent.log')" "10.0.2.100:$PA did not answer a heartbeat for 1 s" \
	"  the agent's log says why it left fa"

kill -CONT "$FL_fa"
fl_until fa "standby 0" 30
t_ok $? "fa continued (SIGCONT): a standby now"
t_like "$(cat "$FL_DIR/fa.log")" "'fa' is no longer the leader" "  it says it was deposed"
r0=$(n1 'jq .renewals /run/lfs/renewal.json')
t_ok "$(n1 "wait_for 10 sh -c '[ \$(jq .renewals /run/lfs/renewal.json) -gt $((r0 + 1)) ]'"; echo $?)" \
	"  the agent renews on through fb"
t_is "$(n1 'jq -c "[.epoch, .renewals_by_ack]" /run/lfs/renewal.json')" "[2,0]" "  epoch 2, still none by acknowledgement"

# the leader stops cleanly: the other leads at once, the agent follows
kill "$FL_fb"
wait "$FL_fb" 2>/dev/null
fl_until fa "leader 3" 30
t_ok $? "fb stopped (SIGTERM: its row expires at once): fa leads (epoch 3)"
fl_wait 3 "$PA"
t_ok $? "  the agent renews through fa again"
t_is "$(n1 'lfsctl lease --json | jq ".fence_latency.count // 0"')" "$lapses" "  the kernel's lease never lapsed"
t_diag "renewal log: $(n1 'jq -c "{renewals, renewals_by_ack, longest_gap_ms, late, errors, last_error}" /run/lfs/renewal.json')"
n1 'kill $(cat /tmp/agent.pid); cp /tmp/lfs.conf.one /tmp/lfs.conf' >/dev/null
fl_cleanup
FL_PIDS=()
