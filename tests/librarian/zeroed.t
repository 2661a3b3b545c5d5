#!/bin/bash
# books.zeroed and shelf.create's "zeroed": a new shelf reports true only when
# every book it got was reported zeroed (zombie.zeroed) since it last became
# FREE. Freeing (destroy, shrink), offline/online, an IG moving to another
# node and a backup copy all forget it. A version-1 catalogue is migrated on
# open; a newer one is refused untouched.
. tests/lib/tap.sh
. tests/librarian/lib.sh

# db SQL: one value from the catalogue (read-only; fine while the daemon serves)
db() { sqlite3 "file:${DB:-$T/cat.db}?mode=ro" "$1"; }
# books of a shelf-create reply as "ig:book ..."
books_of() { jq -r '[.map[] | "\(.[0]):\(.[1])"] | join(" ")'; }
# books with zeroed = 1 in IG $1 and state $2, as "book book ..."
zeroed_in() { db "SELECT group_concat(id & 4294967295, ' ') FROM (SELECT id FROM books WHERE id >> 32 = $1 AND state = $2 AND zeroed = 1 ORDER BY id)"; }
# zero every ZOMBIE book of node $1 (as that node over TLS)
zero_node() { ltls "$1" zombie.zeroed "{\"books\":$(ltls "$1" zombie.list | jq -c .books)}" | jq -r .freed; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"
t_is "$(db 'PRAGMA user_version')" "2" "a new catalogue has schema version 2"
t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0")" "0" "no book of a new catalogue is known zero"

# (a) fresh books: content unknown
c=$(lc shelf.create '{"name":"a","books":4,"policy":"RequestIG","igs":[2]}')
t_is "$(books_of <<<"$c")" "2:0 2:1 2:2 2:3" "a: RequestIG [2] takes IG 2's first four books"
t_is "$(jq -r .zeroed <<<"$c")" "false" "a shelf on fresh books reports zeroed false"
c=$(ltls n3 shelf.create '{"name":"act","books":2,"policy":"LocalNode","activate":"rw"}')
t_is "$(jq -c '[.zeroed, [.activations[].node]]' <<<"$c")" '[false,["n3"]]' "with activate too: zeroed false on fresh books"
t_is "$(lc shelf.create '{"name":"empty"}' | jq -r .zeroed)" "true" "an empty shelf reports zeroed true (no book to read)"

# (b) destroy, zero, the same books again: true
t_is "$(lc shelf.destroy '{"name":"a"}' | jq -r .zombies)" "4" "destroy a: 4 zombies"
t_is "$(db "SELECT count(*) FROM books WHERE state = 2 AND zeroed <> 0")" "0" "ZOMBIE books are not marked zeroed"
t_is "$(zero_node n2)" "4" "n2 reports its 4 zombies zeroed"
t_is "$(zeroed_in 2 0)" "0 1 2 3" "zombie.zeroed marks exactly those books zeroed"
c=$(lc shelf.create '{"name":"b","books":4,"policy":"RequestIG","igs":[2]}')
t_is "$(books_of <<<"$c")" "2:0 2:1 2:2 2:3" "b gets the same four books"
t_is "$(jq -r .zeroed <<<"$c")" "true" "a shelf on books all reported zeroed reports zeroed true"
t_is "$(zeroed_in 2 1)" "0 1 2 3" "allocation keeps the flag (INUSE: zero when allocated)"

# (d) destroy again: ZOMBIE forgets the flag; before zombie.zeroed only fresh books are free
lc shelf.destroy '{"name":"b"}' >/dev/null
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 2 AND zeroed <> 0")" "0" "destroying b clears the flag of its books (now ZOMBIE)"
t_run "the catalogue is consistent" lt_check_db
c=$(lc shelf.create '{"name":"fresh","books":4,"policy":"RequestIG","igs":[2]}')
t_is "$(books_of <<<"$c")" "2:4 2:5 2:6 2:7" "before zombie.zeroed the next shelf in IG 2 gets other, fresh books"
t_is "$(jq -r .zeroed <<<"$c")" "false" "and reports zeroed false"
lc shelf.destroy '{"name":"fresh"}' >/dev/null
t_is "$(zero_node n2)" "8" "n2 zeroes all 8 zombies"
c=$(ltls n2 shelf.create '{"name":"c","books":8,"policy":"RequestIG","igs":[2],"activate":"rw"}')
t_is "$(books_of <<<"$c")" "2:0 2:1 2:2 2:3 2:4 2:5 2:6 2:7" "c (created with activate) gets the 8 zeroed books"
t_is "$(jq -c '[.zeroed, [.activations[].node]]' <<<"$c")" '[true,["n2"]]' "after the round trip: zeroed true, and active"

# shrink: the released tail is ZOMBIE, not zeroed, until reported
r=$(ltls n2 shelf.resize '{"name":"c","books":2}')
t_is "$(jq -r '[.removed[] | "\(.[0]):\(.[1])"] | join(" ")' <<<"$r")" "2:2 2:3 2:4 2:5 2:6 2:7" "shrinking c releases its tail"
t_is "$(db "SELECT count(*) FROM books WHERE state = 2 AND zeroed <> 0")" "0" "the released books are ZOMBIE and not marked zeroed"
t_is "$(zeroed_in 2 1)" "0 1" "the kept books keep theirs"
ltls n2 shelf.deactivate '{"name":"c"}' >/dev/null
t_is "$(zero_node n2)" "6" "n2 zeroes the released tail"

# (c) zeroed and never-zeroed books mixed: false
c=$(lc shelf.create '{"name":"mix","books":7,"policy":"RequestIG","igs":[2]}')
t_is "$(books_of <<<"$c")" "2:2 2:3 2:4 2:5 2:6 2:7 2:8" "mix: six zeroed books and a fresh one"
t_is "$(jq -r .zeroed <<<"$c")" "false" "a shelf mixing zeroed and fresh books reports zeroed false"
lc shelf.destroy '{"name":"mix"}' >/dev/null
lc shelf.destroy '{"name":"c"}' >/dev/null
t_is "$(zero_node n2)" "9" "n2 zeroes mix and c"
t_is "$(zeroed_in 2 0)" "0 1 2 3 4 5 6 7 8" "IG 2's first nine books are FREE and known zero"
c=$(lc shelf.create '{"name":"mix2","books":4,"policy":"RequestIG","igs":[5,2]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "5:0 2:0 5:1 2:1 false" "fresh books first, zeroed last: false"
lc shelf.destroy '{"name":"mix2"}' >/dev/null
zero_node n2 >/dev/null && zero_node n5 >/dev/null
# the descending pick reads the flag too
c=$(lc shelf.create '{"name":"desc","books":9,"policy":"LZAdescending"}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "6:19 6:18 6:17 6:16 6:15 6:14 6:13 6:12 6:11 false" "LZAdescending: IG 6's last nine books, fresh: false"
lc shelf.destroy '{"name":"desc"}' >/dev/null
zero_node n6 >/dev/null
c=$(lc shelf.create '{"name":"desc2","books":9,"policy":"LZAdescending"}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "6:19 6:18 6:17 6:16 6:15 6:14 6:13 6:12 6:11 true" "the same books once zeroed: true"
lc shelf.destroy '{"name":"desc2"}' >/dev/null
zero_node n6 >/dev/null

# offline/online forgets the flag (the node's memory may have been lost)
o=$(lc shelf.create '{"name":"o1","books":3,"policy":"RequestIG","igs":[6]}')
lc shelf.destroy '{"name":"o1"}' >/dev/null
zero_node n6 >/dev/null
c=$(lc shelf.create '{"name":"o2","books":3,"policy":"RequestIG","igs":[6]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "$(books_of <<<"$o") true" "control: IG 6's zeroed books give zeroed true"
lc shelf.destroy '{"name":"o2"}' >/dev/null
zero_node n6 >/dev/null
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 6 AND (state <> 3 OR zeroed <> 0)")" "0" "offline: n6's books are OFFLINE and not known zero"
lc node.set_state '{"node":"n6","state":"online"}' >/dev/null
c=$(lc shelf.create '{"name":"o3","books":3,"policy":"RequestIG","igs":[6]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "$(books_of <<<"$o") false" "after offline/online the same books report zeroed false"
# zeroed while the node is offline: OFFLINE, and online again not known zero
lc shelf.destroy '{"name":"o3"}' >/dev/null
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
t_is "$(lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" | jq -r .freed)" "3" "the admin reports the offline node's zombies zeroed"
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 6 AND (state <> 3 OR zeroed <> 0)")" "0" "they become OFFLINE without the flag"
lc node.set_state '{"node":"n6","state":"online"}' >/dev/null
c=$(lc shelf.create '{"name":"o4","books":3,"policy":"RequestIG","igs":[6]}')
t_is "$(jq -r .zeroed <<<"$c")" "false" "online again: zeroed false"
lc shelf.destroy '{"name":"o4"}' >/dev/null
zero_node n6 >/dev/null
t_is "$(zeroed_in 6 0)" "0 1 2" "IG 6's first three books are known zero again"
t_run "the catalogue is consistent" lt_check_db

# a backup copy forgets which FREE books are zero (a restore may be older than the fabric)
t_run "backup" "$LIB" backup --db "$T/cat.db" "$T/copy.db"
t_is "$(DB=$T/copy.db db "SELECT count(*) FROM books WHERE zeroed <> 0 AND state = 0")" "0" "the copy has no FREE book marked zeroed"
t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0 AND state = 0")" "14" "the live catalogue keeps its 14"
lt_stop

# a restart keeps the flags; an IG that moved to another node loses them
lt_start
t_is "$(zeroed_in 2 0)" "0 1 2 3 4 5 6 7 8" "a restart keeps the flags"
lt_stop
swapped=${LT_FABRIC/ig = 5;/ig = @;}
swapped=${swapped/ig = 6;/ig = 5;}
lt_conf "${swapped/ig = @;/ig = 6;}"
lt_start
t_is "$(lc geometry | jq -r '.racks[1].enclosures[0].nodes[0].igs[0].ig')" "6" "IG 6 now belongs to n5"
t_is "$(zeroed_in 6 0)" "" "IG 6 moved to another node: its books are no longer known zero"
t_is "$(zeroed_in 2 0)" "0 1 2 3 4 5 6 7 8" "IG 2 did not move: its books keep the flag"
t_is "$(lc shelf.create '{"name":"moved","books":3,"policy":"RequestIG","igs":[6]}' | jq -r .zeroed)" "false" "a shelf on the moved IG reports zeroed false"
t_is "$(lc shelf.create '{"name":"kept","books":9,"policy":"RequestIG","igs":[2]}' | jq -r .zeroed)" "true" "a shelf on IG 2 reports zeroed true"
lt_stop
lt_conf "$LT_FABRIC"

# the check verifies the flag
cp "$T/cat.db" "$T/bad.db"
sqlite3 "$T/bad.db" "UPDATE books SET state = 2, zeroed = 1 WHERE id = (4 << 32) + 10;
	UPDATE igs SET free = free - 1 WHERE ig = 4; UPDATE books SET zeroed = 7 WHERE id = (4 << 32) + 11;"
out=$("$LIB" check --db "$T/bad.db")
t_is "$?" "1" "check fails on bad zeroed flags"
t_like "$out" "ZOMBIE or OFFLINE book marked zeroed \(ig, book, state\): 4 10 2" "check names a ZOMBIE book marked zeroed"
t_like "$out" "book with an invalid zeroed flag \(ig, book, zeroed\): 4 11 7" "check names an invalid flag"

# (e) migration of a version-1 catalogue: the schema and rows librarian 1 wrote
# (librarian/store.c before schema version 2), with a shelf, an activation
# and a ZOMBIE book
mv "$T/cat.db" "$T/v2.db"
rm -f "$T/cat.db-wal" "$T/cat.db-shm"
sqlite3 "$T/cat.db" >/dev/null <<'EOF'
PRAGMA journal_mode = WAL;
BEGIN;
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE nodes(name TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'online') WITHOUT ROWID;
CREATE TABLE igs(ig INTEGER PRIMARY KEY, node TEXT NOT NULL, books INTEGER NOT NULL, free INTEGER NOT NULL);
CREATE TABLE books(id INTEGER PRIMARY KEY, state INTEGER NOT NULL, shelf INTEGER, seq INTEGER);
CREATE INDEX books_free ON books(id) WHERE state = 0;
CREATE INDEX books_zombie ON books(id) WHERE state = 2;
CREATE UNIQUE INDEX books_shelf ON books(shelf, seq) WHERE shelf IS NOT NULL;
CREATE TABLE shelves(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, uuid TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, ctime INTEGER NOT NULL, mtime INTEGER NOT NULL, books INTEGER NOT NULL DEFAULT 0, gen INTEGER NOT NULL DEFAULT 0);
CREATE TABLE attrs(shelf INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(shelf, key)) WITHOUT ROWID;
CREATE TABLE activations(shelf INTEGER NOT NULL, node TEXT NOT NULL, mode TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY(shelf, node)) WITHOUT ROWID;
CREATE INDEX activations_node ON activations(node);
PRAGMA user_version = 1;
COMMIT;
BEGIN IMMEDIATE;
INSERT OR REPLACE INTO meta(key, value) VALUES ('book_size', 8589934592);
INSERT OR IGNORE INTO nodes(name) VALUES ('n1'), ('n2'), ('n3'), ('n4'), ('n5'), ('n6');
WITH g(ig, node) AS (VALUES (0, 'n1'), (1, 'n1'), (2, 'n2'), (3, 'n3'), (4, 'n4'), (5, 'n5'), (6, 'n6'))
	INSERT INTO igs(ig, node, books, free) SELECT ig, node, 20, 20 FROM g;
WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < 20)
	INSERT INTO books(id, state) SELECT (ig << 32) + x, 0 FROM c, igs;
COMMIT;
BEGIN IMMEDIATE;
INSERT INTO shelves(name, uuid, owner, ctime, mtime) VALUES
	('old', '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9', 'n3', 1700000000, 1700000000);
INSERT INTO attrs(shelf, key, value) VALUES (1, 'lfs.policy', 'RequestIG'), (1, 'lfs.igs', '3'),
	(1, 'user.app', 'pg');
UPDATE books SET state = 1, shelf = 1, seq = id & 4294967295 WHERE id BETWEEN (3 << 32) AND (3 << 32) + 3;
UPDATE shelves SET books = 4, mtime = 1700000001, gen = gen + 1 WHERE id = 1;
UPDATE books SET state = 2, shelf = NULL, seq = NULL WHERE shelf = 1 AND seq >= 3;
UPDATE shelves SET books = 3, mtime = 1700000002, gen = gen + 1 WHERE id = 1;
UPDATE igs SET free = 16 WHERE ig = 3;
INSERT INTO activations(shelf, node, mode, since) VALUES (1, 'n3', 'rw', 1700000003);
COMMIT;
EOF
t_is "$(db 'PRAGMA user_version')" "1" "the version-1 catalogue is built"
t_run "check accepts a consistent version-1 catalogue" lt_check_db
: >"$T/server.log"
lt_start || t_ok 1 "the librarian starts on the version-1 catalogue"
t_like "$(cat "$T/server.log")" "catalogue upgraded from schema version 1 to 2" "the upgrade is logged"
t_is "$(db 'PRAGMA user_version')" "2" "the catalogue is now version 2"
t_is "$(db "SELECT \"notnull\" || ',' || dflt_value FROM pragma_table_info('books') WHERE name = 'zeroed'")" "1,0" "books gained zeroed NOT NULL DEFAULT 0"
t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0")" "0" "no migrated book is known zero"
g=$(lc shelf.get '{"name":"old"}')
t_is "$(jq -c '[.uuid, .owner, .books, .gen, .policy, .map, [.activations[] | [.node, .mode]]]' <<<"$g")" \
	'["0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9","n3",3,2,"RequestIG",[[3,0],[3,1],[3,2]],[["n3","rw"]]]' \
	"the shelf, its books and its activation are kept"
t_is "$(jq -r '.attrs["user.app"]' <<<"$g")" "pg" "its attributes are kept"
t_is "$(lc stats | jq -c .books)" '{"total":140,"free":136,"inuse":3,"zombie":1,"offline":0}' "book counts are kept"
c=$(lc shelf.create '{"name":"new1","books":1,"policy":"RequestIG","igs":[3]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "3:4 false" "shelf.create works and reports zeroed false for a migrated FREE book"
t_is "$(zero_node n3)" "1" "n3 zeroes the migrated ZOMBIE book"
c=$(lc shelf.create '{"name":"new2","books":1,"policy":"RequestIG","igs":[3]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "3:3 true" "its shelf reports zeroed true"
t_run "the migrated catalogue is consistent" lt_check_db
lt_stop
lt_start
t_is "$(grep -c "catalogue upgraded" "$T/server.log")" "1" "a second start does not migrate again"
t_is "$(lc shelf.get '{"name":"new2"}' | jq -c .map)" "[[3,3]]" "and serves the migrated catalogue"
lt_stop

# a catalogue newer than this librarian is refused and left alone
cp "$T/cat.db" "$T/newer.db"
sqlite3 "$T/newer.db" "PRAGMA user_version = 3"
sum=$(md5sum <"$T/newer.db")
out=$("$LIB" -c "$T/lib.conf" --db "$T/newer.db" 2>&1)
t_is "$?" "1" "a version-3 catalogue is refused"
t_like "$out" "newer.db: catalogue schema version 3 is newer than this librarian's \(2\)" "the refusal says the catalogue is newer"
t_is "$(md5sum <"$T/newer.db") $(DB=$T/newer.db db 'PRAGMA user_version')" "$sum 3" "and leaves it unchanged"
out=$("$LIB" check --db "$T/newer.db")
t_is "$?" "1" "check refuses it too"
t_like "$out" "schema version 3 is not supported" "naming the version"
lt_done
