#!/bin/bash
# Every librarian operation against a real daemon: shelves, attributes,
# activations, heartbeats, zombies, node state; restart keeps everything.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
# the nodes share their shelves ("rw"): access lists are access.t's
SHARE='share = "rw";'
lt_conf "$LT_FABRIC" "$SHARE"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts on the explicit six-node fabric"
lmsg() { "$@" 2>&1 >/dev/null; }

# geometry and stats
g=$(lc geometry)
t_is "$(jq -r '[.racks[].enclosures[].nodes[].name] | join(",")' <<<"$g")" "n1,n2,n3,n4,n5,n6" "geometry lists the nodes in order"
t_is "$(jq -r '.racks[0].enclosures[0].nodes[0].igs | map(.ig) | join(",")' <<<"$g")" "0,1" "geometry: n1 has IGs 0 and 1"
t_is "$(jq -r '.racks[0].enclosures[1].nodes[1].power_domain' <<<"$g")" "A" "geometry: n4's power domain"
t_is "$(lc stats | jq -c .books)" '{"total":140,"free":140,"inuse":0,"zombie":0,"offline":0,"bad":0}' "stats of an empty catalogue"
t_is "$(ltls n3 ping)" '{}' "ping: an empty result over TLS"
t_is "$(lerr lcn n3 ping '{"x":1}')" "EINVAL" "ping takes no arguments"

# auth over TLS
a=$(ltls n2 auth)
t_is "$(jq -r '.node + " " + (.admin|tostring) + " " + (.book_size|tostring)' <<<"$a")" "n2 false 8589934592" "TLS auth reports node, admin flag and book size"
t_is "$(jq -r .default_policy <<<"$a")" RandomBooks "  and the default policy (RandomBooks unless configured)"
t_is "$(ltls admin auth | jq -r .admin)" "true" "the admin key authenticates as admin over TLS"

# create / get / list
c=$(ltls n1 shelf.create '{"name":"db","books":4,"policy":"LocalNode"}')
t_is "$(jq -r '.books' <<<"$c")" 4 "create: shelf of 4 books"
t_is "$(jq -r '.owner' <<<"$c")" "n1" "create: owner is the creating node"
t_like "$(jq -r .uuid <<<"$c")" '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "create: a v4 UUID"
t_is "$(jq -r '[.map[][0]] | unique | join(",")' <<<"$c")" "0" "create: LocalNode books come from n1's first IG"
t_is "$(lerr lcn n2 shelf.create '{"name":"db"}')" "EEXIST" "create: an existing name is refused with EEXIST"
uuid=$(jq -r .uuid <<<"$c")
t_is "$(lc shelf.get "{\"uuid\":\"$uuid\"}" | jq -r .name)" "db" "get by UUID"
t_is "$(lc shelf.get '{"name":"db","offset":1,"limit":2}' | jq -c '[.map_offset, (.map|length), .map_complete]')" "[1,2,false]" "get pages through the book map"
t_is "$(lc shelf.get '{"name":"db"}' | jq -r '.attrs["lfs.allocation"]')" '{"igs":{"0":4},"nodes":{"n1":4}}' "lfs.allocation shows books per IG and node"
lc shelf.create '{"name":"logs","books":1}' >/dev/null
lc shelf.create '{"name":"dbx","books":0}' >/dev/null
t_is "$(lc shelf.list | jq -r '[.shelves[].name] | join(",")')" "db,dbx,logs" "list is sorted by name"
t_is "$(lc shelf.list '{"prefix":"db"}' | jq -r '.total')" "2" "list with a prefix"
t_is "$(lc shelf.list '{"limit":1,"offset":1}' | jq -r '.shelves[0].name')" "dbx" "list with offset and limit"

# resize
r=$(lcn n1 shelf.resize '{"name":"db","books":6}')
t_is "$(jq -r '[.old_books, .books, (.added|length)] | join(" ")' <<<"$r")" "4 6 2" "grow adds books at the tail"
map_before=$(lc shelf.get '{"name":"db"}' | jq -c '.map[0:3]')
r=$(lcn n1 shelf.resize '{"name":"db","books":3}')
t_is "$(jq -r '[.books, (.removed|length)] | join(" ")' <<<"$r")" "3 3" "shrink removes books from the tail"
t_is "$(lc shelf.get '{"name":"db"}' | jq -c '.map')" "$map_before" "shrink keeps the first books in order"
t_is "$(lc stats | jq -r .books.zombie)" "3" "shrunk books become ZOMBIE"
r=$(lcn n1 shelf.resize "{\"name\":\"db\",\"uuid\":\"$uuid\",\"books\":4,\"limit\":10}")
t_is "$(jq -c '[.books, .map_offset, .map_complete, (.map | length), .map[0:3] == '"$map_before"']' <<<"$r")" \
	'[4,0,true,4,true]' "resize with \"limit\" answers the new map, as shelf.get shows it"

