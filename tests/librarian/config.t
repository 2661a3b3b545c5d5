#!/bin/bash
# librarian.conf: every error names file:line and the problem; the compact
# fabric form; keys; command-line overrides; one librarian per catalogue;
# `librarian check` finds a damaged catalogue.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1
# bad CONFIG-TEXT REGEX DESC: the daemon must refuse it with that message
bad() {
	printf '%s\n' "$1" >"$T/bad.conf"
	local out rc
	out=$(timeout 10 "$LIB" -c "$T/bad.conf" --db "$T/never.db" 2>&1) # a librarian that serves it: exit 124
	rc=$?
	if [ $rc -ne 1 ]; then
		t_ok 1 "$3"
		t_diag "exit $rc, output: $out"
		return
	fi
	t_like "$out" "$2" "$3"
}
F='fabric = { compact = { nodes = 2; books = 10; }; };'
bad 'librarian = { lease_time = 10 }
fabric = {' 'bad.conf:[0-9]+: syntax error' "a syntax error names file:line"
bad "librarian = {
  lease_tme = 10;
};
$F" "bad.conf:2: unknown setting 'lease_tme' in 'librarian'" "an unknown setting is named with its line"
bad "librarian = { book_size = \"3M\"; };
$F" 'bad.conf:1: book size 3145728 is not a power of two from 2097152 \(2 MiB\) to 1099511627776 \(1 TiB\)' "a book size that is not a power of two"
bad "librarian = { book_size = \"1M\"; };
$F" 'book size 1048576 is not a power of two from 2097152' "a book size below 2M"
bad "librarian = { book_size = \"2T\"; };
$F" 'bad.conf:1: book size 2199023255552 is not a power of two from 2097152 \(2 MiB\) to 1099511627776 \(1 TiB\)' "a book size above 1T (the kernel's limit)"
bad "librarian = { book_size = \"eight\"; };
$F" "book_size 'eight' is not a size" "a book size that is not a size"
bad "librarian = { lease_time = 5; heartbeat_interval = 5; };
$F" 'lease_time 5 must be longer than heartbeat_interval 5' "a lease not longer than the heartbeat"
bad "librarian = { fence_grace = 0; };
$F" 'bad.conf:1: fence_grace 0 must be longer than heartbeat_interval 5: a node may renew its lease on a heartbeat' "fence_grace 0 is refused, naming both values"
bad "librarian = { heartbeat_interval = 3; lease_time = 20; fence_grace = 3; };
$F" 'fence_grace 3 must be longer than heartbeat_interval 3' "a fence_grace equal to the heartbeat interval is refused"
bad "librarian = { max_connections_per_node = 0; };
$F" "'max_connections_per_node' = 0 is out of range \\[1, 65536\\]" "max_connections_per_node 0 is refused"
# without an admin group the admin (its socket) is "admin" and owns the shelves it creates
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "admin"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:2: node name 'admin' is reserved for the admin identity \\(it owns the admin's shelves\\): rename the node" "a node named admin is refused without an admin group"
bad "librarian = { admin = { name = \"boss\"; key_file = \"$T/keys/admin.key\"; }; };
fabric = { racks = ( { name = \"r\"; enclosures = ( { name = \"e\"; nodes = (
  { name = \"admin\"; igs = ( { ig = 0; books = 4; } ); },
  { name = \"boss\"; igs = ( { ig = 1; books = 4; } ); } ); } ); } ); };" "bad.conf:3: node name 'admin' is reserved for the admin identity" "and with one of another name"
bad "librarian = { admin = { name = \"boss\"; key_file = \"$T/keys/admin.key\"; }; };
fabric = { racks = ( { name = \"r\"; enclosures = ( { name = \"e\"; nodes = (
  { name = \"boss\"; igs = ( { ig = 1; books = 4; } ); } ); } ); } ); };" "bad.conf:3: node name 'boss' is reserved for the admin identity" "a node named as the admin group says is refused"
bad "librarian = { default_policy = \"Sideways\"; };
$F" "default_policy 'Sideways' is not a policy" "an unknown default policy"
bad "librarian = { max_connections = 0; };
$F" "'max_connections' = 0 is out of range \[1, 65536\]" "an out-of-range limit names the range"
bad 'fabric = { };' "missing group 'fabric'|needs exactly one of 'racks'" "an empty fabric"
bad 'fabric = { compact = { nodes = 2; books = 10; }; racks = (); };' "needs exactly one of 'racks' \(explicit\) or 'compact'" "both fabric forms at once"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 0; books = 4; } ); },
  { name = "b"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:3: IG 0 is defined twice \(second time on node 'b'\)" "a duplicate IG names the line and node"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 0; books = 4; } ); },
  { name = "a"; igs = ( { ig = 1; books = 4; } ); } ); } ); } ); };' "bad.conf:3: duplicate node name 'a'" "a duplicate node name"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 0; size = "12G"; } ); } ); } ); } ); };' "bad.conf:2: memory module size 12884901888 is not a multiple of the book size" "a module size that is not whole books"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a b"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "node name 'a b' may contain only" "a bad node name"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = ".n"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:2: node name '\.n' must not start with '\.' or '-'" "a node name starting with '.'"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "-n"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:2: node name '-n' must not start with '\.' or '-'" "a node name starting with '-'"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "n'"$(printf 'a%.0s' $(seq 64))"'"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:2: node name 'na+' is 65 characters long: at most 64" "a node name of 65 characters"
bad 'fabric = { racks = ( { name = "-r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:1: rack name '-r' must not start with '\.' or '-'" "rack names follow the node name rule"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; key_file = "/nonexistent/a.key"; igs = ( { ig = 0; books = 4; } ); } ); } ); } ); };' "bad.conf:2: node 'a': key file '/nonexistent/a.key': No such file" "a missing key file is named"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 70000; books = 4; } ); } ); } ); } ); };' "bad.conf:2: IG 70000 is out of range: IG numbers are 0 to 65535" "an IG number out of range"
bad 'fabric = { racks = ( { name = "r"; enclosures = ( { name = "e"; nodes = (
  { name = "a"; igs = ( { ig = 4294967296L; books = 4; } ); } ); } ); } ); };' "bad.conf:2: IG 4294967296 is out of range: IG numbers are 0 to 65535" "IG 2^32 is out of range, not IG 0"
