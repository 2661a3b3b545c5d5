# A pg_auto_failover formation for the librarian host tests (docs/HA.md,
# "PostgreSQL with pg_auto_failover"): a monitor and two data nodes with
# synchronous replication, all in one temporary directory, on loopback TCP
# ports and unix sockets in that directory only, never a system service. As
# root everything runs as the postgres user (initdb and pg_autoctl refuse
# root). Each `pg_autoctl run` is a session of its own (setsid), so that
# paf_kill9 kills a node's keeper, its postmaster and every backend at once,
# as a crash of its host would. Every wait is a bounded poll; paf_stop (run
# by the caller's EXIT trap) kills every process the formation started.
#
# The monitor is tuned for a fast failover (the outage must stay under
# lease_time - heartbeat_interval): health checks every second, a node
# unhealthy after 4 s, a primary that does not answer demoted after 6 s;
# each keeper counts a network partition after 4 s (docs/HA.md, "Why these
# timeouts").
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PAF_D=
PAF_MONITOR=
PAF_URI=
declare -A PAF_PORT PAF_PID

# paf_as CMD...: as the formation's owner, with pg_autoctl's state in PAF_D
paf_as() {
	local env=(env "XDG_CONFIG_HOME=$PAF_D/xdg/config" "XDG_DATA_HOME=$PAF_D/xdg/data"
		"XDG_RUNTIME_DIR=$PAF_D/xdg/run" "PGHOST=$PAF_D")
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "${env[@]}" "$@"
	else
		"${env[@]}" "$@"
	fi
}

# paf_psql NAME SQL...: queries on that instance (monitor, node1, node2), each on its own
paf_psql() {
	local db=lfs n=$1 c=() q
	shift
	[ "$n" = monitor ] && db=pg_auto_failover
	for q in "$@"; do c+=(-c "$q"); done
	paf_as "$PGBIN/psql" -X -q -A -t -h "$PAF_D" -p "${PAF_PORT[$n]}" -U postgres -d "$db" "${c[@]}"
}

# paf_initdb NAME: a cluster whose sockets are in PAF_D and that listens on 127.0.0.1 only
paf_initdb() {
	paf_as "$PGBIN/initdb" -D "$PAF_D/$1" -A trust -U postgres --no-sync -E UTF8 --locale=C \
		>"$PAF_D/$1.initdb.log" 2>&1 || return 1
	printf "unix_socket_directories = '%s'\nlisten_addresses = '127.0.0.1'\n" "$PAF_D" \
		>>"$PAF_D/$1/postgresql.conf"
}

# paf_run NAME: pg_autoctl run for that instance, in a session of its own
paf_run() {
	if [ "$(id -u)" = 0 ]; then
		setsid runuser -u postgres -- env "XDG_CONFIG_HOME=$PAF_D/xdg/config" \
			"XDG_DATA_HOME=$PAF_D/xdg/data" "XDG_RUNTIME_DIR=$PAF_D/xdg/run" \
			"PGHOST=$PAF_D" pg_autoctl run --pgdata "$PAF_D/$1" >>"$PAF_D/$1.run.log" 2>&1 &
	else
		setsid env "XDG_CONFIG_HOME=$PAF_D/xdg/config" "XDG_DATA_HOME=$PAF_D/xdg/data" \
			"XDG_RUNTIME_DIR=$PAF_D/xdg/run" "PGHOST=$PAF_D" \
			pg_autoctl run --pgdata "$PAF_D/$1" >>"$PAF_D/$1.run.log" 2>&1 &
	fi
	PAF_PID[$1]=$!
}

# paf_states: the data nodes' current states in node order, e.g. "primary secondary"
paf_states() {
	paf_as pg_autoctl show state --pgdata "$PAF_D/monitor" --json 2>/dev/null |
		jq -r 'sort_by(.nodename) | map(.current_group_state) | join(" ")' 2>/dev/null
}

# paf_wait_states WANT SECONDS: poll until paf_states prints WANT
paf_wait_states() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		[ "$(paf_states)" = "$1" ] && return 0
		sleep 0.2
	done
	echo "# formation states: '$(paf_states)', waited $2 s for '$1'" >&2
	return 1
}

