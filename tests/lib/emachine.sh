# The emulated Machine: one librarian on the host (127.0.0.1 only) and N node
# VMs sharing the same fabric memory files, each with its own identity and
# key, reaching the librarian only through QEMU user networking with
# restrict=on and a guestfwd. Built on tests/lib/machine.sh (source it first).
#   em_start NODES [FABRIC_SIZE [BOOK_SIZE]]  librarian + fabric + booted nodes
#   em_node I 'commands'       run in node I with lfsvol configured ($L = lfsvol)
#   em_librarian_stop / em_librarian_start    restart the librarian, same database
#   em_admin OP [JSON]         a request on the librarian's admin unix socket
#   em_stop                    power every node off (checks for WARNs), stop all
# Fabric: one fabric device per node, IG I-1 local to node I (NUMA node I-1);
# with EM_DEVICES=D (more devices than nodes) node I holds every IG J with
# J % NODES == I-1. Each device is labelled once, by node1 (attach --init).
# Leases: EM_LEASE (lease_time, default 10 s), EM_GRACE (fence_grace, 3 s),
# heartbeat_interval 1 s; EM_FENCE_ACTION (lfs.conf's fence_action, default
# reset); EM_NEW_BOOKS (librarian.conf's new_books, default zero: new memory
# is taken as known zero, so a test not about the agent's background zeroing
# can allocate it at once). EM_SHARE (librarian.conf's share, default rw:
# the nodes, all in the default tenant, may activate each other's shelves,
# as the handovers and takeovers of the tests need; "see" is the librarian's
# own default, under which an owner grants access with lfs.access).
# EM_AGENT_CONF: more lines for the agent group. EM_FWD_MORE=P1,P2: more
# host ports the nodes reach at 10.0.2.100 (more librarians).
# EM_DATABASE: the catalogue (default an SQLite file in EM_DIR; a
# PostgreSQL URI for the HA demo), EM_LIBRARIAN_MORE: more librarian.conf
# lines (name, leader_ttl_ms, ...); EM_LFS_LIBRARIAN: lfs.conf's librarian
# value as written there (default the one address, "$LFS_LIBRARIAN").
# EM_NODE_PRE: shell commands each node runs before its devices are attached
# (with lfs.ko loaded); EM_NO_AGENT=1: node setup starts no agent daemon.
# The agent: em_agent_start I / em_agent_stop I [SIGNAL] (below).
EM_DIR=
EM_PORT=
EM_LPID=
EM_NODES=2
LIBRARIAN_BIN=${LIBRARIAN_BIN:-librarian/librarian}