bad "librarian = { listen = \"127.0.0.1:99999\"; };
$F" "listen address '127.0.0.1:99999': bad port '99999'" "a bad listen address"
t_fails "a missing config file is an error" "$LIB" -c "$T/none.conf"
t_like "$("$LIB" -c "$T/none.conf" 2>&1)" "none.conf: cannot read: No such file" "and names the file"

# the compact form: 40 nodes x 1000 books in one line
PORT=$(lt_free_port)
lt_conf 'compact = { racks = 2; enclosures = 4; nodes = 5; books = 1000; power_domain = "enclosure"; };'
lt_start || t_ok 1 "start with the compact fabric"
g=$(lc geometry)
t_is "$(jq -r .total_books <<<"$g")" "40000" "compact fabric: 40 nodes x 1000 books"
t_is "$(jq -r '[.racks[].enclosures[].nodes[]] | length' <<<"$g")" "40" "compact fabric: 40 nodes"
t_is "$(jq -r '.racks[1].enclosures[3].nodes[4] | .name + " " + .power_domain + " " + (.igs[0].ig|tostring)' <<<"$g")" "node40 rack2-enc4 39" "compact fabric: generated names, power domains and IG numbers"

# one librarian per catalogue: SQLite refuses a second; on PostgreSQL a
# second one of another name is a standby that refuses requests naming the
# leader (leader.t; one of the same name is the leader restarting)
if [ "$LT_STORE" = sqlite ]; then
	out=$("$LIB" -c "$T/lib.conf" --listen "unix:$T/other.sock" 2>&1)
	t_like "$out" "another librarian is serving this catalogue" "a second librarian on the same catalogue is refused"
else
	sed 's/^librarian = {/&\n\tname = "other";/' "$T/lib.conf" >"$T/other.conf"
	"$LIB" -c "$T/other.conf" --listen "unix:$T/other.sock" >"$T/other.log" 2>&1 &
	other=$!
	for _ in $(seq 1 300); do # bounded: ~15 s
		out=$("$CLI" client --connect "unix:$T/other.sock" shelf.list 2>&1) && break
		[[ $out == *EREMOTE* ]] && break
		kill -0 "$other" 2>/dev/null || break
		sleep 0.05
	done
	t_like "$out" "EREMOTE: .*leader" "a second librarian on the same catalogue is a standby: EREMOTE naming the leader"
	kill -TERM "$other"
	wait "$other"
fi
out=$("$LIB" -c "$T/lib.conf" --db "$T/other.db" 2>&1)
t_like "$out" "another librarian is serving there|Address already in use" "a second librarian on the same addresses is refused"
lt_stop

# overrides and version
"$LIB" -c "$T/lib.conf" --db "$T/alt.db" --listen "unix:$T/alt.sock" >"$T/alt.log" 2>&1 & alt=$!
for i in $(seq 1 100); do "$CLI" client --connect "unix:$T/alt.sock" stats >/dev/null 2>&1 && break; sleep 0.05; done
t_is "$("$CLI" client --connect "unix:$T/alt.sock" stats | jq -r .books.total)" "40000" "--db and --listen override the config"
t_is "$(stat -c %a "$T/alt.sock")" "600" "the unix socket is private to its owner (mode 600)"
kill -TERM $alt; wait $alt
t_is "$?" "0" "clean exit on SIGTERM"
t_like "$("$LIB" --version)" "^librarian [0-9]+\.[0-9]+" "--version"

# keys
k=$("$LIB" genkey)
t_like "$k" "^[0-9a-f]{64}$" "genkey prints 32 random bytes as hex"
t_fails "genkey does not overwrite a key file" "$LIB" genkey "$T/keys/n1.key"
t_is "$(stat -c %a "$T/keys/n1.key")" "600" "genkey creates the file with mode 600"

# check finds damage
lt_sqlw "UPDATE igs SET free = free + 1 WHERE ig = 3; UPDATE books SET state = 1 WHERE id = 5;"
out=$(lt_check_db)
t_is "$?" "1" "check fails on a damaged catalogue"
t_like "$out" "IG whose free count disagrees \(ig, recorded, actual\): 3 " "check names the IG with the wrong count"
t_like "$out" "INUSE book not on exactly one shelf: 0 5 " "check names the book in two states"
lt_done