# paf_primary: the name of the node that is primary now (read-write)
paf_primary() {
	paf_as pg_autoctl show state --pgdata "$PAF_D/monitor" --json 2>/dev/null |
		jq -r 'map(select((.assigned_group_state == "primary" or .assigned_group_state == "wait_primary")
			and .current_group_state == .assigned_group_state)) | .[0].nodename // empty'
}

paf_monitor() {
	local i
	PAF_PORT[monitor]=$(lt_free_port)
	paf_initdb monitor || return 1
	paf_as pg_autoctl create monitor --pgdata "$PAF_D/monitor" --pgport "${PAF_PORT[monitor]}" \
		--hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl \
		--pgctl "$PGBIN/pg_ctl" >"$PAF_D/monitor.create.log" 2>&1 || return 1
	paf_run monitor
	for i in $(seq 1 150); do
		paf_psql monitor "SELECT 1" >/dev/null 2>&1 && break
		sleep 0.2
	done
	paf_psql monitor "ALTER SYSTEM SET pgautofailover.health_check_period = 1000" \
		"ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000" \
		"ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1" \
		"ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500" \
		"ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 4000" \
		"ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 6000" \
		"SELECT pg_reload_conf()" >/dev/null || return 1
	PAF_MONITOR="postgres://autoctl_node@127.0.0.1:${PAF_PORT[monitor]}/pg_auto_failover?sslmode=disable"
}

# paf_node NAME: a data node registered with the monitor (the first is the
# primary, the next a synchronous standby made by pg_basebackup), running
paf_node() {
	PAF_PORT[$1]=$(lt_free_port)
	if [ ! -d "$PAF_D/node1" ]; then
		paf_initdb "$1" || return 1
	fi
	paf_as pg_autoctl create postgres --pgdata "$PAF_D/$1" --pgport "${PAF_PORT[$1]}" \
		--hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl --name "$1" \
		--dbname lfs --monitor "$PAF_MONITOR" --replication-quorum true \
		--pgctl "$PGBIN/pg_ctl" >"$PAF_D/$1.create.log" 2>&1 || return 1
	paf_as pg_autoctl config set --pgdata "$PAF_D/$1" timeout.network_partition_timeout 4 \
		>/dev/null || return 1
	paf_run "$1"
}

# paf_start: monitor, node1 (primary), node2 (secondary); PAF_URI the librarian's database
paf_start() {
	PAF_D=$(mktemp -d /tmp/lfs-pgaf.XXXXXX)
	[ "$(id -u)" = 0 ] && chown postgres: "$PAF_D"
	paf_monitor || return 1
	paf_node node1 || return 1
	paf_wait_states single 60 || return 1
	paf_node node2 || return 1
	paf_wait_states "primary secondary" 90 || return 1
	PAF_URI="postgresql://postgres@127.0.0.1:${PAF_PORT[node1]},127.0.0.1:${PAF_PORT[node2]}/lfs?target_session_attrs=read-write&connect_timeout=2&tcp_user_timeout=5000&sslmode=disable"
}

# paf_kill9 NAME: the node's host crashes: keeper, postmaster and backends killed at once
paf_kill9() {
	kill -9 -- "-${PAF_PID[$1]}" 2>/dev/null
	wait "${PAF_PID[$1]}" 2>/dev/null
	PAF_PID[$1]=
}

paf_stop() {
	local n p
	[ -n "$PAF_D" ] || return 0
	for n in "${!PAF_PID[@]}"; do
		[ -n "${PAF_PID[$n]}" ] && paf_kill9 "$n"
	done
	# a postmaster left by an interrupted create (its own session, not the keeper's)
	for n in monitor node1 node2; do
		p=$(head -n 1 "$PAF_D/$n/postmaster.pid" 2>/dev/null)
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && paf_as "$PGBIN/pg_ctl" -D "$PAF_D/$n" -m immediate -w -t 30 stop >/dev/null 2>&1
	done
	# what the killed postmasters left: the monitor's logger and its
	# health-check worker outlive a kill -9 of their postmaster (seen after
	# CI runs); every process still working in the formation's directory
	for p in /proc/[0-9]*; do
		case $(readlink "$p/cwd" 2>/dev/null) in "$PAF_D"/*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
	done
	if [ -n "${LT_KEEP:-}" ]; then
		echo "# kept $PAF_D" >&2
	else
		rm -rf "$PAF_D"
	fi
	PAF_D=
}
