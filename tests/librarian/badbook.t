#!/bin/bash
# Bad books (poisoned memory, docs/LIBRARIAN.md "Bad books"): a node reports
# bad ranges of its own books (book.bad), the librarian lists them
# (book.bad_list), never allocates a bad book (a free one is BAD at once, a
# shelf's stays on its shelf and goes BAD, not ZOMBIE, when the shelf lets
# it go), keeps them across a restart, and only the admin returns one to
# service (book.clear), through zeroing. Bad requests change nothing.
. tests/lib/tap.sh
. tests/librarian/lib.sh

db() { lt_sql "$1"; }
state() { db "SELECT state FROM books WHERE id = ($1 << 32) + $2"; }
igrow() { db "SELECT free || '/' || zero FROM igs WHERE ig = $1"; }
fp() { db "SELECT group_concat(id || ':' || state || ':' || zeroed, ' ') FROM (SELECT * FROM books ORDER BY id) AS b"; db "SELECT count(*) FROM bad"; igrow 0; }
lmsg() { "$@" 2>&1 >/dev/null; }
bad_list() { lc book.bad_list "$@" | jq -c '[.bad[] | [.ig, .book, .offset, .length, .state, .shelf, .seq, .node]]'; }

# two nodes of four books each: IG 0 is n1's, IG 1 n2's
lt_keys admin n1 n2
fabric='racks = ( { name = "r1"; enclosures = ( { name = "e1"; nodes = (
	{ name = "n1"; power_domain = "A"; igs = ( { ig = 0; books = 4; } ); },
	{ name = "n2"; power_domain = "B"; igs = ( { ig = 1; books = 4; } ); } ); } ); } );'
lt_conf "$fabric"
lt_start || { t_ok 1 "librarian starts"; lt_done; }

lc shelf.create '{"name":"a","books":2,"policy":"RequestIG","igs":[0]}' >/dev/null
map=$(lc shelf.get '{"name":"a"}' | jq -c '[.map[] | .[1]]')
t_is "$map" "[0,1]" "setup: shelf a holds books 0:0 and 0:1"
t_is "$(igrow 0)" "2/2" "setup: IG 0 has 2 free books, known zero"

# refusals, each with nothing changed
before=$(fp)
out=$(lmsg ltls n2 book.bad '{"ranges":[[0,3,0,4096]]}')
t_like "$out" "EPERM.*book \[0, 3\] is in IG 0 of node 'n1', not of node 'n2'" "a node may not report another node's book"
out=$(lmsg ltls n1 book.bad '{"ranges":[[0,3,0,4096],[0,2,8589934592,1]]}')
t_like "$out" "EINVAL.*ranges\[1\] = \[0,2,8589934592,1\] is not a bad range.*inside the book \(8589934592 bytes\)" "a range past the book's end is refused, naming it"
out=$(lmsg ltls n1 book.bad '{"ranges":[[0,9,0,1]]}')
t_like "$out" "EINVAL.*ranges\[0\] = \[0,9,0,1\].*no such book" "a book beyond the IG is refused"
out=$(lmsg ltls n1 book.bad '{"ranges":[[0,2,0,0]]}')
t_like "$out" "EINVAL.*\[0,2,0,0\]" "an empty range is refused"
out=$(lmsg ltls n1 book.bad '{"ranges":[[0,2,-1,5]]}')
t_like "$out" "EINVAL.*\[0,2,-1,5\]" "a negative offset is refused"
out=$(lmsg ltls n1 book.bad '{"ranges":"0:2"}')
t_like "$out" "EINVAL.*argument 'ranges' must be a list" "ranges must be a list"
t_is "$(fp)" "$before" "the refused reports changed nothing (not even their good ranges)"

# a FREE book and a shelf's book go bad
out=$(ltls n1 book.bad '{"ranges":[[0,3,4096,4096],[0,1,2097152,4096]]}')
t_is "$out" '{"added":2,"books":1}' "n1 reports a free book and a shelf's book: 2 ranges, 1 book out of service"
t_is "$(state 0 3)/$(state 0 1)" "4/1" "the free book is BAD, the shelf's book stays INUSE"
t_is "$(igrow 0)" "1/1" "IG 0's free and known-zero counts lose the bad book"
out=$(ltls n1 book.bad '{"ranges":[[0,3,4096,4096],[0,1,2097152,4096]]}')
t_is "$out" '{"added":0,"books":0}' "the same report again is harmless"
t_is "$(igrow 0)" "1/1" "and counts nothing twice"
want='[[0,1,2097152,4096,"inuse","a",1,"n1"],[0,3,4096,4096,"bad",null,null,"n1"]]'
t_is "$(bad_list)" "$want" "book.bad_list: each range, its state, the shelf and place holding it"
t_is "$(bad_list '{"name":"a"}')" '[[0,1,2097152,4096,"inuse","a",1,"n1"]]' "book.bad_list of shelf a: its bad book"
t_is "$(ltls n2 book.bad_list | jq -c '[.bad[] | .shelf]')" '["a",null]' "another node that sees shelf a lists it too"

