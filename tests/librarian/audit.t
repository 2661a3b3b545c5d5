#!/bin/bash
# The audit trail (docs/AUDIT.md, librarian.conf(5) audit_log): one JSON
# line per request that may change the catalogue, refused or not, with who
# sent it, from where, the operation, the shelf, the arguments and the
# result; none for reads and heartbeats; each line written before the reply
# leaves (a client that got its reply finds its line at once); a long array
# argument written as its count; the file appended to across a restart; a
# bad audit_log refused at start, naming it. The PostgreSQL leader's own
# changes (leader.took, leader.lost) are checked in leader.t.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2
lt_conf "$LT_FABRIC" 'audit_log = "audit.jsonl"; share = "rw";'
A=$T/audit.jsonl
lt_start
t_ok $? "the librarian starts with audit_log" || lt_done
t_is "$(lc stats | jq -c '[.audit.records, .audit.errors]')" "[$LT_START_AUDIT,0]" "stats: no record yet (PostgreSQL: leader.took)"
lines() { wc -l <"$A"; }
# last: the last line, compact
last() { tail -n 1 "$A" | jq -c "${1:-.}"; }
lastr() { tail -n 1 "$A" | jq -r "$1"; }

t_is "$(lc shelf.create '{"name":"s1","books":2}' | jq -r .name)" s1 "the admin creates s1"
t_is "$(lines)" $((LT_START_AUDIT + 1)) "  one line, there when the reply came"
t_is "$(last '[.who, .role, .op, .shelf, .args, .result]')" \
	'["admin","admin","shelf.create","s1",{"name":"s1","books":2},"ok"]' "  who, role, op, shelf, args, result"
t_like "$(lastr .from)" "^unix pid [0-9]+ uid 0$" "  from: the unix socket's peer"
t_like "$(lastr .time)" "^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z$" "  time: UTC, milliseconds"
t_is "$(lastr '.message // "none"')" none "  no message when it succeeded"

t_is "$(lerr lc shelf.create '{"name":"s1","books":1}')" EEXIST "a second s1 is refused"
t_is "$(last '[.op, .shelf, .result]')" '["shelf.create","s1","EEXIST"]' "  and its line says EEXIST"
t_like "$(lastr .message)" "s1" "  with the message naming the shelf"

t_is "$(ltls n1 attr.set '{"name":"s1","key":"user.k","value":"v"}' | jq -r .key)" user.k "n1 sets an attribute over TLS"
t_is "$(last '[.who, .role, .op, .shelf, .args.key, .result]')" '["n1","node","attr.set","s1","user.k","ok"]' \
	"  its line names n1, a node"
t_like "$(lastr .from)" "^127\\.0\\.0\\.1:[0-9]+$" "  from: its address and port"
t_is "$(lerr ltls n1 node.set_state '{"node":"n2","state":"offline"}')" EPERM "n1 may not set n2 offline"
t_is "$(last '[.who, .op, .args.node, .result]')" '["n1","node.set_state","n2","EPERM"]' "  a refused change has its line too"

n=$(lines)
lc shelf.list >/dev/null && lc shelf.get '{"name":"s1"}' >/dev/null && ltls n1 heartbeat >/dev/null &&
	lc stats >/dev/null && lc geometry >/dev/null && lerr lc shelf.get '{"name":"nope"}' >/dev/null
t_is "$(lines)" "$n" "reads, heartbeats and a failed read: no line"

# a long array argument: its count only
t_is "$(lc shelf.create '{"name":"big","books":70}' | jq '.map | length')" 70 "a shelf of 70 books"
lc shelf.destroy '{"name":"big"}' >/dev/null
map=$(lc zombie.list '{"limit":1000}' | jq -c .books)
t_is "$(lc zombie.zeroed "{\"books\":$map}" | jq -c 'keys')" '["freed"]' "its 70 books reported zeroed"
t_is "$(last '[.op, .args.books, .result]')" '["zombie.zeroed",{"count":70},"ok"]' "  the line has the count, not the 70 ids"
t_is "$(jq -c 'select(.op == "shelf.destroy") | [.who, .shelf, .result]' "$A")" '["admin","big","ok"]' "the destroy's line"

t_is "$(jq -e . "$A" >/dev/null; echo $?)" 0 "every line is JSON"
t_is "$(lc stats | jq -c '[.audit.records, .audit.errors]')" "[$(lines),0]" "stats: the records written, no error"

# a restart appends
n=$(lines)
lt_stop
t_ok $? "the librarian stops"
lt_start
lc shelf.destroy '{"name":"s1"}' >/dev/null
t_is "$(lines)" $((n + LT_START_AUDIT + 1)) "restarted: the file is appended to"
t_is "$(last '[.op, .shelf, .result]')" '["shelf.destroy","s1","ok"]' "  with the new change"
t_is "$(stat -c %a "$A")" 600 "the file is mode 0600"
lt_stop

# a bad audit_log: refused, named, nothing served
lt_conf "$LT_FABRIC" "audit_log = \"$T/no/such/dir/audit.jsonl\";"
out=$(timeout 20 "$LIB" -c "$T/lib.conf" 2>&1)
t_is "$?" 1 "audit_log in a missing directory: the librarian does not start"
t_like "$out" "audit_log '$T/no/such/dir/audit.jsonl': cannot open it: No such file or directory" "  naming it and why"
lt_conf "$LT_FABRIC" 'audit_log = 5;'
out=$(timeout 20 "$LIB" -c "$T/lib.conf" 2>&1)
t_is "$?" 1 "audit_log = 5: refused"
t_like "$out" "audit_log" "  naming the setting"
lt_done