em_free_port() {
	local p
	for p in $(shuf -i 20000-32000 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

em_admin() {
	"$LIBRARIAN_BIN" client --connect "unix:$EM_DIR/admin.sock" --timeout 5000 "$@"
}

em_librarian_start() {
	local i
	"$LIBRARIAN_BIN" -c "$EM_DIR/librarian.conf" >>"$EM_DIR/librarian.log" 2>&1 &
	EM_LPID=$!
	for ((i = 0; i < 100; i++)); do
		em_admin stats >/dev/null 2>&1 && return 0
		kill -0 "$EM_LPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "emachine: the librarian did not start; see $EM_DIR/librarian.log" >&2
	return 1
}

em_librarian_stop() {
	[ -n "$EM_LPID" ] || return 0
	kill "$EM_LPID" 2>/dev/null
	wait "$EM_LPID" 2>/dev/null
	EM_LPID=
}

# em_node_igs I NODES DEVICES: node I's IGs in the geometry's syntax
em_node_igs() {
	local i=$1 n=$2 d=$3 j sep=
	for ((j = i - 1; j < d; j += n)); do
		printf '%s{ ig = %d; size = "%s"; }' "$sep" "$j" "$EM_IG_SIZE"
		sep=', '
	done
}

# em_geometry NODES IG_SIZE [DEVICES]: a rack, one enclosure per two nodes,
# power domains alternating between two supplies, IGs as em_node_igs says.
em_geometry() {
	local n=$1 d=${3:-$1} i enc sep
	EM_IG_SIZE=$2
	printf 'fabric = {\n\tracks = ( { name = "rack1"; enclosures = (\n'
	for ((enc = 0; enc * 2 < n; enc++)); do
		[ "$enc" -gt 0 ] && printf ',\n'
		printf '\t\t{ name = "enc%d"; nodes = (\n' $((enc + 1))
		sep=
		for ((i = enc * 2 + 1; i <= n && i <= enc * 2 + 2; i++)); do
			printf '%s\t\t\t{ name = "node%d"; power_domain = "psu-%s"; igs = ( %s ); }' \
				"$sep" "$i" "$(( (i - 1) % 2 == 0 ? 0 : 1 ))" "$(em_node_igs "$i" "$n" "$d")"
			sep=$',\n'
		done
		printf ' ); }'
	done
	printf ' ); } );\n};\n'
}

# em_start NODES [FABRIC_SIZE [BOOK_SIZE]]
em_start() {
	local n=${1:-2} fsize=${2:-1G} bsize=${3:-16M} i fmib bmib books
	EM_NODES=$n
	EM_DEVICES=${EM_DEVICES:-$n}
	machine_init "$n" "$EM_DEVICES" "$fsize" || return 1
	EM_DIR=$MACHINE_OUT/librarian
	mkdir -p "$EM_DIR/keys"
	chmod 700 "$EM_DIR/keys"
	EM_PORT=$(em_free_port) || return 1
	# Books fit the fsdax device after its info block and lfsvol's 2 MiB data
	# offset: 1 GiB files give about 1006 MiB of pmem.
	fmib=${fsize%[Gg]}
	[ "$fmib" != "$fsize" ] && fmib=$((fmib * 1024)) || fmib=${fsize%[Mm]}
	bmib=${bsize%[Mm]}
	books=$(( (fmib * 98 / 100 - 2) / bmib ))
	{
		cat <<EOC
librarian = {
	database = "${EM_DATABASE:-$EM_DIR/catalogue.db}";${EM_LIBRARIAN_MORE:+
	$EM_LIBRARIAN_MORE}
	listen = [ "127.0.0.1:$EM_PORT", "unix:$EM_DIR/admin.sock" ];
	book_size = "$bsize";
	keys_dir = "$EM_DIR/keys";
	default_policy = "Spread";
	heartbeat_interval = 1;
	lease_time = ${EM_LEASE:-10};
	fence_grace = ${EM_GRACE:-3};
	new_books = "${EM_NEW_BOOKS:-zero}";
	share = "${EM_SHARE:-rw}";
};
EOC
		em_geometry "$n" "$((books * bmib))M" "$EM_DEVICES"
	} >"$EM_DIR/librarian.conf"
	for ((i = 1; i <= n; i++)); do
		"$LIBRARIAN_BIN" genkey "$EM_DIR/keys/node$i.key" || return 1
	done
	em_librarian_start || return 1
	for ((i = 1; i <= n; i++)); do
		machine_start_node "$i" --guestfwd "$EM_PORT${EM_FWD_MORE:+,$EM_FWD_MORE}" --env "LFS_KEY=$(cat "$EM_DIR/keys/node$i.key")" || return 1
	done
	for ((i = 1; i <= n; i++)); do
		machine_wait_node "$i" || return 1
		em_node_setup "$i" || return 1
	done
}

# Inside node I: lfs.conf under /tmp, the driver, the fabric labelled (node1,
# once) and attached, the agent running (it renews this node's lease).
em_node_setup() {
	local i=$1 fab= j sep= init=
	[ "$i" = 1 ] && init="\$LFS_TOP/lvmish/lfsvol/lfsvol -c /tmp/lfs.conf attach --init >/tmp/attach-init.log"
	for ((j = 0; j < EM_DEVICES; j++)); do
		fab+="$sep{ ig = $j; numa_node = $j; }"
		sep=', '
	done
	node_exec "$i" "
set -e
umask 077
printf '%s\n' \"\$LFS_KEY\" >/tmp/node.key
umask 022
cat >/tmp/lfs.conf <<EOC
librarian = ${EM_LFS_LIBRARIAN:-\"\$LFS_LIBRARIAN\"};
node = \"\$LFS_NODE\";
key_file = \"/tmp/node.key\";
connect_timeout = 20;
fence_action = \"${EM_FENCE_ACTION:-reset}\";
fabric = ( $fab );
agent = { state_dir = \"/run/lfs\"; ${EM_AGENT_CONF:-} };
EOC
insmod \$LFS_KO
${EM_NODE_PRE:-}
$init
\$LFS_TOP/lvmish/lfsvol/lfsvol -c /tmp/lfs.conf agent --once
" || return 1
	[ -n "${EM_NO_AGENT:-}" ] || em_agent_start "$i"
}

# em_agent_start I: the agent daemon in node I (log /tmp/agent.log, pid
# /tmp/agent.pid), once this agent has renewed the node's lease: its
# renewal log (/run/lfs/renewal.json) has its pid and a renewal, and the
# kernel's lease runs (bounded: 60 s).
em_agent_start() {
	node_exec "$1" "
setsid \$LFS_TOP/lvmish/lfsvol/lfsvol -c /tmp/lfs.conf agent </dev/null >>/tmp/agent.log 2>&1 &
pid=\$!
echo \$pid >/tmp/agent.pid
for ((i = 0; i < 600; i++)); do
	r=
	[ -e /run/lfs/renewal.json ] && r=\$(</run/lfs/renewal.json)
	[[ \$r =~ \\\"pid\\\":\$pid[,}] && \$r =~ \\\"renewals\\\":[1-9] ]] &&
		[[ \$(\$LFS_TOP/lvmish/lfsctl/lfsctl lease) == *'ends in'* ]] && exit 0
	nap 0.1
done
echo 'emachine: the agent renewed no lease within 60 s'; cat /tmp/agent.log; exit 1
"
}

# em_agent_stop I [SIGNAL]: signal node I's agent (default TERM); for TERM,
# INT and KILL wait until it is gone (bounded: 10 s). The lease is no longer
# renewed: the kernel fences the node's leased shelves when it runs out.
em_agent_stop() {
	node_exec "$1" "
pid=\$(cat /tmp/agent.pid) || exit 1
kill -${2:-TERM} \$pid || exit 1
case ${2:-TERM} in STOP | CONT) exit 0 ;; esac
for ((i = 0; i < 100; i++)); do
	kill -0 \$pid 2>/dev/null || exit 0
	nap 0.1
done
echo 'emachine: the agent did not end within 10 s'; exit 1
"
}

# Run commands in node I with lfsvol ready: L ARGS... is lfsvol with this
# node's configuration, mapsync is the MAP_SYNC checker.
em_node() {
	node_exec "$1" "L() { \$LFS_TOP/lvmish/lfsvol/lfsvol -c /tmp/lfs.conf \"\$@\"; }
export PATH=\$LFS_TOP/build/driver-tests:\$PATH
$2"
}

em_stop() {
	local i rc=0
	for i in "${!MACHINE_PID[@]}"; do
		machine_stop_node "$i" || rc=1
	done
	em_librarian_stop
	return "$rc"
}

em_cleanup() {
	machine_cleanup
	em_librarian_stop
}
