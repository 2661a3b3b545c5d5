#!/bin/bash
# One librarian request, one round trip to PostgreSQL (docs/HA.md, "Round
# trips"): stats' db.round_trips counts the serving connection's round
# trips. A create of 8 books, a destroy and a report of zeroed books cost one
# each (and the commit of their round); a grow or a shrink two; a grow of
# 1,000 books and a report of 1,000 zeroed books a few, not one per book.
# Then the same sequence of grows, shrinks, destroys and zeroing on SQLite
# and on PostgreSQL: both stores place every book at the same position
# (one allocation rule, run by both).
[ -x "${PGBIN:-/usr/lib/postgresql/15/bin}/initdb" ] || { echo "1..0 # SKIP no PostgreSQL 15 (apt-get install postgresql-15)"; exit 77; }
export LFS_TEST_STORE=pg
. tests/lib/tap.sh
. tests/librarian/lib.sh

FABRIC='racks = ( { name = "r1"; enclosures = ( { name = "e1"; nodes = (
	{ name = "n1"; power_domain = "A"; igs = ( { ig = 0; books = 600; }, { ig = 1; books = 600; } ); },
	{ name = "n2"; power_domain = "B"; igs = ( { ig = 2; books = 600; } ); } ); } ); } );'
lt_keys admin n1 n2

# The same requests on either store; every book placement printed.
scenario() {
	lcn n1 shelf.create '{"name":"a","books":8,"policy":"LZAascending"}' | jq -c .map
	lcn n1 shelf.create '{"name":"big","books":0,"policy":"LZAascending"}' >/dev/null
	lcn n1 shelf.resize '{"name":"big","books":1000}' | jq -c .added
	lcn n2 shelf.create '{"name":"d","books":50,"policy":"LZAdescending"}' | jq -c .map
	lcn n2 shelf.create '{"name":"s","books":30,"policy":"Spread"}' | jq -c .map
	lcn n2 shelf.create '{"name":"n","books":40,"policy":"Nearest"}' | jq -c .map
	lcn n1 shelf.resize '{"name":"a","books":3}' | jq -c .removed
	lcn n1 shelf.destroy '{"name":"big"}' | jq -c .
	lc zombie.zeroed "{\"books\":$(lc zombie.list '{"limit":5000}' | jq -c .books)}"
	lcn n1 shelf.resize '{"name":"a","books":700}' | jq -c .added
	lcn n2 shelf.resize '{"name":"d","books":450}' | jq -c .added
	lc stats | jq -c '[.books.free, .books.inuse, .books.zombie, .free_known_zero]'
}

