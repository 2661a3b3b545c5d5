#!/bin/bash
# free.scrub: a node's FREE books that are not known zero (zeroed = 0) become
# ZOMBIE, lowest book id first, up to "limit", so the node zeroes them through
# zombie.list/zombie.zeroed and they come back FREE and known zero. Known-zero
# FREE books, INUSE books, other nodes' books and an offline node's books are
# never touched; igs.free and stats follow; bad requests change nothing.
. tests/lib/tap.sh
LT_NEW_BOOKS=unknown
. tests/librarian/lib.sh

# db SQL: one value from the catalogue (read-only; fine while the daemon serves)
db() { lt_sql "$1"; }
# books of IG $1 in state $2 (and zeroed $3 if given), as "book book ..."
in_state() { db "SELECT coalesce(group_concat(id & 4294967295, ' '), '') FROM (SELECT id FROM books WHERE id >> 32 = $1 AND state = $2 ${3:+AND zeroed = $3} ORDER BY id) AS b"; }
# every ZOMBIE book as "ig:book ..."
zombies() { db "SELECT coalesce(group_concat((id >> 32) || ':' || (id & 4294967295), ' '), '') FROM (SELECT id FROM books WHERE state = 2 ORDER BY id) AS b"; }
# a fingerprint of every book's state, flag and shelf and of every IG's free count
fp() { db "SELECT group_concat(id || ':' || state || ':' || zeroed || ':' || coalesce(CAST(shelf AS TEXT), '-') || ':' || coalesce(CAST(seq AS TEXT), '-'), ' ') FROM (SELECT * FROM books ORDER BY id) AS b" | md5sum; db "SELECT group_concat(ig || '=' || free, ' ') FROM (SELECT * FROM igs ORDER BY ig) AS g"; }
# free and zombie counts from stats
counts() { lc stats | jq -c '[.books.free, .books.zombie]'; }
igfree() { db "SELECT free FROM igs WHERE ig = $1"; }
# the error line of a request expected to fail
lmsg() { "$@" 2>&1 >/dev/null; }
books_of() { jq -r '[.map[] | "\(.[0]):\(.[1])"] | join(" ")'; }
zero_node() { ltls "$1" zombie.zeroed "{\"books\":$(ltls "$1" zombie.list | jq -c .books)}" | jq -r .freed; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"

# n1 (IGs 0 and 1): known-zero FREE books at 0:0-3 and 0:6-7, INUSE 0:4-5 and
# 1:0, never-scrubbed FREE books 0:8-19 and 1:1-19 (31 in all). Only known-zero
# books are allocated: n1 scrubs 0:0-7 and checks 1:0 first.
t_is "$(ltls n1 free.scrub '{"limit":8}')" '{"books":8,"more":true}' "setup: n1 sends 0:0-7 to be zeroed"
t_is "$(zero_node n1)" "8" "setup: and zeroes them"
tok=$(ltls n1 free.unknown '{"after":[0,19],"limit":1}' | jq -r .token)
t_is "$(ltls n1 free.checked "{\"token\":\"$tok\",\"books\":[[1,0]]}" | jq -r .marked)" "1" "setup: 1:0 reads as zeroes"
lc shelf.create '{"name":"z","books":4,"policy":"RequestIG","igs":[0]}' >/dev/null
y=$(lc shelf.create '{"name":"y","books":2,"policy":"RequestIG","igs":[0]}')
t_is "$(books_of <<<"$y")" "0:4 0:5" "setup: y holds 0:4 and 0:5"
lc shelf.create '{"name":"x","books":2,"policy":"RequestIG","igs":[0]}' >/dev/null
q=$(lc shelf.create '{"name":"q","books":1,"policy":"RequestIG","igs":[1]}')
t_is "$(books_of <<<"$q")" "1:0" "setup: q holds 1:0"
lc shelf.destroy '{"name":"z"}' >/dev/null
lc shelf.destroy '{"name":"x"}' >/dev/null
t_is "$(zero_node n1)" "6" "setup: n1 zeroes the 6 books of z and x"
t_is "$(in_state 0 0 1)" "0 1 2 3 6 7" "setup: IG 0 has known-zero FREE books 0-3 and 6-7"
t_is "$(counts)" "[137,0]" "setup: 137 free books, no zombie"
t_is "$(igfree 0) $(igfree 1)" "18 19" "setup: IG 0 has 18 free books, IG 1 19"
t_run "setup: the catalogue is consistent" lt_check_db

# (1) limit 5: the five lowest never-scrubbed FREE books of n1
r=$(ltls n1 free.scrub '{"limit":5}')
t_is "$r" '{"books":5,"more":true}' "n1 free.scrub limit 5: 5 books, more"
t_is "$(zombies)" "0:8 0:9 0:10 0:11 0:12" "they are 0:8-12, in book-id order, skipping known-zero and INUSE books"
t_is "$(db "SELECT count(*) FROM books WHERE state = 2 AND zeroed <> 0")" "0" "they stay zeroed = 0"
t_is "$(counts)" "[132,5]" "stats: free 137 -> 132, zombie 0 -> 5"
t_is "$(igfree 0) $(igfree 1)" "13 19" "igs.free of IG 0: 18 -> 13"
t_is "$(ltls n1 zombie.list | jq -c .books)" "[[0,8],[0,9],[0,10],[0,11],[0,12]]" "zombie.list hands them to n1"
t_is "$(ltls n1 heartbeat | jq -r .zombies)" "5" "heartbeat counts them"
t_run "the catalogue is consistent" lt_check_db

# (2) limit 10: the rest of IG 0, then IG 1 (1:0 is INUSE)
t_is "$(ltls n1 free.scrub '{"limit":10}')" '{"books":10,"more":true}' "limit 10: 10 books, more"
t_is "$(in_state 0 2) / $(in_state 1 2)" "8 9 10 11 12 13 14 15 16 17 18 19 / 1 2 3" "0:13-19 and 1:1-3 follow"
t_is "$(igfree 0) $(igfree 1)" "6 16" "igs.free: IG 0 13 -> 6, IG 1 19 -> 16"

# (3) exactly the 16 that remain: more is false
t_is "$(ltls n1 free.scrub '{"limit":16}')" '{"books":16,"more":false}' "limit 16 = what remains: 16 books, no more"
t_is "$(ltls n1 free.scrub)" '{"books":0,"more":false}' "nothing left: 0 books, no more"
t_is "$(counts)" "[106,31]" "stats: free 106, zombie 31"
t_is "$(igfree 0) $(igfree 1)" "6 0" "igs.free: IG 0 6 (known zero), IG 1 0"
t_is "$(in_state 0 0 1)" "0 1 2 3 6 7" "known-zero FREE books are untouched"
t_is "$(db "SELECT count(*) FROM books WHERE state = 0 AND zeroed = 0 AND id >> 32 IN (0, 1)")" "0" "no never-scrubbed FREE book of n1 remains"
t_is "$(lc shelf.get '{"name":"y"}' | jq -c .map) $(lc shelf.get '{"name":"q"}' | jq -c .map)" "[[0,4],[0,5]] [[1,0]]" "INUSE books stay on their shelves"
t_is "$(in_state 0 1) / $(in_state 1 1)" "4 5 / 0" "and INUSE"
t_is "$(db "SELECT count(*) FROM books WHERE id >> 32 >= 2 AND (state <> 0 OR zeroed <> 0)")" "0" "other nodes' books are untouched (all FREE, not known zero)"
t_run "the catalogue is consistent after the scrubs" lt_check_db
# ZOMBIE books are not allocatable
t_is "$(lerr lc shelf.create '{"name":"no","books":7,"policy":"RequestIG","igs":[0,1]}')" "ENOSPC" "books being scrubbed are not allocatable (7 > 6 free on IGs 0-1)"

# (4) the node zeroes them: FREE and known zero; a shelf on them is zeroed
t_is "$(zero_node n1)" "31" "n1 zeroes the 31 books"
t_is "$(counts)" "[137,0]" "stats: free 137, zombie 0 again"
t_is "$(igfree 0) $(igfree 1)" "18 19" "igs.free back to 18 and 19"
t_is "$(db "SELECT count(*) FROM books WHERE state = 0 AND zeroed = 1 AND id >> 32 IN (0, 1)")" "37" "all 37 FREE books of n1 are known zero"
t_is "$(ltls n1 free.scrub)" '{"books":0,"more":false}' "known-zero FREE books are never sent to scrub"
c=$(ltls n1 shelf.create '{"name":"all","books":37,"policy":"LocalNode"}')
t_is "$(jq -c '[.books, .zeroed]' <<<"$c")" "[37,true]" "a shelf on all of n1's free books reports zeroed true"
t_is "$(lerr ltls n2 shelf.create '{"name":"n2fresh","books":1,"policy":"LocalNode"}')" "ENOSPC" "control: n2's never-scrubbed books are not allocated"
tok=$(ltls n2 free.unknown '{"limit":1}' | jq -r .token)
t_is "$(ltls n2 free.checked "{\"token\":\"$tok\",\"books\":[[2,0]]}" | jq -r .marked)" "1" "(2:0 reads as zeroes)"
t_run "the catalogue is consistent" lt_check_db

# (5) authorisation
f=$(fp)
t_like "$(lmsg ltls n2 free.scrub '{"node":"n3"}')" "EPERM: node 'n2' may not act for node 'n3' \(admin only\)" "a node cannot scrub for another node (EPERM, named)"
t_like "$(lmsg lcn n2 free.scrub '{"node":"n3"}')" "EPERM: node 'n2' may not act for node 'n3'" "not on the unix socket acting as a node either"
t_like "$(lmsg lc free.scrub)" "EINVAL: op 'free.scrub' from the admin identity needs \"node\"" "the admin must name a node"
t_like "$(lmsg lc free.scrub '{"limit":3}')" "EINVAL: op 'free.scrub' from the admin identity needs \"node\"" "also with a limit"
t_is "$(fp)" "$f" "refused requests changed nothing"
t_is "$(ltls n2 free.scrub '{"node":"n2","limit":2}')" '{"books":2,"more":true}' "a node may name itself"
t_is "$(zombies)" "2:1 2:2" "n2's lowest never-scrubbed FREE books (2:0 is known zero)"
t_is "$(lc free.scrub '{"node":"n3","limit":3}')" '{"books":3,"more":true}' "the admin (unix socket) scrubs for a named node"
t_is "$(ltls admin free.scrub '{"node":"n4","limit":1}')" '{"books":1,"more":true}' "the admin over TLS too"
t_is "$(zombies)" "2:1 2:2 3:0 3:1 3:2 4:0" "each from the named node's IGs only"
t_is "$(counts)" "[94,6]" "stats: free 100 -> 94 (37 are on shelf all), zombie 6"
t_is "$(igfree 2) $(igfree 3) $(igfree 4)" "18 17 19" "igs.free of IGs 2, 3, 4"
t_is "$(zero_node n2) $(zero_node n3) $(zero_node n4)" "2 3 1" "the nodes zero them"

# an offline node: its books are OFFLINE, not FREE
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
f=$(fp)
t_like "$(lmsg ltls n6 free.scrub)" "EPERM: node 'n6' is offline" "an offline node may not scrub"
t_is "$(lc free.scrub '{"node":"n6"}')" '{"books":0,"more":false}' "the admin's scrub of an offline node moves nothing"
t_is "$(fp)" "$f" "and changes nothing"
d=$((SECONDS + 10))
until lc node.set_state '{"node":"n6","state":"online"}' >/dev/null 2>&1 || [ $SECONDS -ge $d ]; do sleep 0.2; done
t_is "$(ltls n6 free.scrub '{"limit":20}')" '{"books":20,"more":false}' "online again: all 20 of n6's books"
t_is "$(lerr lc shelf.create '{"name":"n6s","books":1,"policy":"RequestIG","igs":[6]}')" "ENOSPC" "none of them is allocatable while being scrubbed"
t_is "$(zero_node n6)" "20" "n6 zeroes them"
t_is "$(lc shelf.create '{"name":"n6s","books":20,"policy":"RequestIG","igs":[6]}' | jq -r .zeroed)" "true" "then a shelf on them reports zeroed true"
t_run "the catalogue is consistent" lt_check_db

# (6) bad arguments: a clear error naming the value, nothing changed
f=$(fp)
c0=$(counts)
t_like "$(lmsg ltls n5 free.scrub '{"limit":0}')" "EINVAL: argument 'limit' = 0 is out of range \[1, 65536\]" "limit 0 is refused, naming it"
t_like "$(lmsg ltls n5 free.scrub '{"limit":65537}')" "ERANGE: argument 'limit' = 65537 is out of range \[1, 65536\]" "limit 65537 is refused (ERANGE)"
t_like "$(lmsg ltls n5 free.scrub '{"limit":-1}')" "EINVAL: argument 'limit' = -1 is out of range" "a negative limit is refused"
t_like "$(lmsg ltls n5 free.scrub '{"limit":"5"}')" "EINVAL: argument 'limit' must be an integer" "limit as a string is refused"
t_like "$(lmsg ltls n5 free.scrub '{"limit":2.5}')" "EINVAL: argument 'limit' must be an integer" "a fractional limit is refused"
t_like "$(lmsg ltls n5 free.scrub '{"books":3}')" "EINVAL: unknown argument 'books' for op 'free.scrub'" "an unknown argument is refused, naming it"
t_like "$(lmsg lc free.scrub '{"node":"n9"}')" "ENOENT: no node named 'n9' in the fabric" "an unknown node is refused, naming it"
t_like "$(lmsg lc free.scrub '{"node":5}')" "EINVAL: argument 'node' must be a string" "a node that is not a string is refused"
t_like "$(lmsg lc free.scrub '{"node":"n5","limit":0}')" "EINVAL: argument 'limit' = 0" "the admin's bad limit too"
t_is "$(fp)" "$f" "the bad requests changed no book and no free count"
t_is "$(counts)" "$c0" "stats unchanged ($c0)"
t_is "$(in_state 5 0 0 | wc -w)" "20" "n5's 20 never-scrubbed books are still FREE"

# the client loop: batches until more is false
n=0 loops=0
while :; do
	r=$(ltls n5 free.scrub '{"limit":7}') || break
	n=$((n + $(jq -r .books <<<"$r")))
	loops=$((loops + 1))
	[ "$(jq -r .more <<<"$r")" = true ] && [ $loops -lt 10 ] || break
done
t_is "$n $loops" "20 3" "a client looping with limit 7 moves n5's 20 books in 3 requests"
t_is "$(zero_node n5)" "20" "and n5 zeroes them"
t_is "$(counts)" "[$(jq '.[0]' <<<"$c0"),0]" "all free again, no zombie"
t_is "$(in_state 5 0 1 | wc -w)" "20" "all of n5's FREE books are now known zero"
t_run "librarian check passes at the end" lt_check_db
lt_stop
t_run "librarian check passes after a clean stop" lt_check_db
lt_done
