#!/bin/bash
# The librarian's side of the Library File System (a shelf is a file):
# "shared" activations (writable on several nodes at once), grows while
# shared, lfs.size and "bytes", shelf.resize by bytes and shelf.rename with
# "replace". Nodes n1-n4 share their shelves "rw"; tenant readers (n5, n6)
# shares "ro".
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'share = "rw";'
cat >>"$T/lib.conf" <<'EOC'
tenants = ( { name = "readers"; nodes = [ "n5", "n6" ]; share = "ro"; } );
EOC
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts"
lmsg() { "$@" 2>&1 >/dev/null; }
acts() { lc shelf.get "{\"name\":\"$1\"}" | jq -c '[.activations[] | [.node, .mode]]'; }
# what a refused request must not change: the shelf's size, map and lfs.size, the zombies
state() { { lc shelf.get "{\"name\":\"$1\"}" | jq -c '[.books, .gen, .bytes, .map, .attrs["lfs.size"]]'; lc stats | jq -c .books; } | tr '\n' ' '; }
G=8589934592 # book_size

# two nodes hold a shelf "shared" at once
lcn n1 shelf.create '{"name":"f","books":2}' >/dev/null
t_is "$(lcn n1 shelf.activate '{"name":"f","mode":"shared"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"]]' "n1 activates f shared"
t_is "$(lcn n2 shelf.activate '{"name":"f","mode":"shared"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"],["n2","shared"]]' "n2 too, at the same time"
t_is "$(lcn n2 heartbeat | jq -c '[.activations[] | {name, mode}]')" '[{"name":"f","mode":"shared"}]' "heartbeat shows the mode shared"
t_is "$(lc shelf.list '{"prefix":"f"}' | jq -c '.shelves[0].activations')" '[{"node":"n1","mode":"shared"},{"node":"n2","mode":"shared"}]' "shelf.list shows both, shared"

# rw and shared exclude each other, both ways, naming the holder
t_like "$(lmsg lcn n3 shelf.activate '{"name":"f"}')" "EBUSY: shelf 'f' is active on node 'n1' \(shared\)" "rw while shared: EBUSY naming the holder and its mode"
lcn n4 shelf.create '{"name":"g","books":1,"activate":"rw"}' >/dev/null
t_like "$(lmsg lcn n3 shelf.activate '{"name":"g","mode":"shared"}')" "EBUSY: shelf 'g' is active on node 'n4' \(rw\)" "shared while rw: EBUSY naming the holder"
t_is "$(acts g)" '[["n4","rw"]]' "g is still n4's alone"
t_like "$(lmsg lcn n3 shelf.activate '{"name":"f","takeover":true}')" \
	"EBUSY: cannot take over shelf 'f': it is active on node 'n1' \(shared\), which is live" "a live shared holder is not taken over"
t_like "$(lmsg lc shelf.activate '{"name":"f","mode":"rx","node":"n3"}')" "EINVAL: mode 'rx' must be \"rw\" \(exclusive\), \"shared\"" "an unknown mode is named"

# ro and shared coexist; a node changes its own activation's mode
t_is "$(lcn n3 shelf.activate '{"name":"f","mode":"ro"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"],["n2","shared"],["n3","ro"]]' "ro next to shared"
t_is "$(lcn n3 shelf.activate '{"name":"f","mode":"shared"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"],["n2","shared"],["n3","shared"]]' "n3 upgrades its own ro to shared"
t_is "$(lcn n3 shelf.activate '{"name":"f","mode":"ro"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"],["n2","shared"],["n3","ro"]]' "and back to ro"
t_like "$(lmsg lcn n3 shelf.activate '{"name":"f","mode":"rw"}')" "EBUSY: shelf 'f' is active on node 'n1' \(shared\)" "but not to rw while others hold it"
t_is "$(acts f)" '[["n1","shared"],["n2","shared"],["n3","ro"]]' "the refused upgrade kept n3's ro"
lcn n4 shelf.create '{"name":"h","books":1}' >/dev/null
lcn n1 shelf.activate '{"name":"h","mode":"ro"}' >/dev/null
lcn n2 shelf.activate '{"name":"h","mode":"ro"}' >/dev/null
t_is "$(lcn n1 shelf.activate '{"name":"h","mode":"shared"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n1","shared"],["n2","ro"]]' "ro -> shared while another node holds ro"
t_is "$(lcn n3 shelf.create '{"name":"c","activate":"shared"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n3","shared"]]' "shelf.create activates shared too"

