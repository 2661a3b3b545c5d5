#!/bin/bash
# librarian -v (librarian(8): "Log every request and connection"): one line
# per request on stderr, "PEER (WHO): REQUEST -> ok|ERRNO", the request's
# text cut at 200 bytes, and one line per connection closed; for the admin on
# the unix socket, a node over TLS, errors, heartbeats (answered by the lease
# thread) and probes. Without -v none of these lines, while what is always
# logged (a refused TLS handshake) still is.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1
"$LIB" genkey "$T/wrong.key" || { echo "Bail out! genkey"; exit 1; }
lt_conf "$LT_FABRIC"
LOG=$T/server.log

# the same requests in both runs (on shelf $1); each client call is one connection
requests() {
	lc shelf.create "{\"name\":\"$1\",\"books\":1,\"policy\":\"LZAascending\"}" >/dev/null &&
		lerr lc shelf.get '{"name":"nope"}' >/dev/null &&
		ltls n1 shelf.list >/dev/null &&
		ltls n1 heartbeat '{}' >/dev/null &&
		ltls n1 heartbeat '{"lease":false}' >/dev/null &&
		lc attr.set "{\"name\":\"$1\",\"key\":\"user.long\",\"value\":\"$(printf 'y%.0s' {1..300})\"}" >/dev/null &&
		! "$CLI" client --connect "127.0.0.1:$PORT" --node n1 --key "$T/wrong.key" stats >/dev/null 2>&1
}
# lines of LOG after line $1 matching the ERE $2
seen() { tail -n +"$(($1 + 1))" "$LOG" | grep -E -- "$2"; }
count() { seen "$1" "$2" | wc -l; }

# --- with -v ------------------------------------------------------------------
lt_start -v
t_ok $? "librarian -v started" || lt_done
start=$(wc -l <"$LOG")
t_run "requests: admin and node, an error, heartbeats, a long one, a wrong key" requests v1
lt_stop
t_ok $? "librarian -v stopped cleanly"
U='unix pid [0-9]+ uid [0-9]+ \(admin\)'
N='127\.0\.0\.1:[0-9]+ \(n1\)'
t_like "$(seen "$start" "^librarian: $U: .*\"op\":\"shelf.create\"")" \
	"^librarian: $U: \\{\"v\":1,\"id\":2,\"op\":\"shelf.create\",\"name\":\"v1\",\"books\":1,\"policy\":\"LZAascending\"\\} -> ok\$" \
	"an admin request: peer (unix pid, uid), who (admin), the request, -> ok"
t_like "$(seen "$start" '"op":"shelf.get"')" "^librarian: $U: .*\"name\":\"nope\"\\} -> ENOENT\$" \
	"a failed request: -> its error code (ENOENT)"
t_like "$(seen "$start" '"op":"shelf.list"')" "^librarian: $N: \\{\"v\":1,\"id\":2,\"op\":\"shelf.list\"\\} -> ok\$" \
	"a node's request over TLS: peer 127.0.0.1:PORT, who n1"
t_is "$(count "$start" "^librarian: $N: \\{\"v\":1,\"id\":1,\"op\":\"auth\",\"node\":\"n1\"\\} -> ok\$")" 3 \
	"  its auth, once per connection (3 connections of n1)"
t_is "$(count "$start" "^librarian: $N: \\{\"v\":1,\"id\":2,\"op\":\"heartbeat\"\\} -> ok\$")" 1 \
	"a heartbeat (the lease thread's answer) is logged"
t_is "$(count "$start" "^librarian: $N: \\{\"v\":1,\"id\":2,\"op\":\"heartbeat\",\"lease\":false\\} -> ok\$")" 1 \
	"  and a probe"
long=$(seen "$start" '"key":"user.long"')
t_like "$long" "^librarian: $U: \\{\"v\":1,\"id\":2,\"op\":\"attr.set\",.*\"value\":\"y+ -> ok\$" \
	"a long request is logged with its outcome"
body=${long#*\(admin\): }
body=${body% -> ok}
t_is "${#body}" 200 "  its text cut at 200 bytes (the request has $((300 + 70)))"
t_is "$(count "$start" "^librarian: ($U|$N): closed: closed\$")" 6 \
	"each of the 6 connections closed after authenticating is logged"
t_is "$(count "$start" '^librarian: 127\.0\.0\.1:[0-9]+: TLS handshake refused for identity n1')" 1 \
	"the wrong key's refused handshake"
t_is "$(count "$start" ' -> (ok|E[A-Z0-9]+)$')" 12 \
	"12 request lines in all (5 requests + 5 auths, 2 heartbeats; the wrong key sent none)"

# --- without -v -----------------------------------------------------------------
lt_start
t_ok $? "librarian started without -v" || lt_done
start=$(wc -l <"$LOG")
t_run "the same requests" requests v2
lt_stop
t_ok $? "librarian stopped cleanly"
t_is "$(seen "$start" ' -> (ok|E[A-Z0-9]+)$|: closed: ')" "" "no request and no connection is logged"
t_is "$(count "$start" '^librarian: 127\.0\.0\.1:[0-9]+: TLS handshake refused for identity n1')" 1 \
	"  the refused handshake still is"
t_is "$(seen "$start" '^librarian: ' | grep -Ev 'TLS handshake refused|^librarian: serving |signal 15: shutting down|gave up the lead')" "" \
	"  and nothing else but the start and the stop"
lt_done
