#!/bin/bash
# LFS-TEST: host alone
# Bad input and hostile clients: each gets a clear error naming the bad value,
# the server survives and nothing in the catalogue changes. TLS: wrong keys,
# unknown nodes, replayed handshakes. 300 simultaneous connections (of one
# node: max_connections_per_node 300); a slow client does not hold anyone up.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'handshake_timeout = 2; max_connections_per_node = 300;'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
lc shelf.create '{"name":"keep","books":3}' >/dev/null
snapshot() { { lc stats | jq -c .books; lc shelf.list | jq -c '[.shelves[] | [.name, .books, .gen, .mtime]]'; } | tr '\n' ' '; }
before=$(snapshot)

# raw: send frames on the unix socket, look at the error in the last reply
raw_err() { "$RAW" "unix:$SOCK" "$@" | grep -v '^closed$\|^timeout$' | tail -n 1 | jq -r '.error.code + ": " + .error.message'; }

t_like "$(raw_err send '{"v":1,"id":1,"op":"stats"}')" "^EACCES: not authenticated" "a request before auth is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":')" "^EBADMSG: malformed JSON at line 1 column" "malformed JSON: EBADMSG with the position"
t_like "$(raw_err auth-send '[1,2,3]')" "^EBADMSG: a request must be a JSON object" "a JSON array is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"stats","op":"x"}')" "^EBADMSG: .*duplicate" "duplicate members are refused"
t_like "$(raw_err auth-send '{"v":2,"id":2,"op":"stats"}')" "^EPROTONOSUPPORT: protocol version 2 is not supported" "an unknown protocol version is refused naming it"
t_like "$(raw_err auth-send '{"v":1,"id":"x","op":"stats"}')" "^EINVAL: request \"id\" must be an integer" "a non-integer request id is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.explode"}')" "^EOPNOTSUPP: unknown operation 'shelf.explode'" "an unknown operation is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"x","books":"8"}')" "^EINVAL: argument 'books' must be an integer" "a wrong type is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"x","books":1000000000000000}')" "^ERANGE: argument 'books' = 1000000000000000 is out of range" "an absurd size is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"x","books":-1}')" "^EINVAL: argument 'books' = -1 is out of range" "a negative size is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"../etc/passwd"}')" "^EINVAL: shelf name '../etc/passwd' must not start with" "a path-like name is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"a b"}')" "^EINVAL: shelf name 'a b' may contain only" "a name with a space is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"x\u0001y"}')" "^EINVAL: shelf name 'x.x01y' may contain only" "a control character is shown escaped"
t_like "$(raw_err auth-send "{\"v\":1,\"id\":2,\"op\":\"shelf.create\",\"name\":\"$(printf 'a%.0s' $(seq 200))\"}")" "^ENAMETOOLONG: shelf name 'aaa.* is 200 characters long: at most 64" "an overlong name is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":""}')" "^EINVAL: shelf name '' is empty: give 1 to 64 characters" "an empty name is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.create","name":"x","colour":"red"}')" "^EINVAL: unknown argument 'colour' for op 'shelf.create'" "an unknown argument is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.get"}')" "^EINVAL: shelf.get needs exactly one of" "a missing argument is named"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"zombie.zeroed","books":[[0,"a"]]}')" "^EINVAL: books\[0\] = \[0,\"a\"\] is not a book" "a bad book reference is shown"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"attr.set","name":"keep","key":"k","value":"'"$(head -c 5000 /dev/zero | tr '\0' x)"'"}')" "^E2BIG: value of attribute 'k' is 5000 bytes" "an oversize attribute value is refused"
t_like "$(raw_err auth-send '{"v":1,"id":2,"op":"shelf.list","limit":100000}')" "^ERANGE: argument 'limit' = 100000 is out of range" "an absurd list limit is refused"
t_like "$(raw_err lie 2000000 '{}')" "^EMSGSIZE: message of 2000000 bytes is larger than max_message" "an oversize message is refused before it is read"
t_like "$(raw_err lie 100 '{"v":1,"id":3')" "^EBADMSG: truncated message" "a truncated message is reported"
t_like "$(raw_err bytes 00000000)" "^EBADMSG: empty message" "a zero-length message is refused"
out=$("$RAW" "unix:$SOCK" bytes "$(head -c 3000 /dev/urandom | od -An -tx1 | tr -d ' \n')")
t_like "$out" "closed|EMSGSIZE|EBADMSG|EACCES" "random bytes get an error or a close"
t_is "$(snapshot)" "$before" "none of that changed the catalogue"
t_run "the server still answers" lc stats