# access: shared writes, so it needs rw access
lcn n5 shelf.create '{"name":"rd","books":1}' >/dev/null
t_like "$(lmsg lcn n6 shelf.activate '{"name":"rd","mode":"shared"}')" "EPERM: node 'n6' may not activate \(shared\) shelf 'rd' \(owner 'n5'\): that needs 'rw' access, it has 'ro'" "a read-only tenant cannot take shared (EPERM, as for rw)"
t_is "$(lcn n6 shelf.activate '{"name":"rd","mode":"ro"}' | jq -c '[.activations[] | [.node, .mode]]')" '[["n6","ro"]]' "it takes ro"
t_is "$(lerr lcn n6 shelf.activate '{"name":"rd","mode":"shared"}')" "EPERM" "nor upgrade its ro to shared"
t_is "$(acts rd)" '[["n6","ro"]]' "its ro stays"
lcn n6 shelf.deactivate '{"name":"rd"}' >/dev/null

# a grow while others hold the shelf shared or ro; a shrink refused
map=$(lc shelf.get '{"name":"f"}' | jq -c .map)
r=$(lcn n1 shelf.resize '{"name":"f","books":4}')
t_is "$(jq -c '[.old_books, .books, (.added | length)]' <<<"$r")" "[2,4,2]" "the shared holder n1 grows f while n2 (shared) and n3 (ro) hold it"
t_is "$(lc shelf.get '{"name":"f"}' | jq -c '.map[0:2]')" "$map" "the first books stay in place"
t_is "$(lcn n4 shelf.resize '{"name":"f","books":5}' | jq -r .books)" "5" "a node without an activation grows it too"
before=$(state f)
t_like "$(lmsg lcn n1 shelf.resize '{"name":"f","books":3}')" "EBUSY: cannot shrink shelf 'f': it is active on node 'n2' \(shared\) and others" "a shrink is refused while others hold it"
t_is "$(lerr lcn n4 shelf.resize '{"name":"f","books":1}')" "EBUSY" "by anyone"
t_is "$(state f)" "$before" "the refused shrinks changed nothing (books, map, zombies)"
t_like "$(lmsg lcn n3 shelf.resize '{"name":"g","books":2}')" "EBUSY: cannot grow shelf 'g': it is active on node 'n4' \(rw\)" "no grow while another node holds the shelf rw"

# lfs.size: set by a shared holder while others hold the shelf
t_is "$(lcn n2 attr.set '{"name":"f","key":"lfs.size","value":"1000"}' | jq -r .key)" "lfs.size" "the shared holder n2 sets lfs.size while n1 and n3 hold f"
t_is "$(lc attr.get '{"name":"f","key":"lfs.size"}' | jq -r .value)" "1000" "attr.get shows it"
t_is "$(lc attr.list '{"name":"f"}' | jq -r '.attrs["lfs.size"]')" "1000" "attr.list too"
t_is "$(lc shelf.get '{"name":"f"}' | jq -c '[.bytes, .size]')" "[1000,$((5 * G))]" "shelf.get: bytes is lfs.size, size the capacity"
t_is "$(lc shelf.list '{"prefix":"f"}' | jq -r '.shelves[0].bytes')" "1000" "shelf.list shows bytes"
t_is "$(lc shelf.get '{"name":"g"}' | jq -r .bytes)" "$G" "without lfs.size bytes is the capacity"
t_is "$(lcn n1 attr.set '{"name":"f","key":"lfs.size","value":4096}' | jq -r .key)" "lfs.size" "a JSON integer is taken"
before=$(state f)
t_like "$(lmsg lcn n1 attr.set "{\"name\":\"f\",\"key\":\"lfs.size\",\"value\":\"$((5 * G + 1))\"}")" \
	"EINVAL: lfs.size \"$((5 * G + 1))\" must be a byte count from 0 to $((5 * G)), the capacity of shelf 'f' \(5 books of $G bytes\)" "beyond the capacity: EINVAL naming the value and the capacity"
