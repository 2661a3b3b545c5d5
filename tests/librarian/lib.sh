# Shared setup for librarian host tests. Source after tests/lib/tap.sh.
# Runs the ASan/UBSan build (librarian/build-san/) and the test clients built
# from tests/ (build/tests/, tests/librarian/helpers.mk); any sanitizer
# report from the daemon, the client or a helper fails the test file (lt_done).

LIB=${LIBRARIAN_BIN:-librarian/build-san/librarian}
RAW=${LIBRARIAN_RAW:-build/tests/lib-raw}
STRESS=${LIBRARIAN_STRESS:-build/tests/lib-stress}
# The shell helpers' many short client calls use the optimised build (ASan's
# start-up cost adds up); the daemon and the C helpers run sanitized.
CLI=${LIBRARIAN_CLI:-librarian/librarian}
for b in "$LIB" "$RAW" "$STRESS" "$CLI"; do
	[ -x "$b" ] || { echo "Bail out! $b not built (run make)"; exit 1; }
done
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

T=$(mktemp -d /tmp/lfs-librarian.XXXXXX)
SOCK=$T/sock
# The catalogue: a SQLite file, or with LFS_TEST_STORE=pg a PostgreSQL
# database of a cluster the test starts (lib-pg.sh); lt_sql queries either.
LT_STORE=${LFS_TEST_STORE:-sqlite}
LT_DB=$T/cat.db
lt_sql() { sqlite3 "file:$T/cat.db?mode=ro" "$1"; }
lt_sqlw() { sqlite3 "$T/cat.db" "$1"; } # changes it (the librarian stopped)
# audit records a start writes: on PostgreSQL the leader's leader.took (docs/AUDIT.md)
LT_START_AUDIT=0
[ "$LT_STORE" = pg ] && LT_START_AUDIT=1
# lt_fresh: an empty catalogue in place of this file's (the librarian stopped)
lt_fresh() { rm -f "$T/cat.db" "$T/cat.db-wal" "$T/cat.db-shm"; }
# lt_db_copy NAME: a copy of the catalogue (the librarian stopped); prints
# its --db; lt_db_put NAME: that copy becomes the catalogue again
lt_db_copy() { cp "$T/cat.db" "$T/$1.db" && echo "$T/$1.db"; }
lt_db_put() { lt_fresh && mv "$T/$1.db" "$T/cat.db"; }
# lt_sql_copy NAME SQL, lt_sqlw_copy NAME SQL: lt_sql and lt_sqlw on a copy
lt_sql_copy() { sqlite3 "file:$T/$1.db?mode=ro" "$2"; }
lt_sqlw_copy() { sqlite3 "$T/$1.db" "$2"; }
# lt_db_sum NAME: a checksum of a copy's content
lt_db_sum() { md5sum <"$T/$1.db"; }
# lt_sqlite_only N WHY: true on SQLite; on PostgreSQL, N checks of SQLite's
# own (its files, its backup API, its schema history) are skipped naming why
lt_sqlite_only() {
	[ "$LT_STORE" = sqlite ] && return 0
	local i
	for ((i = 0; i < $1; i++)); do t_skip "SQLite only: $2"; done
	return 1
}
LPID=
PORT=
export ASAN_OPTIONS="log_path=$T/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$T/asan:print_stacktrace=1:halt_on_error=1"

lt_cleanup() {
	if [ -n "$LPID" ] && kill -0 "$LPID" 2>/dev/null; then
		kill -9 "$LPID" 2>/dev/null
		wait "$LPID" 2>/dev/null
	fi
	[ "$LT_STORE" = pg ] && lt_pg_stop
	if [ -n "$LT_KEEP" ]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap lt_cleanup EXIT
case $LT_STORE in
sqlite) ;;
pg) . tests/librarian/lib-pg.sh ;;
*) echo "Bail out! LFS_TEST_STORE=$LT_STORE: sqlite or pg"; exit 1 ;;
esac