# "uuid": the named shelf must still be that one (the node agent's rm and mv)
other=$(lc shelf.get '{"name":"logs","limit":0}' | jq -r .uuid)
t_like "$(lmsg lc shelf.destroy "{\"name\":\"db\",\"uuid\":\"$other\"}")" \
	"ESTALE: shelf 'db' is no longer the one with UUID '$other'" "destroy of db with logs's UUID: ESTALE"
t_like "$(lmsg lc shelf.rename "{\"name\":\"db\",\"uuid\":\"$other\",\"new_name\":\"db2\"}")" \
	"ESTALE" "rename of db with logs's UUID: ESTALE"
t_like "$(lmsg lcn n1 shelf.resize "{\"name\":\"db\",\"uuid\":\"00000000-0000-4000-8000-000000000000\",\"books\":9}")" \
	"ESTALE" "resize of db with an unknown UUID: ESTALE"
t_like "$(lmsg lcn n1 shelf.activate "{\"name\":\"db\",\"uuid\":\"$other\",\"mode\":\"shared\"}")" \
	"ESTALE: shelf 'db' is no longer the one with UUID '$other'" "activate of db with logs's UUID: ESTALE"
t_like "$(lmsg lc attr.set "{\"name\":\"db\",\"uuid\":\"$other\",\"key\":\"lfs.size\",\"value\":\"1\"}")" \
	"ESTALE: shelf 'db' is no longer the one with UUID '$other'" "attr.set of db with logs's UUID: ESTALE"
t_is "$(lc shelf.get '{"name":"db","limit":0}' | jq -c '[.name, .uuid == "'"$uuid"'", .books, .bytes, .activations]')" \
	'["db",true,4,34359738368,[]]' "  and db is unchanged: same name, same UUID, 4 books, its size, not active"
t_is "$(lcn n1 shelf.activate "{\"name\":\"db\",\"uuid\":\"$uuid\",\"mode\":\"ro\"}" 2>&1 | jq -c '[.uuid == "'"$uuid"'", [.activations[].mode]]')" \
	'[true,["ro"]]' "activate of db with its own UUID works"
t_like "$(lmsg lcn n1 shelf.deactivate "{\"name\":\"db\",\"uuid\":\"$other\"}")" \
	"ESTALE: shelf 'db' is no longer the one with UUID '$other'" "deactivate of db with logs's UUID: ESTALE"
t_is "$(lc shelf.get '{"name":"db","limit":0}' | jq -c '[.activations[] | [.node, .mode]]')" \
	'[["n1","ro"]]' "  and db is still active on n1"
t_is "$(lcn n1 shelf.deactivate "{\"name\":\"db\",\"uuid\":\"$uuid\"}" | jq -c .)" \
	'{"name":"db","node":"n1"}' "deactivate of db with its own UUID works"

# rename
t_is "$(lc shelf.rename '{"name":"dbx","new_name":"empty"}' | jq -r .name)" "empty" "rename"
t_is "$(lerr lc shelf.rename '{"name":"empty","new_name":"logs"}')" "EEXIST" "rename onto an existing name is refused"
t_is "$(lerr lc shelf.get '{"name":"dbx"}')" "ENOENT" "the old name is gone"

