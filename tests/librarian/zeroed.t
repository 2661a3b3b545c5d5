#!/bin/bash
# books.zeroed and allocation: only FREE books known to read as zeroes are
# allocated, so every new shelf is known zero ("zeroed": true). Books become
# known zero when their node reports them zeroed (zombie.zeroed, after a
# destroy or shrink, or free.scrub) or read as zeroes (free.checked,
# checkfree.t); freeing (destroy, shrink), offline/online, an IG moving to
# another node and a backup copy forget it. New memory is of unknown content
# unless new_books = "zero". A version-1 or 2 catalogue is migrated on open;
# a newer one is refused untouched. On PostgreSQL (LFS_TEST_STORE=pg) the
# same, but for SQLite's own: librarian backup's copy and the migration of
# versions 1 and 2 (PostgreSQL catalogues began at version 3).
. tests/lib/tap.sh
LT_NEW_BOOKS=unknown
. tests/librarian/lib.sh

# db SQL: one value from the catalogue (read-only; fine while the daemon
# serves); DB=FILE: a SQLite copy
db() { if [ -n "${DB:-}" ]; then sqlite3 "file:$DB?mode=ro" "$1"; else lt_sql "$1"; fi; }
# rows SQL: the rows of a one-column query on one line
rows() { db "$1" | paste -sd ' '; }
# the catalogue's schema version
version() { if [ "$LT_STORE" = pg ]; then db "SELECT value FROM meta WHERE key = 'schema_version'"; else db 'PRAGMA user_version'; fi; }
# books of a shelf-create reply as "ig:book ..."
books_of() { jq -r '[.map[] | "\(.[0]):\(.[1])"] | join(" ")'; }
# books with zeroed = 1 in IG $1 and state $2, as "book book ..."
zeroed_in() { rows "SELECT id & 4294967295 FROM books WHERE id >> 32 = $1 AND state = $2 AND zeroed = 1 ORDER BY id"; }
# zero every ZOMBIE book of node $1 (as that node over TLS)
zero_node() { ltls "$1" zombie.zeroed "{\"books\":$(ltls "$1" zombie.list | jq -c .books)}" | jq -r .freed; }
# have node $1 zero $2 of its never-used books (free.scrub, then zombie.zeroed)
scrub() { ltls "$1" free.scrub "{\"limit\":$2}" >/dev/null && zero_node "$1"; }
lmsg() { "$@" 2>&1 >/dev/null; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"
t_is "$(version)" "4" "a new catalogue has schema version 4"
t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0")" "0" "no book of a new catalogue is known zero (new_books = \"unknown\")"
t_is "$(lc stats | jq -c '[.books.free, .free_known_zero]')" "[140,0]" "stats: 140 free books, none known zero"

# (a) fresh books: content unknown, never allocated
snap() { { lc stats | jq -c '[.books, .shelves]'; rows "SELECT ig || '=' || free || '/' || zero FROM igs ORDER BY ig"; } | tr '\n' ' '; }
before=$(snap)
t_like "$(lmsg lc shelf.create '{"name":"a","books":4,"policy":"RequestIG","igs":[2]}')" \
	"ENOSPC: cannot allocate 4 books with policy RequestIG: only 0 free books known to be zero are available to it; 20 more wait to be zeroed \(0 freed, 20 never used or of unknown content\)" \
	"a shelf on fresh books is refused: ENOSPC with the known-zero and waiting counts"
t_like "$(lmsg ltls n3 shelf.create '{"name":"act","books":2,"policy":"LocalNode","activate":"rw"}')" \
	"ENOSPC: cannot allocate 2 books with policy LocalNode for node n3: only 0 free books known to be zero" "with activate too"
t_is "$(snap)" "$before" "ENOSPC changed nothing"
t_is "$(lc shelf.create '{"name":"empty"}' | jq -r .zeroed)" "true" "an empty shelf is created (zeroed true: no book to read)"

# (b) n2 zeroes four of its never-used books: they are allocated, and known zero
t_is "$(scrub n2 4)" "4" "n2 scrubs and zeroes 4 never-used books"
t_is "$(zeroed_in 2 0)" "0 1 2 3" "they are FREE and known zero"
t_is "$(db "SELECT free || '/' || zero FROM igs WHERE ig = 2")" "20/4" "igs: IG 2 has 20 free books, 4 known zero"
c=$(lc shelf.create '{"name":"a","books":4,"policy":"RequestIG","igs":[2]}')
t_is "$(books_of <<<"$c")" "2:0 2:1 2:2 2:3" "a: RequestIG [2] takes IG 2's four known-zero books"
t_is "$(jq -r .zeroed <<<"$c")" "true" "and reports zeroed true"
t_is "$(zeroed_in 2 1)" "0 1 2 3" "allocation keeps the flag (INUSE: zero when allocated)"
t_like "$(lmsg lc shelf.create '{"name":"b","books":1,"policy":"RequestIG","igs":[2]}')" "only 0 free books known to be zero .* 16 more wait to be zeroed \(0 freed, 16 never used" "IG 2 has no known-zero book left: ENOSPC"

# (c) destroy: ZOMBIE forgets the flag; the same books come back once zeroed
t_is "$(lc shelf.destroy '{"name":"a"}' | jq -r .zombies)" "4" "destroy a: 4 zombies"
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 2 AND zeroed <> 0")" "0" "destroying a clears the flag of its books (now ZOMBIE)"
t_like "$(lmsg lc shelf.create '{"name":"b","books":4,"policy":"RequestIG","igs":[2]}')" "only 0 free books known to be zero .* 20 more wait to be zeroed \(4 freed, 16 never used" "before zombie.zeroed: ENOSPC counting the 4 freed books"
t_run "the catalogue is consistent" lt_check_db
t_is "$(zero_node n2)" "4" "n2 reports its 4 zombies zeroed"
t_is "$(zeroed_in 2 0)" "0 1 2 3" "zombie.zeroed marks exactly those books zeroed"
c=$(ltls n2 shelf.create '{"name":"c","books":4,"policy":"RequestIG","igs":[2],"activate":"rw"}')
t_is "$(books_of <<<"$c")" "2:0 2:1 2:2 2:3" "c (created with activate) gets the same four books"
t_is "$(jq -c '[.zeroed, [.activations[].node]]' <<<"$c")" '[true,["n2"]]' "zeroed true, and active"

# shrink: the released tail is ZOMBIE, not zeroed, until reported
r=$(ltls n2 shelf.resize '{"name":"c","books":2}')
t_is "$(jq -r '[.removed[] | "\(.[0]):\(.[1])"] | join(" ")' <<<"$r")" "2:2 2:3" "shrinking c releases its tail"
t_is "$(db "SELECT count(*) FROM books WHERE state = 2 AND zeroed <> 0")" "0" "the released books are ZOMBIE and not marked zeroed"
t_is "$(zeroed_in 2 1)" "0 1" "the kept books keep theirs"
t_is "$(lerr ltls n2 shelf.resize '{"name":"c","books":3}')" "ENOSPC" "a grow finds no known-zero book while they wait"
ltls n2 shelf.deactivate '{"name":"c"}' >/dev/null
t_is "$(zero_node n2)" "2" "n2 zeroes the released tail"
t_is "$(lc shelf.resize '{"name":"c","books":4}' | jq -c '.added')" "[[2,2],[2,3]]" "then the grow gets them back"
lc shelf.destroy '{"name":"c"}' >/dev/null
zero_node n2 >/dev/null

# (d) policies pick among known-zero books only
t_is "$(scrub n5 2)" "2" "n5 zeroes two never-used books"
c=$(lc shelf.create '{"name":"mix","books":4,"policy":"RequestIG","igs":[5,2]}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "5:0 2:0 5:1 2:1 true" "RequestIG [5,2]: known-zero books of both, round-robin"
lc shelf.destroy '{"name":"mix"}' >/dev/null
zero_node n2 >/dev/null && zero_node n5 >/dev/null
t_is "$(scrub n6 20)" "20" "n6 zeroes all 20 of its books"
lc shelf.create '{"name":"hole","books":2,"policy":"LZAdescending"}' >/dev/null
c=$(lc shelf.create '{"name":"desc","books":9,"policy":"LZAdescending"}')
t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "6:17 6:16 6:15 6:14 6:13 6:12 6:11 6:10 6:9 true" "LZAdescending: the highest known-zero books"
lc shelf.destroy '{"name":"desc"}' >/dev/null
lc shelf.destroy '{"name":"hole"}' >/dev/null
zero_node n6 >/dev/null

# offline/online forgets the flag (the node's memory may have been lost)
t_is "$(zeroed_in 6 0 | wc -w)" "20" "control: IG 6's 20 books are known zero"
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 6 AND (state <> 3 OR zeroed <> 0)")" "0" "offline: n6's books are OFFLINE and not known zero"
online() { local d=$((SECONDS + 10)); until lc node.set_state "{\"node\":\"$1\",\"state\":\"online\"}" >/dev/null 2>&1 || [ $SECONDS -ge $d ]; do sleep 0.2; done; }
online n6
t_is "$(lc geometry | jq -r '.racks[1].enclosures[0].nodes[1].state')" "online" "n6 is online again"
t_like "$(lmsg lc shelf.create '{"name":"o3","books":3,"policy":"RequestIG","igs":[6]}')" "only 0 free books known to be zero .* 20 never used or of unknown content" "after offline/online its books are unknown: ENOSPC"
# zeroed while the node is offline: OFFLINE, and online again not known zero
t_is "$(scrub n6 3)" "3" "n6 zeroes three"
lc shelf.create '{"name":"o3","books":3,"policy":"RequestIG","igs":[6]}' >/dev/null
lc shelf.destroy '{"name":"o3"}' >/dev/null
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
t_is "$(lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c .books)}" | jq -r .freed)" "3" "the admin reports the offline node's zombies zeroed"
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 = 6 AND (state <> 3 OR zeroed <> 0)")" "0" "they become OFFLINE without the flag"
online n6
t_is "$(lerr lc shelf.create '{"name":"o4","books":3,"policy":"RequestIG","igs":[6]}')" "ENOSPC" "online again: unknown, not allocated"
t_is "$(scrub n6 3)" "3" "n6 zeroes three again"
t_is "$(zeroed_in 6 0)" "0 1 2" "IG 6's first three books are known zero again"
t_run "the catalogue is consistent" lt_check_db

# a backup copy forgets which FREE books are zero (a restore may be older than the fabric)
# (on PostgreSQL the restore forgets them, docs/HA.md: backup.t)
t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0 AND state = 0")" "9" "the live catalogue has 9 FREE books known zero"
if lt_sqlite_only 4 "librarian backup's copy (PostgreSQL's is pg_dump's, backup.t)"; then
	t_run "backup" "$LIB" backup --db "$T/cat.db" "$T/copy.db"
	t_is "$(DB=$T/copy.db db "SELECT count(*) FROM books WHERE zeroed <> 0 AND state = 0")" "0" "the copy has no FREE book marked zeroed"
	t_is "$(DB=$T/copy.db db "SELECT sum(zero) FROM igs")" "0" "and no IG counts one"
	t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0 AND state = 0")" "9" "the live catalogue keeps its 9"
fi
lt_stop

# a restart keeps the flags; an IG that moved to another node loses them
lt_start
t_is "$(zeroed_in 2 0)" "0 1 2 3" "a restart keeps the flags"
lt_stop
swapped=${LT_FABRIC/ig = 5;/ig = @;}
swapped=${swapped/ig = 6;/ig = 5;}
lt_conf "${swapped/ig = @;/ig = 6;}"
lt_start
t_is "$(lc geometry | jq -r '.racks[1].enclosures[0].nodes[0].igs[0].ig')" "6" "IG 6 now belongs to n5"
t_is "$(zeroed_in 6 0)" "" "IG 6 moved to another node: its books are no longer known zero"
t_is "$(zeroed_in 2 0)" "0 1 2 3" "IG 2 did not move: its books keep the flag"
t_is "$(lerr lc shelf.create '{"name":"moved","books":1,"policy":"RequestIG","igs":[6]}')" "ENOSPC" "a shelf on the moved IG is refused"
t_is "$(lc shelf.create '{"name":"kept","books":4,"policy":"RequestIG","igs":[2]}' | jq -r .zeroed)" "true" "a shelf on IG 2 is created"
t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_conf "$LT_FABRIC"

# the check verifies the flag and the count of known-zero books
bad=$(lt_db_copy bad)
lt_sqlw_copy bad "UPDATE books SET state = 2, zeroed = 1 WHERE id = 4 * 4294967296 + 10;
	UPDATE igs SET free = free - 1 WHERE ig = 4; UPDATE books SET zeroed = 7 WHERE id = 4 * 4294967296 + 11;
	UPDATE igs SET zero = zero + 5 WHERE ig = 3;"
out=$("$LIB" check --db "$bad")
t_is "$?" "1" "check fails on bad zeroed flags"
t_like "$out" "ZOMBIE or OFFLINE book marked zeroed \(ig, book, state\): 4 10 2" "check names a ZOMBIE book marked zeroed"
t_like "$out" "book with an invalid zeroed flag \(ig, book, zeroed\): 4 11 7" "check names an invalid flag"
t_like "$out" "IG whose count of known-zero free books disagrees \(ig, recorded, actual\): 3 5 0" "check names a wrong count of known-zero books"

# new_books = "zero": the administrator says new memory reads as zeroes
lt_db_copy unknown >/dev/null
lt_fresh
LT_NEW_BOOKS=zero lt_conf "$LT_FABRIC"
lt_start
t_is "$(lc stats | jq -c '[.books.free, .free_known_zero]')" "[140,140]" "new_books = \"zero\": every book of a new catalogue is known zero"
t_is "$(lc shelf.create '{"name":"z","books":3,"policy":"RequestIG","igs":[1]}' | jq -c '[.map, .zeroed]')" "[[[1,0],[1,1],[1,2]],true]" "and allocated"
lt_stop
LT_NEW_BOOKS=zero lt_conf "${LT_FABRIC/ig = 6; books = 20;/ig = 6; books = 24;}"
lt_start
t_is "$(zeroed_in 6 0 | wc -w)" "24" "an IG grown by 4 books: the new books are known zero too"
lc node.set_state '{"node":"n4","state":"offline"}' >/dev/null
online n4
t_is "$(zeroed_in 4 0 | wc -w)" "20" "a node back online: its books are known zero"
t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_db_put unknown
lt_conf "$LT_FABRIC"

# (e) migration of a version-1 catalogue: the schema and rows librarian 1 wrote
# (librarian/store.c before schema version 2), with a shelf, an activation
# and a ZOMBIE book
if lt_sqlite_only 17 "the migration of SQLite catalogues of versions 1 and 2"; then
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
	t_like "$(cat "$T/server.log")" "catalogue upgraded from schema version 1 to 4" "the upgrade is logged"
	t_is "$(db 'PRAGMA user_version')" "4" "the catalogue is now version 4"
	t_is "$(db "SELECT count(*) FROM bad")" "0" "with a bad table, no book known bad"
	t_is "$(db "SELECT \"notnull\" || ',' || dflt_value FROM pragma_table_info('books') WHERE name = 'zeroed'")" "1,0" "books gained zeroed NOT NULL DEFAULT 0"
	t_is "$(db "SELECT \"notnull\" || ',' || dflt_value FROM pragma_table_info('igs') WHERE name = 'zero'")" "1,0" "igs gained zero NOT NULL DEFAULT 0"
	t_is "$(db "SELECT count(*) FROM books WHERE zeroed <> 0") $(db "SELECT sum(zero) FROM igs")" "0 0" "no migrated book is known zero"
	g=$(lc shelf.get '{"name":"old"}')
	t_is "$(jq -c '[.uuid, .owner, .books, .gen, .policy, .map, [.activations[] | [.node, .mode]]]' <<<"$g")" \
		'["0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9","n3",3,2,"RequestIG",[[3,0],[3,1],[3,2]],[["n3","rw"]]]' \
		"the shelf, its books and its activation are kept"
	t_is "$(jq -r '.attrs["user.app"]' <<<"$g")" "pg" "its attributes are kept"
	t_is "$(lc stats | jq -c .books)" '{"total":140,"free":136,"inuse":3,"zombie":1,"offline":0,"bad":0}' "book counts are kept"
	t_like "$(lmsg lc shelf.create '{"name":"new1","books":1,"policy":"RequestIG","igs":[3]}')" "ENOSPC: .*only 0 free books known to be zero .* 17 more wait to be zeroed \(1 freed, 16 never used" "a migrated FREE book is not known zero: ENOSPC"
	t_is "$(zero_node n3)" "1" "n3 zeroes the migrated ZOMBIE book"
	c=$(lc shelf.create '{"name":"new2","books":1,"policy":"RequestIG","igs":[3]}')
	t_is "$(books_of <<<"$c") $(jq -r .zeroed <<<"$c")" "3:3 true" "a shelf gets it, zeroed true"
	t_run "the migrated catalogue is consistent" lt_check_db
	lt_stop
	lt_start
	t_is "$(grep -c "catalogue upgraded" "$T/server.log")" "1" "a second start does not migrate again"
	t_is "$(lc shelf.get '{"name":"new2"}' | jq -c .map)" "[[3,3]]" "and serves the migrated catalogue"
	lt_stop
fi

# a catalogue newer than this librarian is refused and left alone
newer=$(lt_db_copy newer)
if [ "$LT_STORE" = pg ]; then
	lt_sqlw_copy newer "UPDATE meta SET value = '5' WHERE key = 'schema_version'"
	vsql="SELECT value FROM meta WHERE key = 'schema_version'"
	why="schema version 5 is not supported \(this librarian knows version 4\)"
else
	lt_sqlw_copy newer "PRAGMA user_version = 5"
	vsql='PRAGMA user_version'
	why="newer.db: catalogue schema version 5 is newer than this librarian's \(4\)"
fi
sum=$(lt_db_sum newer)
out=$(timeout 20 "$LIB" -c "$T/lib.conf" --db "$newer" 2>&1)
t_is "$?" "1" "a version-5 catalogue is refused"
t_like "$out" "$why" "the refusal says the catalogue is newer"
t_is "$(lt_db_sum newer) $(lt_sql_copy newer "$vsql")" "$sum 5" "and leaves it unchanged"
out=$("$LIB" check --db "$newer")
t_is "$?" "1" "check refuses it too"
t_like "$out" "schema version 5 is not supported" "naming the version"
lt_done
