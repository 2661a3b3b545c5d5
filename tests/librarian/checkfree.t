#!/bin/bash
# free.unknown / free.checked / free.zeroed: a node's agent lists its FREE
# books that are not known zero, reads them (read only) or zeroes them, and
# reports those that read as zeroes (free.checked) or that it zeroed
# (free.zeroed) with the listing's token. The librarian marks them known zero
# (allocatable) only if nothing that could have changed them happened since
# the listing: a book of the same IG allocated, the node going offline or
# online, a restart. Other IGs' reports still count. A token is bound to the
# node it was given to. Nothing else changes; bad requests change nothing.
. tests/lib/tap.sh
LT_NEW_BOOKS=unknown
. tests/librarian/lib.sh

db() { lt_sql "$1"; }
# books of IG $1 in state $2 (and zeroed $3 if given), as "book book ..."
in_state() { db "SELECT coalesce(group_concat(id & 4294967295, ' '), '') FROM (SELECT id FROM books WHERE id >> 32 = $1 AND state = $2 ${3:+AND zeroed = $3} ORDER BY id) AS b"; }
fp() { db "SELECT group_concat(id || ':' || state || ':' || zeroed || ':' || coalesce(CAST(shelf AS TEXT), '-') || ':' || coalesce(CAST(seq AS TEXT), '-'), ' ') FROM (SELECT * FROM books ORDER BY id) AS b" | md5sum; db "SELECT group_concat(ig || '=' || free, ' ') FROM (SELECT * FROM igs ORDER BY ig) AS g"; }
counts() { lc stats | jq -c '[.books.free, .books.zombie]'; }
lmsg() { "$@" 2>&1 >/dev/null; }
pairs() { jq -r '[.books[] | "\(.[0]):\(.[1])"] | join(" ")'; }
zero_node() { ltls "$1" zombie.zeroed "{\"books\":$(ltls "$1" zombie.list | jq -c .books)}" | jq -r .freed; }
# checked NODE TOKEN BOOKS-JSON: the reply of free.checked
checked() { ltls "$1" free.checked "{\"token\":\"$2\",\"books\":$3}"; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"

# n1 (IGs 0 and 1, 20 books each): 0:0-1 INUSE (y), 0:2-3 known zero (z's,
# scrubbed), the other 36 FREE and never checked
ltls n1 free.scrub '{"limit":4}' >/dev/null
t_is "$(zero_node n1)" 4 "setup: n1 scrubs 0:0-3 (only known-zero books are allocated)"
lc shelf.create '{"name":"y","books":2,"policy":"RequestIG","igs":[0]}' >/dev/null
lc shelf.create '{"name":"z","books":2,"policy":"RequestIG","igs":[0]}' >/dev/null
lc shelf.destroy '{"name":"z"}' >/dev/null
t_is "$(zero_node n1)" 2 "setup: n1 zeroes z's 2 books"
t_is "$(in_state 0 1) / $(in_state 0 0 1)" "0 1 / 2 3" "setup: 0:0-1 INUSE, 0:2-3 FREE and known zero"
c0=$(counts)

# (1) listing: only FREE books not known zero, in book-id order, from "after"
r=$(ltls n1 free.unknown '{"limit":5}')
t_is "$(pairs <<<"$r") $(jq -r .more <<<"$r")" "0:4 0:5 0:6 0:7 0:8 true" "limit 5: 0:4-8 (skipping INUSE and known-zero books), more"
t_like "$(jq -r .token <<<"$r")" '^[0-9a-f]{16}-[0-9]+-[0-9a-f]{16}$' "with a token"
tok=$(jq -r .token <<<"$r")
r=$(ltls n1 free.unknown '{"after":[0,8],"limit":100}')
t_is "$(pairs <<<"$r" | wc -w) $(pairs <<<"$r" | cut -d' ' -f1,11,12,31) $(jq -r .more <<<"$r")" \
	"31 0:9 0:19 1:0 1:19 false" "after [0,8]: the 11 left of IG 0, then IG 1's 20, no more"
t_is "$(ltls n1 free.unknown '{"after":[1,19]}' | jq -c '[.books, .more]')" "[[],false]" "after the last one: none"
t_is "$(ltls n1 free.unknown '{"after":[7,0]}' | jq -c .books)" "[]" "after a book past all of n1's IGs: none"
t_is "$(lc free.unknown '{"node":"n2","limit":2}' | pairs)" "2:0 2:1" "the admin lists for a named node"
t_is "$(counts)" "$c0" "listing changes nothing"

# (2) reports: marked known zero, still FREE, free counts unchanged
f0=$(db "SELECT group_concat(ig || '=' || free, ' ') FROM (SELECT * FROM igs ORDER BY ig) AS g")
t_is "$(checked n1 "$tok" '[[0,4],[0,5],[0,6]]')" '{"marked":3,"skipped":0}' "n1 reports 0:4-6 with the token: 3 marked"
t_is "$(in_state 0 0 1)" "2 3 4 5 6" "0:4-6 are known zero now"
t_is "$(db "SELECT group_concat(ig || '=' || free, ' ') FROM (SELECT * FROM igs ORDER BY ig) AS g") $(counts)" "$f0 $c0" "free counts and stats unchanged"
t_is "$(checked n1 "$tok" '[[0,4],[0,5]]')" '{"marked":0,"skipped":2}' "reported again: skipped (already known zero)"
t_is "$(checked n1 "$tok" '[[0,0]]')" '{"marked":0,"skipped":1}' "an INUSE book is skipped"
t_is "$(db "SELECT state FROM books WHERE id = 0")" "1" "and stays INUSE"
t_is "$(checked n1 "$tok" '[]')" '{"marked":0,"skipped":0}' "an empty report is fine"
t_is "$(ltls n1 free.unknown '{"limit":3}' | pairs)" "0:7 0:8 0:9" "marked books are no longer listed"
t_run "the catalogue is consistent" lt_check_db

# (3) an allocation from IG 0 after the listing voids the token for IG 0 only
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
t_is "$(lc shelf.create '{"name":"w","books":1,"policy":"RequestIG","igs":[0]}' | jq -c .map)" "[[0,2]]" "a shelf takes 0:2 from IG 0 after the listing"
t_is "$(checked n1 "$tok" '[[0,7],[1,0]]')" '{"marked":1,"skipped":1}' "report of 0:7 and 1:0: 1:0 marked, 0:7 skipped"
t_is "$(in_state 0 0 1) / $(in_state 1 0 1)" "3 4 5 6 / 0" "0:7 stays not known zero, 1:0 is known zero"
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
t_is "$(checked n1 "$tok" '[[0,7]]')" '{"marked":1,"skipped":0}' "a new listing's token counts again"
# destroying a shelf does not void a token (its books become ZOMBIE, not FREE)
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
lc shelf.destroy '{"name":"w"}' >/dev/null
t_is "$(checked n1 "$tok" '[[0,8]]')" '{"marked":1,"skipped":0}' "a destroy meanwhile does not void the token"
t_is "$(checked n1 "$tok" '[[0,2]]')" '{"marked":0,"skipped":1}' "but the destroyed shelf's ZOMBIE book is skipped"
t_is "$(db "SELECT state || ':' || zeroed FROM books WHERE id = 2")" "2:0" "and stays ZOMBIE, not known zero"
zero_node n1 >/dev/null

# (4) the node going offline and online voids its tokens (and what was known)
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
lc node.set_state '{"node":"n1","state":"offline"}' >/dev/null
t_like "$(lmsg checked n1 "$tok" '[[0,9]]')" "EPERM: node 'n1' is offline" "an offline node may not report"
t_is "$(lc free.unknown '{"node":"n1"}' | jq -c .books)" "[]" "an offline node has no FREE book to list"
online() { local d=$((SECONDS + 10)); until lc node.set_state "{\"node\":\"$1\",\"state\":\"online\"}" >/dev/null 2>&1 || [ $SECONDS -ge $d ]; do sleep 0.2; done; }
online n1
t_is "$(checked n1 "$tok" '[[0,9],[1,1]]')" '{"marked":0,"skipped":2}' "online again: the old token marks nothing"
t_is "$(in_state 0 0 1)$(in_state 1 0 1)" "" "nothing of n1 is known zero after offline/online"
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
t_is "$(checked n1 "$tok" '[[1,1]]')" '{"marked":1,"skipped":0}' "a new token works"
# another node's state change does not void n1's token
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
online n6
t_is "$(checked n1 "$tok" '[[1,2]]')" '{"marked":1,"skipped":0}' "n6 going offline and online does not void n1's token"
t_run "the catalogue is consistent" lt_check_db

# (5) shelves on checked books are known zero (udev skips the probe)
tok=$(ltls n1 free.unknown '{"limit":100}' | jq -r .token)
all=$(ltls n1 free.unknown '{"limit":100}' | jq -c .books)
r=$(checked n1 "$tok" "$all")
t_is "$(jq -r '.marked + .skipped' <<<"$r") $(jq -r .skipped <<<"$r")" "$(jq length <<<"$all") 0" "n1 reports all its unknown books: all marked"
t_is "$(ltls n1 shelf.create '{"name":"fresh","books":6,"policy":"RequestIG","igs":[1]}' | jq -c .zeroed)" "true" "a shelf on checked books reports zeroed true"
t_is "$(lerr ltls n2 shelf.create '{"name":"n2s","books":1,"policy":"LocalNode"}')" "ENOSPC" "control: n2's unchecked books are not allocated"

# (5b) free.zeroed: books the node zeroed in the background, the same rules
r=$(ltls n2 free.unknown '{"limit":3}')
tok=$(jq -r .token <<<"$r")
t_is "$(pairs <<<"$r")" "2:0 2:1 2:2" "n2 lists its first three unknown books"
t_is "$(ltls n2 free.zeroed "{\"token\":\"$tok\",\"books\":[[2,0],[2,1]]}")" '{"marked":2,"skipped":0}' "n2 reports two of them zeroed: marked"
t_is "$(in_state 2 0 1)" "0 1" "2:0-1 are known zero"
t_is "$(db "SELECT zero FROM igs WHERE ig = 2")" "2" "igs.zero counts them"
t_is "$(ltls n2 shelf.create '{"name":"n2s","books":2,"policy":"LocalNode"}' | jq -c '[.map, .zeroed]')" "[[[2,0],[2,1]],true]" "a shelf gets them"
t_is "$(ltls n2 free.zeroed "{\"token\":\"$tok\",\"books\":[[2,2]]}")" '{"marked":0,"skipped":1}' "the allocation from IG 2 voids the token: 2:2 skipped"
lc shelf.destroy '{"name":"n2s"}' >/dev/null
zero_node n2 >/dev/null
t_run "the catalogue is consistent" lt_check_db
t_run "the catalogue is consistent" lt_check_db

# (6) authorisation and bad requests: named errors, nothing changed
tok=$(ltls n2 free.unknown '{"limit":1}' | jq -r .token)
f=$(fp)
t_like "$(lmsg checked n3 "$tok" '[[2,5]]')" "EPERM: book \[2, 5\] is in IG 2 of node 'n2', not of node 'n3'" "a node cannot report another node's book"
t_like "$(lmsg ltls n3 free.unknown '{"node":"n2"}')" "EPERM: node 'n3' may not act for node 'n2'" "nor list another node's"
t_like "$(lmsg lc free.unknown)" "EINVAL: op 'free.unknown' from the admin identity needs \"node\"" "the admin must name a node to list"
for bad in '' 'abc' '0123456789abcdef' '0123456789abcdef-' '0123456789abcdef-12x' '0123456789ABCDEF-1' \
	'0x23456789abcdef-1' '0123456789abcdef0-1' '0123456789abcdef--1' '0123456789abcdef-+1' \
	'0123456789abcdef-123456789012345678901' '0123456789abcdef-1-' '0123456789abcdef-1-0123456789abcde' \
	'0123456789abcdef-1-0123456789ABCDEF' '0123456789abcdef-1-0123456789abcdef0'; do
	t_like "$(lmsg checked n2 "$bad" '[[2,5]]')" "EINVAL: argument 'token' = '${bad//+/\\+}' is not a token from free.unknown" "token '$bad' is refused, named"
done
t_like "$(lmsg ltls n2 free.checked '{"books":[[2,5]]}')" "EINVAL: op 'free.checked' needs the argument 'token'" "a missing token is refused"
tok3=$(ltls n3 free.unknown '{"limit":1}' | jq -r .token)
t_like "$(lmsg checked n2 "$tok3" '[[2,5]]')" "EINVAL: argument 'token' was not given to node 'n2'" "a token n3 was given does not count for n2's books (bound to the node)"
forged=$(awk -F- '{ printf "%s-%d-%s", $1, $2 + 1000, $3 }' <<<"$tok")
t_like "$(lmsg checked n2 "$forged" '[[2,5]]')" "EINVAL: argument 'token' counts [0-9]+ changes, more than this librarian has made" "a token with a forged counter is refused"
mac=${tok##*-}
t_like "$(lmsg checked n2 "${tok%-*}-${mac:0:15}$(printf '%x' $(((0x${mac:15} + 1) % 16)))" '[[2,5]]')" "EINVAL: argument 'token' was not given to node 'n2'" "a token with a forged MAC is refused"
t_is "$(checked n2 "${tok%-*}" '[[2,5]]')" '{"marked":0,"skipped":1}' "the two-part form of earlier librarians is void: skipped"
t_like "$(lmsg ltls n2 free.checked '{"books":[[2,5]],"token":5}')" "EINVAL: argument 'token' must be a string" "a token that is not a string is refused"
t_like "$(lmsg checked n2 "$tok" '[[2,20]]')" "EINVAL: books\[0\] = \[2,20\] is not a book of the fabric" "a book beyond the IG is refused, named"
t_like "$(lmsg checked n2 "$tok" '[[2,5],[9,0]]')" "EINVAL: books\[1\] = \[9,0\] is not a book of the fabric" "an unknown IG is refused, named"
t_like "$(lmsg checked n2 "$tok" '[[2,5],[2]]')" "EINVAL: books\[1\] = \[2\] is not a book" "a short pair is refused"
t_like "$(lmsg checked n2 "$tok" '{"a":1}')" "EINVAL: argument 'books' must be a list" "books not a list is refused"
t_like "$(lmsg checked n2 "$tok" '[[2,5],[3,0]]')" "EPERM: book \[3, 0\] is in IG 3 of node 'n3'" "one foreign book refuses the whole report"
t_like "$(lmsg checked n2 "$tok" '[[4294967298,5]]')" "EINVAL: books\[0\] = \[4294967298,5\] is not a book of the fabric \(\[ig, book\]\): IG 4294967298 is out of range" "IG 2^32 + 2 is refused, not taken for IG 2"
t_is "$(db "SELECT zeroed FROM books WHERE id = (CAST(2 AS BIGINT) << 32) + 5")" 0 "so 2:5 was not marked by it"
for bad in '[0]' '"x"' '[-1,0]' '[0,4294967296]' '[65536,0]' '[4294967298,0]' '[0,0,0]'; do
	t_like "$(lmsg ltls n2 free.unknown "{\"after\":$bad}")" "EINVAL: argument 'after' = .* must be an \[ig, book\] pair" "after $bad is refused, named"
done
t_like "$(lmsg ltls n2 free.unknown '{"limit":0}')" "EINVAL: argument 'limit' = 0 is out of range" "limit 0 is refused"
t_like "$(lmsg ltls n2 free.unknown '{"books":1}')" "EINVAL: unknown argument 'books' for op 'free.unknown'" "an unknown argument is refused, named"
t_like "$(lmsg ltls n2 free.checked '{"books":[],"token":"'"$tok"'","x":1}')" "EINVAL: unknown argument 'x' for op 'free.checked'" "also for free.checked"
t_is "$(fp)" "$f" "the refused requests changed nothing"
t_is "$(checked n2 "$tok" '[[2,5]]')" '{"marked":1,"skipped":0}' "the same report, well formed, marks 2:5"
t_is "$(lc free.checked "{\"token\":\"$(ltls n3 free.unknown | jq -r .token)\",\"books\":[[3,0]]}")" '{"marked":1,"skipped":0}' "the admin may report for any node"

# (7) a restart voids every token
tok=$(ltls n4 free.unknown '{"limit":1}' | jq -r .token)
lt_stop
lt_start || t_ok 1 "librarian restarts"
t_is "$(checked n4 "$tok" '[[4,0]]')" '{"marked":0,"skipped":1}' "a token from before a restart marks nothing"
t_is "$(in_state 4 0 1)" "" "4:0 is not known zero"
tok2=$(ltls n4 free.unknown '{"limit":1}' | jq -r .token)
t_ok "$([ "${tok%%-*}" != "${tok2%%-*}" ]; echo $?)" "the new instance's tokens differ ($tok, $tok2)"
t_is "$(checked n4 "$tok2" '[[4,0]]')" '{"marked":1,"skipped":0}' "a new token works"

# (8) free.forget: IG 0's memory is new (a replaced device, volatile memory
# that lost its contents; lfsvol attach --init sends it before labelling):
# its FREE books known zero become unknown, so none is allocated until the
# agent has read or zeroed it; INUSE books are counted, not changed
kz=$(db "SELECT count(*) FROM books WHERE id >> 32 = 0 AND state = 0 AND zeroed = 1")
iu=$(db "SELECT count(*) FROM books WHERE id >> 32 = 0 AND state = 1")
t_ok "$([ "$kz" -ge 1 ] && [ "$iu" -ge 1 ]; echo $?)" "setup: IG 0 has $kz FREE books known zero and $iu INUSE"
before=$(fp)
t_is "$(lerr lc free.forget '{"ig":99}')" ENOENT "an IG not in the fabric: ENOENT"
t_is "$(lerr lc free.forget '{"ig":"0"}')" EINVAL "ig as a string: EINVAL"
t_is "$(lerr lc free.forget '{}')" EINVAL "no ig: EINVAL"
t_is "$(fp)" "$before" "  the refused requests changed nothing"
t_is "$(ltls n2 free.forget '{"ig":0}')" "{\"ig\":0,\"unknown\":$kz,\"inuse\":$iu}" \
	"n2 forgets n1's IG 0 (every node may label every IG's device): $kz books unknown, $iu of shelves counted"
t_is "$(in_state 0 0 1)" "" "  no FREE book of IG 0 is known zero"
t_is "$(db "SELECT zero FROM igs WHERE ig = 0")" 0 "  and the IG's count of them is 0"
t_is "$(lerr lc shelf.create '{"name":"after","books":1,"policy":"RequestIG","igs":[0]}')" ENOSPC \
	"a shelf on IG 0 now waits for its books to be read or zeroed (ENOSPC)"
t_is "$(ltls n1 free.forget '{"ig":0}' | jq -c .unknown)" 0 "forgetting again changes nothing more"
tok=$(ltls n1 free.unknown '{"limit":1}' | jq -r .token)
first=$(ltls n1 free.unknown '{"limit":1}' | jq -c '.books[0]')
t_is "$(checked n1 "$tok" "[$first]")" '{"marked":1,"skipped":0}' "the agent's check makes one known zero again"
t_ok "$(lc shelf.create '{"name":"after","books":1,"policy":"RequestIG","igs":[0]}' >/dev/null; echo $?)" \
	"  and a shelf on IG 0 gets it"
t_run "librarian check passes at the end" lt_check_db
lt_stop
lt_done