# attributes
lc attr.set '{"name":"db","key":"user.owner","value":"alice"}' >/dev/null
t_is "$(lc attr.get '{"name":"db","key":"user.owner"}' | jq -r .value)" "alice" "attr set and get"
t_is "$(lc attr.list '{"name":"db"}' | jq -r '.attrs | keys | join(",")')" "lfs.allocation,lfs.policy,user.owner" "attr list includes system attributes"
t_is "$(lc attr.remove '{"name":"db","key":"user.owner"}' | jq -r .key)" "user.owner" "attr remove"
t_is "$(lerr lc attr.get '{"name":"db","key":"user.owner"}')" "ENODATA" "a removed attribute is gone (ENODATA)"
t_is "$(lerr lc attr.set '{"name":"db","key":"lfs.allocation","value":"x"}')" "EPERM" "lfs.allocation is read-only"
t_is "$(lerr lc attr.set "{\"name\":\"db\",\"key\":\"$(printf 'k%.0s' $(seq 129))\",\"value\":\"x\"}")" "ENAMETOOLONG" "an attribute key of 129 characters is refused (ENAMETOOLONG, as documented)"
t_is "$(lerr lc attr.set '{"name":"db","key":"lfs.policy","value":"Sideways"}')" "EINVAL" "an unknown policy is refused"
t_is "$(lerr lc attr.set '{"name":"db","key":"lfs.igs","value":[0,99]}')" "EINVAL" "lfs.igs naming an unknown IG is refused"
t_is "$(lc attr.set '{"name":"db","key":"lfs.igs","value":[5,2]}' >/dev/null; lc attr.get '{"name":"db","key":"lfs.igs"}' | jq -r .value)" "5,2" "lfs.igs is stored as a list"
t_like "$(lmsg lc attr.set '{"name":"db","key":"lfs.igs","value":[4294967296]}')" "EINVAL: lfs.igs: 4294967296 is not an IG of the fabric: IG 4294967296 is out of range" "IG 2^32 in lfs.igs is refused, not taken for IG 0"
t_is "$(lerr lc attr.set '{"name":"db","key":"lfs.igs","value":"4294967298"}')" "EINVAL" "also in the text form"
t_is "$(lc attr.get '{"name":"db","key":"lfs.igs"}' | jq -r .value)" "5,2" "lfs.igs is unchanged"

# activations
t_is "$(ltls n1 shelf.activate '{"name":"db"}' | jq -c '.activations')" '[{"node":"n1","mode":"rw","since":'"$(lc shelf.get '{"name":"db"}' | jq '.activations[0].since')"'}]' "activate exclusively"
e=$("$LIB" client --connect "127.0.0.1:$PORT" --node n2 --key "$T/keys/n2.key" shelf.activate '{"name":"db","mode":"ro"}' 2>&1 >/dev/null)
t_like "$e" "EBUSY: shelf 'db' is active on node 'n1' \(rw\)" "a conflicting activation is refused naming the holder"
# n1 heartbeats as its agent would (every second): live whatever the load
# (lease_time + fence_grace is 4 s; a loaded host once took longer between
# the activation and the takeover, which then went through)
ltls n1 heartbeat >/dev/null
t_is "$(lerr ltls n2 shelf.activate '{"name":"db","takeover":true}')" "EBUSY" "takeover of a live holder is refused"
t_is "$(lerr ltls n2 shelf.deactivate '{"name":"db"}')" "EPERM" "only the holder deactivates"
t_is "$(lerr ltls n1 shelf.destroy '{"name":"db"}')" "EBUSY" "an active shelf cannot be destroyed, not even by its owner"
t_is "$(lerr ltls n2 shelf.resize '{"name":"db","books":5}')" "EBUSY" "another node cannot resize an active shelf"
t_is "$(ltls n1 shelf.resize '{"name":"db","books":4}' | jq -r .books)" "4" "the exclusive holder may resize"
t_is "$(ltls n1 heartbeat | jq -c '[.activations[].name]')" '["db"]' "heartbeat lists the node's activations"
t_is "$(lerr ltls n2 shelf.activate '{"name":"db","force":true}')" "EPERM" "forced takeover needs the admin identity"
ltls n1 heartbeat >/dev/null
t_like "$(lmsg lc shelf.activate '{"name":"db","node":"n2","force":true}')" "EBUSY: cannot take over shelf 'db': it is active on node 'n1' \(rw\), which is live .*s left" \
	"force does not override liveness: the admin's takeover of a live holder is refused, naming it and the time left"
deadline=$((SECONDS + 10))
until f=$(lc shelf.activate '{"name":"db","node":"n2","force":true}' 2>/dev/null) || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
t_is "$(jq -r '.activations[0].node' <<<"$f")" "n2" "once n1 is silent for lease_time + fence_grace the admin forces the takeover"
t_is "$(ltls n2 shelf.deactivate '{"name":"db"}' | jq -r .node)" "n2" "the holder deactivates"
# shared read-only
ltls n3 shelf.activate '{"name":"logs","mode":"ro"}' >/dev/null
t_is "$(ltls n4 shelf.activate '{"name":"logs","mode":"ro"}' | jq -r '.activations|length')" "2" "two shared read-only activations"
t_is "$(lerr ltls n5 shelf.activate '{"name":"logs"}')" "EBUSY" "exclusive activation conflicts with shared ones"
# takeover after missed heartbeats: n3 and n4 hold logs; n4 keeps beating, n3 goes silent
deadline=$((SECONDS + 10))
while [ $SECONDS -lt $deadline ]; do
	ltls n4 heartbeat >/dev/null
	alive=$(lc geometry | jq -r '.racks[0].enclosures[1].nodes[0].alive')
	[ "$alive" = false ] && break
	sleep 0.5