for bad in '"12x"' '-1' '""' '"-5"' '1.5' '"+7"'; do
	t_like "$(lmsg lcn n1 attr.set "{\"name\":\"f\",\"key\":\"lfs.size\",\"value\":$bad}")" "EINVAL: lfs.size .* must be a byte count" "lfs.size $bad is refused"
done
t_like "$(lmsg lcn n1 attr.set '{"name":"f","key":"lfs.size","value":"12x"}')" "lfs.size \"12x\"" "the value is named"
t_like "$(lmsg lcn n4 attr.set '{"name":"f","key":"lfs.size","value":"1"}')" "EBUSY: cannot change attribute 'lfs.size' of shelf 'f': it is active on node 'n1' \(shared\)" "a node without an activation may not set it while others hold f"
t_is "$(lerr lcn n3 attr.set '{"name":"f","key":"lfs.size","value":"1"}')" "EBUSY" "nor may a read-only holder"
t_is "$(lerr lcn n2 attr.set '{"name":"f","key":"user.x","value":"1"}')" "EBUSY" "other attributes keep the rule: not while others hold f"
t_is "$(state f)" "$before" "the refused values changed nothing"

# a shrink lowers lfs.size to the new capacity
lcn n4 shelf.create '{"name":"s","books":3}' >/dev/null
lcn n4 attr.set "{\"name\":\"s\",\"key\":\"lfs.size\",\"value\":$((5 * G / 2))}" >/dev/null
t_is "$(lcn n4 shelf.resize '{"name":"s","books":2}' | jq -c '[.books, .bytes]')" "[2,$((2 * G))]" "a shrink below lfs.size lowers it"
t_is "$(lc attr.get '{"name":"s","key":"lfs.size"}' | jq -r .value)" "$((2 * G))" "to the new capacity"
lcn n4 attr.set '{"name":"s","key":"lfs.size","value":"10"}' >/dev/null
t_is "$(lcn n4 shelf.resize '{"name":"s","books":1}' | jq -r .bytes)" "10" "a shrink above lfs.size keeps it"

# shelf.resize by bytes: books = ceil(bytes / book_size), lfs.size exact, in one transaction
r=$(lcn n4 shelf.resize "{\"name\":\"s\",\"bytes\":$((G + 1))}")
t_is "$(jq -c '[.old_books, .books, .bytes, .size]' <<<"$r")" "[1,2,$((G + 1)),$((2 * G))]" "bytes = book_size + 1: 2 books, lfs.size exact"
t_is "$(lc attr.get '{"name":"s","key":"lfs.size"}' | jq -r .value)" "$((G + 1))" "lfs.size is the bytes"
t_is "$(lcn n4 shelf.resize "{\"name\":\"s\",\"bytes\":$((3 * G))}" | jq -c '[.books, .bytes]')" "[3,$((3 * G))]" "a whole number of books"
t_is "$(lcn n4 shelf.resize '{"name":"s","bytes":5}' | jq -c '[.books, .bytes, (.removed | length)]')" "[1,5,2]" "a shrink by bytes"
t_is "$(lcn n4 shelf.resize '{"name":"s","bytes":0}' | jq -c '[.books, .bytes]')" "[0,0]" "bytes 0: no books"
t_is "$(lcn n1 shelf.resize "{\"name\":\"f\",\"bytes\":$((5 * G + 7))}" | jq -c '[.books, .bytes]')" "[6,$((5 * G + 7))]" "a grow by bytes while others hold f shared"
before=$(state f)
t_like "$(lmsg lcn n3 shelf.resize '{"name":"f","books":6,"bytes":1}')" "EINVAL: shelf.resize needs exactly one of \"books\"" "books and bytes: EINVAL"
t_is "$(lerr lcn n3 shelf.resize '{"name":"f"}')" "EINVAL" "neither: EINVAL"
t_is "$(lerr lcn n3 shelf.resize '{"name":"f","bytes":-1}')" "EINVAL" "negative bytes: EINVAL"
t_is "$(lerr lcn n3 shelf.resize '{"name":"f","bytes":"7"}')" "EINVAL" "bytes as text: EINVAL"
t_is "$(lerr lcn n3 shelf.resize "{\"name\":\"f\",\"bytes\":$((139 * G))}")" "ENOSPC" "bytes the fabric has no room for: ENOSPC"
t_is "$(lerr lcn n3 shelf.resize '{"name":"f","bytes":1}')" "EBUSY" "a shrink by bytes while others hold f: EBUSY"
t_is "$(state f)" "$before" "none of them changed anything (books, lfs.size, map, zombies)"