BENCH=${LIBRARIAN_BENCH:-build/tests/lib-bench}
# long leases and a long-lived leader row: no renewal runs between two stats
lt_conf "$FABRIC" 'leader_ttl_ms = 60000; leader_refresh_ms = 20000;'
sed -i 's/lease_time = 2;/lease_time = 120;/' "$T/lib.conf"
lt_start || { t_ok 1 "librarian starts on PostgreSQL"; lt_done; }
rt() { lc stats | jq '.db.round_trips // 0'; }
a=$(rt)
b=$(rt)
base=$((b - a)) # a client's stats: its auth's round and its own
t_diag "a client that asks for stats: $base round trips"
# bench ADDR ... : the round trips of a lib-bench run over one connection, less the stats
bench() {
	local a b
	a=$(rt)
	"$BENCH" "127.0.0.1:$PORT" admin "$T/keys/admin.key" "$@" >"$T/out" || t_diag "lib-bench $* failed"
	b=$(rt)
	echo $((b - a - base))
}
bench grow 100 1 >/dev/null # statements prepared on the server
r=$(bench grow 1000 1)
t_is "$(grep -c 'grow of an empty shelf to 1000 books' "$T/out")" 1 "a grow of 1,000 books (create, grow, destroy, zeroed)"
# per book would be 2,000 for the grow and 1,000 for the report of zeroed books
# 1 + (lookup + 4 pipelines of takes) + 1 + 4 pipelines of reports + 4 commits (32 before)
t_ok $(( !(r >= 4 && r <= 20) )) "create, grow to 1,000 books, destroy, report 1,000 zeroed: $r round trips (4 requests, 4 commits; at most 20, not one a book)"
r=$(bench cycle 1 2 8)
n=$(awk '/cycles/ { print $6 }' "$T/out")
t_ok $(( !(n > 0) )) "lib-bench cycles of create-8/destroy/zeroed: $n"
t_diag "$(awk -v r="$r" -v n="$n" 'BEGIN { printf "%.1f round trips a cycle (its 3 commits included)", r / n }')"
# a shelf id block read every 64 creates: at most 6.1 a cycle (17 before, 40 one a statement)
t_ok $(( !(r >= 3 * n && r * 10 <= 61 * n) )) "a cycle takes 6 round trips: one a request, one a commit ($r for $n)"
# one request over a new connection: its auth's round, its own, its commit
one() {
	local a b
	a=$(rt)
	"$@" >/dev/null
	b=$(rt)
	echo $((b - a - base - 2))
}
# the same requests once: their statements prepared on the server (a round trip each, once)
# (a failed request forgets the counts and ids the librarian keeps: the next create reads them)
lcn n1 shelf.create '{"name":"w","books":0}' >/dev/null
lerr lcn n1 shelf.create '{"name":"w","books":8}' >/dev/null
lcn n1 shelf.create '{"name":"w2","books":8}' >/dev/null
for b in 16 4; do lcn n1 shelf.resize "{\"name\":\"w2\",\"books\":$b}" >/dev/null; done
lcn n1 shelf.destroy '{"name":"w2"}' >/dev/null
t_is "$(one lcn n1 shelf.create '{"name":"r","books":8}')" 1 "a create of 8 books: one round trip"
t_is "$(one lcn n1 shelf.resize '{"name":"r","books":16}')" 2 "a grow by 8: two (the lookup, the takes)"
t_is "$(one lcn n1 shelf.resize '{"name":"r","books":4}')" 2 "a shrink: two (the lookup, the books it removes)"
t_is "$(one lcn n1 shelf.destroy '{"name":"r"}')" 1 "a destroy: one"
t_is "$(one lcn n1 shelf.create '{"name":"w","books":8}')" 3 "a create of a taken name: one, one to say why, one to undo it"
t_is "$(lerr lcn n1 shelf.create '{"name":"w","books":8}')" EEXIST "(EEXIST)"
lcn n1 shelf.destroy '{"name":"w"}' >/dev/null
zl=$(lc zombie.list '{"limit":100}' | jq -c .books)
t_is "$(one lc zombie.zeroed "{\"books\":$zl}")" 1 "a report of $(jq length <<<"$zl") books zeroed: one"
lcn n1 shelf.create '{"name":"fill","books":1000}' >/dev/null
t_is "$(lerr lcn n1 shelf.create '{"name":"x","books":900}')" ENOSPC "a create beyond the free books: ENOSPC"
lcn n1 shelf.create '{"name":"x","books":0}' >/dev/null
t_is "$(lerr lcn n1 shelf.resize '{"name":"x","books":900}')" ENOSPC "a grow beyond them: ENOSPC"
t_is "$(lc stats | jq -c '[.books.inuse, .books.zombie, .books.free]')" "[1000,0,800]" "and nothing changed"
# a write that waited fails: its request fails whole, nothing of it stays
lt_sql "ALTER TABLE attrs ADD CONSTRAINT no_boom CHECK (value <> 'boom' AND value <> 'LZAdescending')"
t_is "$(lerr lcn n1 shelf.create '{"name":"y","books":8,"policy":"LZAdescending"}')" EIO "a create whose policy attribute is refused by the database: EIO"
t_is "$(lerr lc shelf.get '{"name":"y"}')" ENOENT "and no shelf y"
t_is "$(lerr lc attr.set '{"name":"x","key":"k","value":"boom"}')" EIO "an attribute the database refuses (a write that waited for the commit): EIO"
t_is "$(lerr lc attr.get '{"name":"x","key":"k"}')" ENODATA "and it is not there"
t_is "$(lc attr.set '{"name":"x","key":"k","value":"fine"}' >/dev/null && lc attr.get '{"name":"x","key":"k"}' | jq -r .value)" fine "the next request is served"
t_is "$(lc stats | jq -c '[.books.inuse, .books.zombie, .books.free]')" "[1000,0,800]" "the books are as they were"
lt_sql "ALTER TABLE attrs DROP CONSTRAINT no_boom"
lcn n1 shelf.destroy '{"name":"x"}' >/dev/null
lt_stop
# a fresh database for the comparison
lt_pg_as "$PGBIN/createdb" -h "$LT_PG_HOST" -U postgres "${LT_PG_DB}_b" || t_diag "createdb failed"
PGDB=${LT_DB/$LT_PG_DB/${LT_PG_DB}_b}
LT_DB=$PGDB
lt_conf "$FABRIC"
lt_start || { t_ok 1 "librarian starts on a second database"; lt_done; }
scenario >"$T/pg.out" 2>&1
lt_stop
LT_DB=$T/cat.db
lt_conf "$FABRIC"
lt_start || { t_ok 1 "librarian starts on SQLite"; lt_done; }
scenario >"$T/sqlite.out" 2>&1
lt_stop
t_is "$(wc -l <"$T/pg.out")" 11 "the sequence ran on PostgreSQL (11 answers)"
t_ok "$(cmp -s "$T/pg.out" "$T/sqlite.out"; echo $?)" "SQLite and PostgreSQL placed every book alike"
cmp -s "$T/pg.out" "$T/sqlite.out" || diff "$T/pg.out" "$T/sqlite.out" | cut -c1-160 | head -n 10 | sed 's/^/#   /'
t_is "$(grep -c 'null\|error' "$T/pg.out")" 0 "no request failed"
"$LIB" check --db "$PGDB" >/dev/null
t_ok $? "librarian check: the PostgreSQL catalogue is consistent"
"$LIB" check --db "$T/cat.db" >/dev/null
t_ok $? "librarian check: the SQLite catalogue is consistent"
lt_done