# allocation: the only free book of IG 0 left after b is the bad one
t_run "a shelf takes the last good book of IG 0" lc shelf.create '{"name":"b","books":1,"policy":"RequestIG","igs":[0]}'
t_is "$(lc shelf.get '{"name":"b"}' | jq -c '.map[0]')" "[0,2]" "it is 0:2, not the bad 0:3"
out=$(lmsg lc shelf.create '{"name":"c","books":1,"policy":"RequestIG","igs":[0]}')
t_like "$out" "ENOSPC" "a new shelf on IG 0 fails with ENOSPC: the bad book is not handed out"
t_fails "nor does a grow get it" lc shelf.resize '{"name":"b","books":2}'
t_run "librarian check knows the BAD state" lt_check_db

# a restart keeps them
lt_stop
lt_start || t_ok 1 "librarian restarts"
t_is "$(bad_list)" "$want" "after a restart the bad ranges are there"
t_like "$(lmsg lc shelf.create '{"name":"c","books":1,"policy":"RequestIG","igs":[0]}')" "ENOSPC" "and the bad book is still not allocated"

# the shelf lets its bad book go: BAD, not ZOMBIE
t_run "shelf a is destroyed" lc shelf.destroy '{"name":"a"}'
t_is "$(state 0 0)/$(state 0 1)" "2/4" "its good book is ZOMBIE, its bad book BAD"
t_is "$(ltls n1 zombie.list | jq -c .books)" "[[0,0]]" "the node is not asked to zero the bad book"
t_is "$(bad_list | jq -c '[.[] | .[4]]')" '["bad","bad"]' "both bad books are listed bad, on no shelf"
t_run "librarian check: consistent" lt_check_db

# book.clear: the admin only, books with bad ranges only, through zeroing
before=$(fp)
out=$(lmsg ltls n1 book.clear '{"books":[[0,3]]}')
t_like "$out" "EACCES|EPERM" "a node may not clear a book"
out=$(lmsg lc book.clear '{"books":[[0,3],[0,2]]}')
t_like "$out" "EINVAL.*books\[1\]: book \[0, 2\] has no bad range" "a book that is not bad is refused, naming it"
out=$(lmsg lc book.clear '{"books":[[0,3],[0,7]]}')
t_like "$out" "EINVAL.*\[0,7\]" "a book outside the fabric is refused"
t_is "$(fp)" "$before" "the refused clears changed nothing"
t_is "$(lc book.clear '{"books":[[0,3]]}')" '{"cleared":1,"zombie":1}' "the admin clears 0:3"
t_is "$(state 0 3)" "2" "it is ZOMBIE: zeroed before reuse, never straight to FREE"
t_is "$(ltls n1 zombie.zeroed '{"books":[[0,0],[0,3]]}')" '{"freed":2}' "n1 zeroes it"
t_run "then a shelf can have it" lc shelf.create '{"name":"c","books":2,"policy":"RequestIG","igs":[0]}'
t_is "$(bad_list)" '[[0,1,2097152,4096,"bad",null,null,"n1"]]' "0:1 is still bad"
t_run "librarian check: consistent after the clear" lt_check_db

# librarian check finds a BAD book without its range
if lt_sqlite_only 2 "a damaged copy of the catalogue"; then
	lt_stop
	copy=$(lt_db_copy damaged)
	lt_sqlw_copy damaged "DELETE FROM bad"
	out=$("$LIB" check --db "$copy" 2>&1)
	t_is "$?" "1" "check fails on a BAD book without a bad range"
	t_like "$out" "BAD book without a bad range" "naming the violation"
	lt_start || t_ok 1 "librarian restarts"
fi
lt_stop

# a catalogue of schema version 3 (before bad books) is upgraded in place
if [ "$LT_STORE" = pg ]; then
	lt_sqlw "DROP TABLE bad; DROP INDEX books_bad; UPDATE books SET state = 2 WHERE state = 4; UPDATE meta SET value = '3' WHERE key = 'schema_version'"
	version() { db "SELECT value FROM meta WHERE key = 'schema_version'"; }
else
	lt_sqlw "DROP TABLE bad; DROP INDEX books_bad; UPDATE books SET state = 2 WHERE state = 4; PRAGMA user_version = 3"
	version() { db "PRAGMA user_version"; }
fi
t_is "$(version)" "3" "setup: the catalogue is version 3 again"
t_run "librarian check accepts the version-3 catalogue" lt_check_db
t_is "$(version)" "3" "and check does not upgrade it"
: >"$T/server.log"
lt_start || t_ok 1 "the librarian starts on the version-3 catalogue"
t_like "$(cat "$T/server.log")" "catalogue upgraded from schema version 3 to 4" "the upgrade is logged"
t_is "$(version)" "4" "the catalogue is now version 4"
t_is "$(bad_list)" "[]" "with no book known bad"
t_run "a node reports a bad range into it" ltls n1 book.bad '{"ranges":[[0,1,0,4096]]}'
t_is "$(state 0 1)" "4" "its book is BAD"
t_run "the upgraded catalogue is consistent" lt_check_db

# an IG that shrinks takes its bad books' ranges with it
t_run "n2 reports a bad range of 1:3" ltls n2 book.bad '{"ranges":[[1,3,0,4096]]}'
lt_stop
lt_conf "$(sed 's/ig = 1; books = 4;/ig = 1; books = 2;/' <<<"$fabric")"
lt_start || t_ok 1 "the librarian starts with IG 1 of 2 books"
t_is "$(bad_list | jq -c '[.[] | .[0:2]]')" "[[0,1]]" "IG 1 shrunk to 2 books: the range of 1:3 left with it"
t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_done