done
t_is "$alive" "false" "a node that misses its heartbeats is reported dead"
t_is "$(lerr ltls n5 shelf.activate '{"name":"logs","takeover":true}')" "EBUSY" "takeover still refused while one holder (n4) is alive"
ltls n4 shelf.deactivate '{"name":"logs"}' >/dev/null
t_is "$(ltls n5 shelf.activate '{"name":"logs","takeover":true}' | jq -c '[.activations[].node]')" '["n5"]' "takeover of a dead node's activation without admin"
ltls n5 shelf.deactivate '{"name":"logs"}' >/dev/null

# zombies: n1's IG 0 holds the books db released
zl=$(ltls n1 zombie.list)
t_is "$(jq -r '.books|length' <<<"$zl")" "3" "zombie.list gives the node its books to zero"
t_is "$(ltls n2 zombie.list | jq -r '.books|length')" "0" "another node has none of them"
t_is "$(lerr ltls n2 zombie.zeroed "{\"books\":$(jq -c .books <<<"$zl")}")" "EPERM" "a node cannot report another node's books zeroed"
t_is "$(lerr ltls n1 zombie.zeroed '{"books":[[0,0]]}')" "EINVAL" "reporting an INUSE book zeroed is refused"
wrapped=$(jq -c '[[.books[0][0] + 4294967296, .books[0][1]]]' <<<"$zl")
t_like "$(lmsg ltls n1 zombie.zeroed "{\"books\":$wrapped}")" "EINVAL: books\[0\] = \[4294967296,[0-9]+\] is not a book of the fabric \(\[ig, book\]\): IG 4294967296 is out of range" "IG 2^32 is refused, not taken for IG 0"
t_is "$(lc stats | jq -c '[.books.zombie, .books.free]')" "[3,132]" "so the zombie stays"
t_is "$(ltls n1 zombie.zeroed "{\"books\":$(jq -c .books <<<"$zl")}" | jq -r .freed)" "3" "zombie.zeroed frees the books"
t_is "$(lc stats | jq -c '[.books.zombie, .books.free]')" "[0,135]" "zeroed books are FREE again"

# node offline / online (admin only)
t_is "$(lerr ltls n1 node.set_state '{"node":"n6","state":"offline"}')" "EPERM" "node offlining needs the admin identity"
free6=$(lc geometry | jq '.racks[1].enclosures[0].nodes[1].igs[0].free')
lc node.set_state '{"node":"n6","state":"offline"}' >/dev/null
t_is "$(lc stats | jq -r .books.offline)" "$free6" "an offline node's free books are OFFLINE"
t_is "$(lerr lc shelf.create '{"name":"x","books":1,"policy":"RequestIG","igs":[6]}')" "ENOSPC" "offline books are never allocated"
t_is "$(lerr ltls n6 shelf.create '{"name":"y"}')" "EPERM" "an offline node may not change the catalogue"
lc node.set_state '{"node":"n6","state":"online"}' >/dev/null
t_is "$(lc stats | jq -r .books.offline)" "0" "back online: books FREE again"

# destroy
d=$(lc shelf.destroy '{"name":"empty"}')
t_is "$(jq -r .zombies <<<"$d")" "0" "destroy an empty shelf"
t_is "$(lc shelf.destroy '{"name":"logs"}' | jq -r .zombies)" "1" "destroy turns the shelf's books into zombies"
t_run "the catalogue is consistent" lt_check_db

# create and activate in one request (lfsvol create -a)
ca=$(ltls n3 shelf.create '{"name":"ca","activate":"rw"}')
t_is "$(jq -c '[.activations[] | [.node, .mode]]' <<<"$ca")" '[["n3","rw"]]' "create with activate: active for the caller"
t_is "$(lc shelf.get '{"name":"ca"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n3","rw"]]' "the activation is in the catalogue"
t_is "$(lerr ltls n4 shelf.activate '{"name":"ca"}')" "EBUSY" "it conflicts like any exclusive activation"
t_like "$("$CLI" client --connect "unix:$SOCK" shelf.create '{"name":"cb","activate":"rx","node":"n5"}' 2>&1)" \
	"EINVAL: activate 'rx' must be" "a bad activate mode is named"