# TLS
e=$("$LIB" client --connect "127.0.0.1:$PORT" --node n1 --key "$T/keys/n2.key" stats 2>&1)
t_is "$?" "3" "a wrong key fails the connection"
t_like "$e" "TLS handshake failed" "the client says the handshake failed"
"$LIB" genkey "$T/keys/stranger.key"
t_fails "an unknown node name fails the handshake" "$LIB" client --connect "127.0.0.1:$PORT" --node stranger --key "$T/keys/stranger.key" stats
t_like "$(cat "$T/server.log")" "TLS handshake refused for identity n1" "the server logs the refused handshake with the identity"
cp "$T/keys/n1.key" "$T/keys/loose.key"; chmod 644 "$T/keys/loose.key"
t_like "$("$LIB" client --connect "127.0.0.1:$PORT" --node n1 --key "$T/keys/loose.key" stats 2>&1)" "accessible by group or others \(mode 0644\)" "a key file readable by others is refused"
t_like "$("$RAW" "127.0.0.1:$PORT" bytes 0000001a7b2276223a312c226964223a312c226f70223a2273746174227d)" "^closed" "plaintext JSON on the TLS port is dropped"
t_is "$(ltls n1 auth | jq -r .node)" "n1" "the right key still works"
t_like "$("$CLI" client --connect "127.0.0.1:$PORT" --node admin --key "$T/keys/admin.key" auth '{"node":"n2"}' 2>&1)" "EACCES: connection is authenticated as 'admin', not 'n2'" "over TLS the identity cannot change"

# replay: record a TLS session that creates a shelf, remove the shelf, replay the bytes
t_run "record a TLS session" "$RAW" "127.0.0.1:$PORT" record n1 "$T/keys/n1.key" "$T/session.bin" '{"v":1,"id":2,"op":"shelf.create","name":"replayed","books":1}'
t_is "$(lc shelf.get '{"name":"replayed"}' | jq -r .books)" "1" "the recorded session created its shelf"
lc shelf.destroy '{"name":"replayed"}' >/dev/null
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" >/dev/null
t_like "$("$RAW" "127.0.0.1:$PORT" replay "$T/session.bin" | tail -n 1)" "closed" "the replayed handshake is dropped"
t_is "$(lerr lc shelf.get '{"name":"replayed"}')" "ENOENT" "the replayed request was not executed"

# a client that never finishes its handshake is dropped after handshake_timeout (2 s)
t_is "$("$RAW" "127.0.0.1:$PORT" hold 3 4)" "0" "silent TLS connections are closed after the handshake timeout"

# concurrency: 300 TLS connections at once, each answered
t_is "$("$RAW" "127.0.0.1:$PORT" many 300 n1 "$T/keys/n1.key")" "300" "300 simultaneous TLS connections are all served"

# slow clients: one stalls mid-frame, one floods requests and reads nothing
"$RAW" "unix:$SOCK" stall 6 & stall=$!
"$RAW" "unix:$SOCK" flood 20000 6 & flood=$!
"$RAW" "127.0.0.1:$PORT" stall 6 & stall2=$!
ok=0 n=0
# a server that waited for any of them would hold these requests for the full 6 s
while kill -0 $stall 2>/dev/null && kill -0 $flood 2>/dev/null; do
	start=$(date +%s%N)
	timeout 5 "$CLI" client --connect "unix:$SOCK" stats >/dev/null || { ok=1; break; }
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $ms -lt 4000 ] || { ok=1; t_diag "a request took $ms ms"; break; }
	n=$((n + 1))
done
[ $n -ge 3 ] || { ok=1; t_diag "only $n requests while the slow clients were active"; }
t_ok $ok "requests are answered promptly while slow clients stall and flood"
wait $stall $flood $stall2
t_run "the server survived them" lc stats

# A librarian of another protocol version is refused at connect, naming both
# versions (lib-raw answers the auth as such a librarian would).
fake_auth() {
	local i
	rm -f "$T/fake.sock"
	"$RAW" "unix:$T/fake.sock" answer "$1" >"$T/fake.out" & fake=$!
	for i in $(seq 1 200); do
		[ -S "$T/fake.sock" ] && break
		sleep 0.02
	done
	"$CLI" client --connect "unix:$T/fake.sock" stats 2>&1 >/dev/null
	wait $fake
}
auth='"node":"admin","admin":true,"book_size":2097152,"server":"librarian 9","role":"single"'
t_like "$(fake_auth "{$auth,\"protocol\":2}")" "^librarian client: the librarian at unix:.*/fake.sock speaks protocol version 2; this client speaks version 1$" \
	"a librarian of protocol version 2 is refused, both versions named"
t_like "$(fake_auth "{$auth}")" "^librarian client: the librarian at unix:.*/fake.sock names no protocol version; this client speaks version 1$" \
	"a librarian naming no protocol version is refused"
t_like "$(fake_auth "{$auth,\"protocol\":1}")" "^librarian: stats: E(CONNRESET|PIPE)" \
	"the same answer with protocol version 1 is accepted (the request is sent)"
t_is "$(snapshot)" "$before" "the catalogue is unchanged"
lt_stop
t_is "$?" "0" "clean shutdown"
lt_done