# shelf.rename with replace
lcn n1 shelf.create '{"name":"t1","books":2}' >/dev/null
lcn n1 shelf.create '{"name":"t2","books":1}' >/dev/null
t1=$(lc shelf.get '{"name":"t1"}')
t2book=$(lc shelf.get '{"name":"t2"}' | jq -c '.map[0]')
lcn n4 shelf.create '{"name":"u","books":1}' >/dev/null
before="$(state t1) $(state t2)"
t_like "$(lmsg lcn n1 shelf.rename '{"name":"t1","new_name":"t2"}')" "EEXIST: cannot rename shelf 't1': shelf 't2' already exists" "without replace: EEXIST"
t_is "$(lerr lcn n1 shelf.rename '{"name":"t1","new_name":"t2","replace":false}')" "EEXIST" "replace false: EEXIST"
lcn n2 shelf.activate '{"name":"t2","mode":"shared"}' >/dev/null
t_like "$(lmsg lcn n1 shelf.rename '{"name":"t1","new_name":"t2","replace":true}')" "EBUSY: cannot destroy shelf 't2': it is active on node 'n2' \(shared\)" "replacing an active shelf: EBUSY naming the holder"
t_like "$(lmsg lcn n4 shelf.rename '{"name":"u","new_name":"t2","replace":true}')" "EPERM: node 'n4' may not destroy shelf 't2' \(owner 'n1'\)" "a caller that may not destroy the target: EPERM"
t_is "$(lerr lcn n5 shelf.rename '{"name":"rd","new_name":"t2","replace":true}')" "EEXIST" "a target the caller does not see is not replaced: EEXIST"
t_is "$(state t1) $(state t2)" "$before" "the refused renames changed nothing"
lcn n2 shelf.deactivate '{"name":"t2"}' >/dev/null
r=$(lcn n1 shelf.rename '{"name":"t1","new_name":"t2","replace":true}')
t_is "$(jq -c '[.name, .uuid, .books, .replaced]' <<<"$r")" "[\"t2\",$(jq -c .uuid <<<"$t1"),2,{\"name\":\"t2\",\"zombies\":1}]" "rename replace: t1 is now t2, the old t2 destroyed"
t_is "$(lerr lc shelf.get '{"name":"t1"}')" "ENOENT" "the old name is gone"
t_is "$(lc shelf.get '{"name":"t2"}' | jq -c .map)" "$(jq -c .map <<<"$t1")" "t2 has t1's books"
t_is "$(lc zombie.list | jq --argjson b "$t2book" '[.books[] | select(. == $b)] | length')" "1" "the replaced shelf's book is ZOMBIE"
gen=$(lc shelf.get '{"name":"t2"}' | jq .gen)
t_is "$(lcn n1 shelf.rename '{"name":"t2","new_name":"t2","replace":true}' | jq -c '[.name, .gen, has("replaced")]')" "[\"t2\",$gen,false]" "renaming onto itself: success, nothing changed"
t_is "$(lcn n1 shelf.rename '{"name":"t2","new_name":"t3"}' | jq -r .name)" "t3" "a plain rename still works"

# a shared holder writes: like an rw one it is taken over only once it is no longer live
t_like "$(lmsg lc shelf.activate '{"name":"h","node":"n4","force":true}')" "EBUSY: cannot take over shelf 'h': it is active on node 'n1' \(shared\), which is live" \
	"the admin's takeover from a live shared holder is refused"
t_is "$(acts h)" '[["n1","shared"],["n2","ro"]]' "and h is still theirs"
# polls the lease's end (nothing to wait on but the clock): n1 and n2 say nothing meanwhile
deadline=$((SECONDS + 10))
until out=$(lc shelf.activate '{"name":"h","node":"n4","force":true}' 2>/dev/null) || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
t_is "$(jq -c '[.activations[] | [.node, .mode]]' <<<"$out")" '[["n4","rw"]]' "once n1 and n2 are silent past lease_time + fence_grace, the takeover ends both"

t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_done