t_is "$(lerr lc shelf.get '{"name":"cb"}')" "ENOENT" "and nothing was created"
t_like "$("$CLI" client --connect "unix:$SOCK" shelf.create '{"name":"cb","activate":"ro"}' 2>&1)" \
	"EINVAL: op 'shelf.create' from the admin identity needs \"node\"" "the admin must name the node to activate for"
t_is "$(lc shelf.create '{"name":"cb","activate":"ro","node":"n5"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n5","ro"]]' \
	"the admin creates a shelf active (ro) for a node"
ltls n3 shelf.deactivate '{"name":"ca"}' >/dev/null && lc shelf.destroy '{"name":"ca"}' >/dev/null &&
	ltls n5 shelf.deactivate '{"name":"cb"}' >/dev/null && lc shelf.destroy '{"name":"cb"}' >/dev/null
t_is "$?" 0 "deactivate and destroy them"

# shelf names: the kernel's rule (docs/RULES.md), so every shelf can be activated
names() { { lc stats | jq -c .books; lc shelf.list | jq -c '[.shelves[] | [.name, .books, .gen]]'; } | tr '\n' ' '; }
n64=$(printf 'a%.0s' $(seq 64))
n65=${n64}b
before=$(names)
z0=$(lc zombie.list | jq -c .books)
t_like "$(lmsg lc shelf.create '{"name":"a+b","books":1}')" "EINVAL: shelf name 'a\+b' may contain only letters, digits" "create: a+b is refused, named"
t_like "$(lmsg lc shelf.create "{\"name\":\"$n65\",\"books\":1}")" "ENAMETOOLONG: shelf name '$n65' is 65 characters long: at most 64" "create: a 65-character name is refused, named"
t_like "$(lmsg lc shelf.rename '{"name":"db","new_name":"a+b"}')" "EINVAL: new_name: shelf name 'a\+b' may contain only" "rename to a+b is refused"
t_like "$(lmsg lc shelf.rename "{\"name\":\"db\",\"new_name\":\"$n65\"}")" "ENAMETOOLONG: new_name: shelf name '$n65' is 65 characters long" "rename to 65 characters is refused"
t_is "$(names)" "$before" "the refused names changed nothing"
t_is "$(lc shelf.create "{\"name\":\"$n64\",\"books\":1}" | jq -r '.name | length')" "64" "a 64-character name is accepted"
t_is "$(lc shelf.destroy "{\"name\":\"$n64\"}" | jq -r .zombies)" "1" "and destroyed"
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c --argjson z0 "$z0" '.books - $z0')}" >/dev/null
t_is "$(lc stats | jq -c .books)" '{"total":140,"free":135,"inuse":4,"zombie":1,"offline":0,"bad":0}' "its book is free again"

# shelves named under the old rule (128 characters, '+') are kept: shown, renamed, destroyed
old=$(printf 'o%.0s' $(seq 120))+x
lt_stop
lt_sqlw "INSERT INTO shelves(name, uuid, owner, ctime, mtime, books, gen)
	VALUES ('$old', '00000000-0000-4000-8000-000000000001', 'n5', 1, 1, 1, 1);
UPDATE books SET state = 1, shelf = (SELECT id FROM shelves WHERE name = '$old'), seq = 0
	WHERE id = (SELECT min(id) FROM books WHERE state = 0 AND id >> 32 = 5);