# A free loopback TCP port below the ephemeral range (32768-60999), so that
# no outgoing connection can hold it as its local port.
lt_free_port() {
	local p
	for p in $(shuf -i 20000-32000 -n 50); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

lt_keys() {
	mkdir -p "$T/keys"
	chmod 700 "$T/keys"
	local n
	for n in "$@"; do
		[ -e "$T/keys/$n.key" ] || "$LIB" genkey "$T/keys/$n.key"
	done
}

# lt_conf FABRIC [EXTRA-LIBRARIAN-SETTINGS]: write $T/lib.conf. Leases are
# short (lease_time 2, fence_grace 2: a node is live for 4 s after it was
# last heard). Tests that are not about which books may be allocated say
# that new memory reads as zeroes (new_books = "zero"); those that are set
# LT_NEW_BOOKS=unknown.
lt_conf() {
	[ -n "$PORT" ] || PORT=$(lt_free_port)
	cat >"$T/lib.conf" <<EOC
librarian = {
	database = "$LT_DB";
	listen = [ "127.0.0.1:$PORT", "unix:$SOCK" ];
	book_size = "8G";
	keys_dir = "keys";
	admin = { key_file = "keys/admin.key"; };
	heartbeat_interval = 1;
	lease_time = 2;
	fence_grace = ${LT_GRACE:-2};
	new_books = "${LT_NEW_BOOKS:-zero}";
	$2
};
fabric = {
$1
};
EOC
}

# Six nodes: r1/e1 = n1 (IG 0,1; pd A), n2 (IG 2; pd B); r1/e2 = n3 (IG 3; pd C),
# n4 (IG 4; pd A); r2/e3 = n5 (IG 5; pd D), n6 (IG 6; pd E). 20 books per IG.
LT_FABRIC='racks = (
	{ name = "r1"; enclosures = (
		{ name = "e1"; nodes = (
			{ name = "n1"; power_domain = "A"; igs = ( { ig = 0; books = 20; }, { ig = 1; books = 20; } ); },
			{ name = "n2"; power_domain = "B"; igs = ( { ig = 2; books = 20; } ); } ); },
		{ name = "e2"; nodes = (
			{ name = "n3"; power_domain = "C"; igs = ( { ig = 3; books = 20; } ); },
			{ name = "n4"; power_domain = "A"; igs = ( { ig = 4; books = 20; } ); } ); } ); },
	{ name = "r2"; enclosures = (
		{ name = "e3"; nodes = (
			{ name = "n5"; power_domain = "D"; igs = ( { ig = 5; books = 20; } ); },
			{ name = "n6"; power_domain = "E"; igs = ( { ig = 6; books = 20; } ); } ); } ); } );'

lt_start() {
	"$LIB" -c "$T/lib.conf" "$@" >>"$T/server.log" 2>&1 &
	LPID=$!
	# bounded by time, not turns: on a loaded host a PostgreSQL catalogue's
	# first start (its schema made) takes seconds
	local end=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$end" ]; do
		"$CLI" client --connect "unix:$SOCK" stats >/dev/null 2>&1 && return 0
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.02
	done
	t_diag "librarian did not come up within 30 s (or exited); log:"
	sed 's/^/#   /' "$T/server.log" | tail -n 20
	return 1
}

# Clean shutdown with SIGTERM; returns the daemon's exit status.
lt_stop() {
	local rc
	kill -TERM "$LPID"
	wait "$LPID"
	rc=$?
	LPID=
	return $rc
}

lt_kill9() {
	kill -9 "$LPID"
	wait "$LPID" 2>/dev/null
	LPID=
}

# lc OP [JSON]: as the admin over the unix socket, compact JSON result on stdout
lc() { "$CLI" client --connect "unix:$SOCK" "$@" | jq -c .; return "${PIPESTATUS[0]}"; }
# lcn NODE OP [JSON]: as node NODE over the unix socket
lcn() { local n=$1; shift; "$CLI" client --connect "unix:$SOCK" --node "$n" "$@" | jq -c .; return "${PIPESTATUS[0]}"; }
# ltls NODE OP [JSON]: as node NODE over TLS with its key
ltls() { local n=$1; shift; "$CLI" client --connect "127.0.0.1:$PORT" --node "$n" --key "$T/keys/$n.key" "$@" | jq -c .; return "${PIPESTATUS[0]}"; }
# lerr ...: run a client command expected to fail; print its error code
lerr() { "$@" 2>&1 >/dev/null | sed -n 's/^librarian: [^:]*: \([A-Z0-9]*\): .*/\1/p' | head -n 1; }

lt_check_db() { "$LIB" check --db "$LT_DB"; }

lt_done() {
	local reports
	reports=$(ls "$T"/asan.* 2>/dev/null)
	if [ -n "$reports" ]; then
		t_ok 1 "no sanitizer reports"
		cat $reports | head -n 40 | sed 's/^/#   /'
	else
		t_ok 0 "no sanitizer reports"
	fi
	t_done
}
