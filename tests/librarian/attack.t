#!/bin/bash
# LFS-TEST: host alone
# The librarian under attack, on loopback: 2,000 idle and half-open TCP
# connections and a node flooding pipelined requests do not keep another
# node from logging in, renewing its lease and creating a shelf, nor the
# admin socket from answering. A damaged catalogue is refused at start,
# naming the row. A client whose librarian closes mid-request exits with a
# message, not a signal. Identities from the network are escaped in logs. A
# commit that fails is answered with EIO.
. tests/lib/tap.sh
. tests/librarian/lib.sh

ATTACK=${LIBRARIAN_ATTACK:-build/tests/lib-attack}
[ -x "$ATTACK" ] || { echo "Bail out! $ATTACK not built (run make)"; exit 1; }
# 2,000 connections of ours, and the librarian's budgets (it raises its own
# soft limit towards the hard one as far as they need)
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
t_diag "open file limit $(ulimit -n)"
now_ms() { date +%s%3N; }
lmsg() { "$@" 2>&1 >/dev/null; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'share = "rw";'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"
for i in $(seq 1 50); do echo "{\"op\":\"shelf.create\",\"name\":\"fill-$i\"}"; done | "$CLI" client --connect "unix:$SOCK" --stdin >/dev/null

# the attack: n1 floods pipelined requests, 1,000 idle and 1,000 half-open
# connections come in meanwhile
"$ATTACK" "127.0.0.1:$PORT" flood n1 "$T/keys/n1.key" 22 256 >"$T/flood.out" 2>"$T/flood.err" &
flood=$!
d=$((SECONDS + 20))
until grep -q flooding "$T/flood.err" || [ $SECONDS -ge $d ]; do sleep 0.05; done
"$ATTACK" "127.0.0.1:$PORT" idle 1000 25 >"$T/idle.out" 2>"$T/idle.err" &
idle=$!
"$ATTACK" "127.0.0.1:$PORT" halfopen 1000 25 >"$T/half.out" 2>"$T/half.err" &
half=$!
d=$((SECONDS + 20))
until grep -q opened "$T/idle.err" && grep -q opened "$T/half.err" || [ $SECONDS -ge $d ]; do sleep 0.2; done
t_diag "$(cat "$T/idle.err" "$T/half.err")"
r0=$(lc stats | jq .requests)
sleep 1
s=$(lc stats)
t_ok "$([ "$(jq .requests <<<"$s")" -gt $((r0 + 100)) ]; echo $?)" "the flood is on: $(($(jq .requests <<<"$s") - r0)) requests in a second"
t_ok "$([ "$(jq .connections_by_kind.unauthenticated <<<"$s")" -le 256 ]; echo $?)" "unauthenticated connections stay within max_unauthenticated ($(jq -c .connections_by_kind <<<"$s"))"

# meanwhile n2 logs in, renews its lease every second, creates a shelf
"$ATTACK" "127.0.0.1:$PORT" heartbeat n2 "$T/keys/n2.key" 6 1000 >"$T/hb.out" 2>&1 &
hb=$!
t0=$(now_ms)
c=$(ltls n2 shelf.create '{"name":"during","books":1}')
t_is "$(jq -r .name <<<"$c")" "during" "n2 logs in and creates a shelf during the attack ($(($(now_ms) - t0)) ms)"
t0=$(now_ms)
t_is "$(lc stats | jq -r '.shelves')" "51" "the admin socket answers ($(($(now_ms) - t0)) ms)"
# the admin socket has its own budget: 80 idle admin connections do not lock it
"$ATTACK" "unix:$SOCK" idle 80 4 >/dev/null 2>&1 &
adm=$!
sleep 1
t0=$(now_ms)
t_run "the admin still gets an answer with 80 idle admin connections open (max_admin_connections 64)" lc stats
wait $hb
rc=$?
t_ok $rc "n2's heartbeats were all answered: $(cat "$T/hb.out")"
max=$(awk '/^n / { print int($8) }' "$T/hb.out")
t_ok "$([ -n "$max" ] && [ "$max" -lt 2000 ]; echo $?)" "each within its lease (lease_time 2 s; longest ${max} ms)"
t_is "$(lc geometry | jq -r '.racks[0].enclosures[0].nodes[1].alive')" "true" "the librarian sees n2 live"
wait $adm $idle $half $flood
t_diag "flood: $(cat "$T/flood.out" "$T/flood.err") requests answered"
t_ok "$([ "$(cat "$T/flood.out")" -gt 0 ]; echo $?)" "the flooding node was served too"
t_run "the librarian survived" lc stats
t_like "$(cat "$T/server.log")" "closed to make room for a new connection \(max_unauthenticated" "it made room by closing the least recently active unauthenticated connections"

# a client whose librarian closes mid-request: an error message, not SIGPIPE
{ printf '{"op":"shelf.get","name":"'; head -c 8000000 /dev/zero | tr '\0' a; printf '"}\n'; } >"$T/big.json"
out=$("$CLI" client --connect "127.0.0.1:$PORT" --node n3 --key "$T/keys/n3.key" --stdin <"$T/big.json" 2>&1 >/dev/null)
rc=$?
t_ok "$([ $rc -ge 1 ] && [ $rc -lt 128 ]; echo $?)" "a client sending 8 MB to a librarian that refuses it after 4 bytes exits $rc, not by a signal"
t_like "$out" "librarian: shelf.get: (EMSGSIZE|EPIPE|ECONNRESET): " "and says why: $out"

# identities from the network are escaped in the log
"$LIB" genkey "$T/keys/esc.key" >/dev/null 2>&1
"$CLI" client --connect "127.0.0.1:$PORT" --node "$(printf 'evil\033[2Jx')" --key "$T/keys/esc.key" stats >/dev/null 2>&1
sleep 1.1 # the refusal log is rate-limited to one line a second
"$CLI" client --connect "127.0.0.1:$PORT" --node "$(printf 'evil\033[2Jy')" --key "$T/keys/esc.key" stats >/dev/null 2>&1
t_like "$(cat "$T/server.log")" 'identity evil\\x1b\[2J[xy]' "an identity with a control character is logged escaped"
t_ok "$(grep -q $'\033' "$T/server.log"; [ $? -ne 0 ]; echo $?)" "the log has no raw escape character"
t_run "the catalogue is consistent" lt_check_db
lt_stop

# a catalogue with one flipped book state is refused at start, naming the book
lt_sqlw "UPDATE books SET state = 0 WHERE id = (SELECT min(id) FROM books WHERE state = 1)"
book=$(lt_sql "SELECT (id >> 32) || ' ' || (id & 4294967295) FROM books WHERE state = 0 AND shelf IS NOT NULL")
out=$(timeout 30 "$LIB" -c "$T/lib.conf" 2>&1)
t_is "$?" "1" "the librarian refuses to serve a catalogue with a flipped book state"
t_like "$out" "INUSE book not on exactly one shelf: $book 0" "naming the book ($book)"
t_like "$out" "the catalogue failed its check at start \([0-9]+ violations above\); not serving it" "and saying what to do"
t_ok "$([ ! -S "$SOCK" ]; echo $?)" "it never listened"

# a commit that fails (here: the file size limit) is answered with EIO, not a bare close
lt_fresh
if lt_sqlite_only 3 "a commit failing at the librarian's file size limit (PostgreSQL's failed commits: pg.t)"; then
	(ulimit -f 1500; exec "$LIB" -c "$T/lib.conf" >>"$T/server.log" 2>&1) &
	LPID=$!
	d=$((SECONDS + 10))
	until lc stats >/dev/null 2>&1 || [ $SECONDS -ge $d ]; do sleep 0.1; done
	v=$(head -c 4000 /dev/zero | tr '\0' v)
	attrs=$(for k in $(seq 1 20); do printf '"user.k%d":"%s",' "$k" "$v"; done)
	for i in $(seq 1 300); do echo "{\"op\":\"shelf.create\",\"name\":\"big-$i\",\"attrs\":{${attrs%,}}}"; done >"$T/fill.json"
	"$CLI" client --connect "unix:$SOCK" --stdin <"$T/fill.json" >"$T/fill.out" 2>/dev/null
	t_like "$(grep -m1 '"ok":false' "$T/fill.out")" '"code":"EIO".*"the transaction of this request failed to commit and it was not applied \(database error: ' \
		"when the commit fails (file size limit) the request is answered EIO, saying it was not applied"
	t_run "the librarian keeps serving" lc stats
	t_is "$(lc shelf.list '{"limit":1}' | jq -r .total)" "$(grep -c '"ok":true' "$T/fill.out")" "exactly the acknowledged shelves exist"
else
	lt_start
fi
lt_stop
t_run "the catalogue is consistent" lt_check_db
lt_done