UPDATE igs SET free = free - 1, zero = zero - 1 WHERE ig = 5;
INSERT INTO attrs(shelf, key, value) SELECT id, 'lfs.policy', 'RandomBooks' FROM shelves WHERE name = '$old';
INSERT INTO shelves(name, uuid, owner, ctime, mtime) VALUES ('old+two', '00000000-0000-4000-8000-000000000002', 'n5', 1, 1);"
lt_start || t_ok 1 "librarian restarts on a catalogue with old names"
t_run "the catalogue with old names is consistent" lt_check_db
t_is "$(lc shelf.get "{\"name\":\"$old\"}" | jq -r '[.name == "'"$old"'", .books] | @tsv')" "true	1" "a 122-character name with '+' is found"
t_is "$(lc shelf.list '{"prefix":"o"}' | jq -r '.shelves | map(.name | length) | join(",")')" "7,122" "and listed"
t_is "$(lc attr.set "{\"name\":\"$old\",\"key\":\"user.k\",\"value\":\"v\"}" | jq -r .key)" "user.k" "its attributes can be set"
t_is "$(lc shelf.activate "{\"name\":\"old+two\",\"node\":\"n5\"}" | jq -r '.activations[0].node')" "n5" "it can be activated"
t_is "$(ltls n5 shelf.deactivate '{"name":"old+two"}' | jq -r .node)" "n5" "and deactivated (by its holder: the admin waits for a live one's lease)"
t_is "$(lerr lc shelf.create '{"name":"old+three"}')" "EINVAL" "no new shelf gets such a name"
t_is "$(lc attr.set '{"name":"db","key":"lfs.anti_affinity","value":"old+two,logs2"}' | jq -r .key)" "lfs.anti_affinity" "an old-named shelf can be an anti-affinity partner"
t_like "$(lmsg lc attr.set '{"name":"db","key":"lfs.anti_affinity","value":"old+three"}')" "EINVAL: lfs.anti_affinity: shelf name 'old\+three' may contain only" "a partner name no shelf has or can get is refused"
t_is "$(lc attr.remove '{"name":"db","key":"lfs.anti_affinity"}' | jq -r .key)" "lfs.anti_affinity" "(partner removed)"
t_like "$(lmsg lc shelf.rename "{\"name\":\"$old\",\"new_name\":\"old+x\"}")" "EINVAL: new_name: shelf name 'old\+x'" "it cannot be renamed to another old name"
t_is "$(lc shelf.rename "{\"name\":\"$old\",\"new_name\":\"renamed\"}" | jq -r '[.name, .books, .gen] | @tsv')" "renamed	1	2" "it is renamed to a valid name"
t_is "$(lc shelf.destroy '{"name":"old+two"}' | jq -r .name)" "old+two" "an old-named shelf is destroyed"
t_is "$(lc shelf.destroy '{"name":"renamed"}' | jq -r .zombies)" "1" "the renamed one too"
t_like "$(lmsg lc shelf.get "{\"name\":\"$(printf 'x%.0s' $(seq 129))\"}")" "ENAMETOOLONG: shelf name 'x+' is 129 characters long: no shelf has a name longer than 128" "a lookup of 129 characters is refused"
t_like "$(lmsg lc shelf.destroy '{"name":"a\u0001b"}')" "EINVAL: shelf name 'a.x01b' has a character that is not printable" "a lookup with a control character is refused"
lc zombie.zeroed "{\"books\":$(lc zombie.list | jq -c --argjson z0 "$z0" '.books - $z0')}" >/dev/null
t_is "$(lc stats | jq -c .books)" '{"total":140,"free":135,"inuse":4,"zombie":1,"offline":0,"bad":0}' "their books are free again"
t_run "the catalogue is consistent" lt_check_db

# restart with the same database keeps everything
before=$(lc shelf.get '{"name":"db"}' | jq -c 'del(.activations)')
lt_stop
t_is "$?" "0" "SIGTERM shuts down cleanly (exit 0)"
lt_start
t_is "$(lc shelf.get '{"name":"db"}' | jq -c 'del(.activations)')" "$before" "after a restart the shelf, its books and attributes are unchanged"
t_is "$(lc stats | jq -c .books)" '{"total":140,"free":135,"inuse":4,"zombie":1,"offline":0,"bad":0}' "after a restart the book counts are unchanged"
lt_stop

# a changed geometry: a new IG is added, a removed busy IG is refused, a removed free IG goes
lt_conf "${LT_FABRIC/\{ ig = 6; books = 20; \}/\{ ig = 6; books = 20; \}, \{ ig = 7; books = 5; \}}" "$SHARE"
lt_start
t_is "$(lc stats | jq -r .books.total)" "145" "restart with a new IG adds its books"
lt_stop
lt_conf "${LT_FABRIC/\{ ig = 0; books = 20; \}, /}" "$SHARE"
"$LIB" -c "$T/lib.conf" >"$T/refused.log" 2>&1
t_is "$?" "1" "restart without an IG that holds allocated books is refused"
t_like "$(cat "$T/refused.log")" "IG 0 was removed from the fabric but [0-9]+ of its books are allocated or waiting to be zeroed" "the refusal names the IG and the count"
lt_conf "$LT_FABRIC" "$SHARE"
lt_start
t_is "$(lc stats | jq -r .books.total)" "140" "restart without the free IG 7 drops its books"
t_run "the catalogue is consistent after the geometry changes" lt_check_db
lt_stop
lt_done
