#!/bin/bash
# Owners, tenants, access lists and quotas. Tenants red (n1, n2; share "see")
# and blue (n3, n4; share "rw"); n5 and n6 are in the default tenant. A
# shelf's owner and the admin may do everything; the owner's tenant sees it
# and uses it as its share says; lfs.access grants more; other tenants see
# nothing of it (ENOENT, not listed). Quotas: EDQUOT naming the quota and
# figures, and nothing changes.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lmsg() { "$@" 2>&1 >/dev/null; }
# what the catalogue holds, for "nothing changed"
snapshot() { { lc stats | jq -c '[.books, .shelves, .activations]'; lc shelf.list | jq -c '[.shelves[] | [.name, .owner, .books, .gen, .access, .activations]]'; } | tr '\n' ' '; }
names() { jq -r '[.shelves[].name] | join(",")'; }

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'node_quota = { shelves = 4; books = 12; };'
cat >>"$T/lib.conf" <<'EOC'
tenants = (
	{ name = "red"; nodes = [ "n1", "n2" ]; },
	{ name = "blue"; nodes = [ "n3", "n4" ]; share = "rw"; quota = { books = 10; }; }
);
EOC
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_ok 0 "librarian starts with tenants and quotas"

# n1 (red) owns db; n2 (red, share "see") sees it but may do nothing with it
c=$(ltls n1 shelf.create '{"name":"db","books":2,"attrs":{"user.app":"pg"}}')
t_is "$(jq -c '[.owner, .tenant, .access]' <<<"$c")" '["n1","red",[]]' "create: owner n1, tenant red, no access list"
uuid=$(jq -r .uuid <<<"$c")
lc shelf.create '{"name":"free-for-all","books":1}' >/dev/null
t_is "$(ltls n2 shelf.list | names)" "db" "n2 (same tenant) lists db (not the admin's shelf of the default tenant)"
g=$(ltls n2 shelf.get '{"name":"db"}')
t_is "$(jq -c '[.name, .owner, .books, has("map"), .attrs["user.app"]]' <<<"$g")" '["db","n1",2,false,"pg"]' "n2 shows db and its attributes, not its book map"
t_is "$(jq -r .caller_access <<<"$g")" "see" "  and that it may only see it (caller_access)"
t_is "$(jq -r .caller_access <<<"$c")" "all" "the owner's replies say all"
t_is "$(lc shelf.get '{"name":"db"}' | jq -r .caller_access)" "all" "the admin's too"
before=$(snapshot)
t_like "$(lmsg ltls n2 shelf.destroy '{"name":"db"}')" "EPERM: node 'n2' may not destroy shelf 'db' \(owner 'n1'\): that needs 'all' access, it has 'see'" "n2: destroy refused (EPERM, naming owner and access)"
t_is "$(lerr ltls n2 shelf.rename '{"name":"db","new_name":"db2"}')" "EPERM" "n2: rename refused"
t_is "$(lerr ltls n2 shelf.resize '{"name":"db","books":3}')" "EPERM" "n2: resize refused"
t_is "$(lerr ltls n2 attr.set '{"name":"db","key":"lfs.policy","value":"LocalNode"}')" "EPERM" "n2: attribute change refused"
t_is "$(lerr ltls n2 attr.remove '{"name":"db","key":"user.app"}')" "EPERM" "n2: attribute removal refused"
t_is "$(lerr ltls n2 shelf.activate '{"name":"db"}')" "EPERM" "n2: rw activation refused"
t_is "$(lerr ltls n2 shelf.activate '{"name":"db","mode":"ro"}')" "EPERM" "n2: ro activation refused"
t_is "$(lerr ltls n2 attr.set '{"name":"db","key":"lfs.access","value":"n2:all"}')" "EPERM" "n2 cannot grant itself access"
t_is "$(snapshot)" "$before" "none of that changed anything"

# another tenant sees nothing
t_is "$(ltls n3 shelf.list | jq -c '[.shelves, .total]')" "[[],0]" "n3 (tenant blue) lists nothing of red's or the default tenant's"
t_is "$(ltls n3 shelf.list '{"prefix":"d"}' | jq -r .total)" "0" "not with a prefix either"
nodb=$(lmsg ltls n3 shelf.get '{"name":"nosuch"}')
t_is "$(lmsg ltls n3 shelf.get '{"name":"db"}')" "${nodb/nosuch/db}" "shelf.get of db: ENOENT, word for word what a missing shelf gives"
t_like "$(lmsg ltls n3 shelf.get "{\"uuid\":\"$uuid\"}")" "ENOENT: no shelf with UUID" "by UUID too"
for op in shelf.destroy shelf.activate attr.list shelf.deactivate; do
	t_is "$(lerr ltls n3 $op '{"name":"db"}')" "ENOENT" "n3: $op of db is ENOENT"
done
t_is "$(lerr ltls n5 shelf.get '{"name":"db"}')" "ENOENT" "n5 (default tenant): ENOENT too"
t_is "$(ltls n5 shelf.list | names)" "free-for-all" "n5 lists the default tenant's shelf"
t_is "$(snapshot)" "$before" "the catalogue is unchanged"

# a grant: n2 may write
t_is "$(ltls n1 attr.set '{"name":"db","key":"lfs.access","value":["n2:rw"]}' | jq -r .key)" "lfs.access" "n1 grants n2 rw (lfs.access)"
t_is "$(ltls n2 shelf.get '{"name":"db"}' | jq -c '[.access, (.map | length), .caller_access]')" '[["n2:rw"],2,"rw"]' "n2 now gets the map; shelf.get shows the access list and n2's rw"
t_is "$(ltls n2 shelf.resize '{"name":"db","books":3}' | jq -r .books)" "3" "n2 resizes db"
t_is "$(ltls n2 attr.set '{"name":"db","key":"user.tier","value":"gold"}' | jq -r .key)" "user.tier" "n2 sets an attribute"
t_is "$(ltls n2 shelf.activate '{"name":"db"}' | jq -c '[.activations[].node]')" '["n2"]' "n2 activates db"
t_like "$(lmsg ltls n1 attr.set '{"name":"db","key":"user.tier","value":"lead"}')" "EBUSY: cannot change attribute 'user.tier' of shelf 'db': it is active on node 'n2' \(rw\)" \
	"the owner cannot change attributes while another node holds the shelf"
t_is "$(ltls n2 attr.set '{"name":"db","key":"user.tier","value":"silver"}' | jq -r .key)" "user.tier" "the holder can"
t_is "$(lc attr.set '{"name":"db","key":"user.note","value":"admin"}' | jq -r .key)" "user.note" "and the admin can"
ltls n2 shelf.deactivate '{"name":"db"}' >/dev/null
t_like "$(lmsg ltls n2 shelf.rename '{"name":"db","new_name":"db2"}')" "EPERM: .*needs 'all' access, it has 'rw'" "rw is not enough to rename"
t_is "$(lerr ltls n2 attr.set '{"name":"db","key":"lfs.access","value":"n2:all"}')" "EPERM" "nor to change the access list"
t_is "$(ltls n1 attr.set '{"name":"db","key":"lfs.access","value":"n2:all,@blue:ro"}' | jq -r .key)" "lfs.access" "n1 grants n2 all and tenant blue ro (text form)"
t_is "$(ltls n1 attr.get '{"name":"db","key":"lfs.access"}' | jq -r .value)" "@blue:ro,n2:all" "attr.get shows the list"
t_is "$(ltls n2 shelf.rename '{"name":"db","new_name":"db2"}' | jq -r .name)" "db2" "n2 renames it"
t_is "$(ltls n3 shelf.list | names)" "db2" "n3 (blue, granted ro) lists it now"
t_is "$(ltls n3 shelf.activate '{"name":"db2","mode":"ro"}' | jq -r '.activations[0].mode')" "ro" "n3 activates it read-only"
t_is "$(lerr ltls n4 shelf.activate '{"name":"db2"}')" "EPERM" "n4 (blue) may not activate it rw"
ltls n3 shelf.deactivate '{"name":"db2"}' >/dev/null
for bad in '"n9:rw"' '"@green:ro"' '"n2:rwx"' '"n2"' '["n2:rw","n2:ro"]' '[5]'; do
	t_is "$(lerr ltls n1 attr.set "{\"name\":\"db2\",\"key\":\"lfs.access\",\"value\":$bad}")" "EINVAL" "lfs.access $bad is refused"
done
t_is "$(ltls n1 attr.get '{"name":"db2","key":"lfs.access"}' | jq -r .value)" "@blue:ro,n2:all" "and the list is unchanged"
t_is "$(ltls n1 attr.remove '{"name":"db2","key":"lfs.access"}' | jq -r .key)" "lfs.access" "n1 removes the list"
t_is "$(lerr ltls n3 shelf.get '{"name":"db2"}')" "ENOENT" "blue no longer sees it"

# tenant blue shares "rw": its nodes use each other's shelves without a grant
ltls n3 shelf.create '{"name":"bl","books":1}' >/dev/null
t_is "$(ltls n4 shelf.activate '{"name":"bl"}' | jq -c '[.activations[].node]')" '["n4"]' "n4 activates n3's shelf (blue shares rw)"
ltls n4 shelf.deactivate '{"name":"bl"}' >/dev/null
t_is "$(ltls n4 shelf.resize '{"name":"bl","books":2}' | jq -r .books)" "2" "and resizes it"
t_is "$(lerr ltls n4 shelf.destroy '{"name":"bl"}')" "EPERM" "but destroying needs the owner (or a grant of all)"
t_is "$(lc shelf.create '{"name":"for-n4","node":"n4"}' | jq -c '[.owner, .tenant]')" '["n4","blue"]' "a shelf the admin creates for a node is that node's"

# anti-affinity with a shelf the node may not see: it constrains nothing, so
# where the node's books go says nothing of where that shelf's are. secret
# (n1, red) is in power domain A (IG 0, 1); n4 (blue, IG 4: domain A too)
# names it as a partner of a LocalNode shelf.
ltls n1 shelf.create '{"name":"secret","books":2,"policy":"LocalNode"}' >/dev/null
uniq_igs() { lc shelf.get "{\"name\":\"$1\"}" | jq -r '[.map[][0]] | unique | join(",")'; }
t_like "$(uniq_igs secret)" "^[01](,[01])?$" "(secret is on n1's IGs, power domain A)"
t_is "$(ltls n4 shelf.create '{"name":"probe","books":1,"policy":"LocalNode","anti_affinity":"secret"}' | jq -r .books)" "1" \
	"n4 creates a shelf with an anti-affinity partner it may not see"
t_is "$(uniq_igs probe)" "4" "the partner it may not see does not constrain it: its book is on n4's IG 4, in domain A"
t_is "$(lc shelf.resize '{"name":"probe","books":2,"node":"n4"}' | jq -r .books)" "2" "the admin grows it for n4"
t_is "$(uniq_igs probe)" "4" "nor when the admin (who sees secret) grows it: its owner may not see secret"
lc shelf.create '{"name":"mine","books":3,"policy":"RandomBooks","node":"n4","anti_affinity":"probe"}' >/dev/null
t_like "$(uniq_igs mine)" "^[2356](,[2356])*$" "a partner the caller and the owner see still constrains: the admin's shelf for n4 avoids domain A ($(uniq_igs mine))"
for s in secret probe mine; do lc shelf.destroy "{\"name\":\"$s\"}" >/dev/null; done

# quotas: blue's books (10), each node's shelves (4) and books (12)
before=$(snapshot)
t_like "$(lmsg ltls n3 shelf.create '{"name":"bl2","books":9}')" "EDQUOT: tenant 'blue' would go over its quota: quota books = 10, its shelves hold 2 books and the request adds 9" \
	"tenant quota: EDQUOT naming the quota and the figures"
t_like "$(lmsg ltls n4 shelf.resize '{"name":"bl","books":11}')" "EDQUOT: tenant 'blue' would go over its quota: quota books = 10, its shelves hold 2 books and the request adds 9" \
	"a grow counts too, for the shelf's owner and tenant"
t_like "$(lmsg ltls n1 shelf.create '{"name":"big","books":10}')" "EDQUOT: node 'n1' would go over its quota: node_quota books = 12, its shelves hold 3 books and the request adds 10" \
	"node quota of books"
t_is "$(snapshot)" "$before" "EDQUOT changed nothing"
for i in 1 2 3 4; do ltls n5 shelf.create "{\"name\":\"q$i\"}" >/dev/null; done
before=$(snapshot)
t_like "$(lmsg ltls n5 shelf.create '{"name":"q5"}')" "EDQUOT: node 'n5' is at its quota: node_quota shelves = 4, it has 4 shelves" "node quota of shelves"
t_is "$(snapshot)" "$before" "nothing changed"
t_is "$(lc shelf.create '{"name":"admins"}' | jq -r .owner)" "admin" "the admin's own shelves count for no quota"
lc shelf.destroy '{"name":"admins"}' >/dev/null
# shelf.list writes its result as JSON text (reply_text.c): each entry is what
# shelf.get shows of the shelf (built as jansson objects)
lc shelf.create '{"name":"q.x-1","books":1}' >/dev/null
lc shelf.activate '{"name":"q.x-1","node":"n1","mode":"ro"}' >/dev/null
lc attr.set '{"name":"q.x-1","key":"lfs.access","value":"n2:rw,@blue:ro"}' >/dev/null
listed=$(lc shelf.list | jq -cS '.shelves')
shown=$(lc shelf.list | jq -c '.shelves[].name' | while read -r n; do lc shelf.get "{\"name\":$n}"; done |
	jq -cSs 'map(del(.caller_access, .attrs, .map, .map_offset, .map_complete) | .activations |= map(del(.since)))')
t_is "$(jq -c '[.[] | select(.name == "q.x-1") | .activations[]]' <<<"$listed")" '[{"mode":"ro","node":"n1"}]' \
	"shelf.list shows the activation"
t_is "$listed" "$shown" "each shelf.list entry is shelf.get's summary ($(jq -r '"\(length) shelves, \(map(select(.tenant)) | length) of a tenant, \(map(select(.access != [])) | length) with an access list"' <<<"$listed"))"
lc shelf.deactivate '{"name":"q.x-1","node":"n1"}' >/dev/null
lc shelf.destroy '{"name":"q.x-1"}' >/dev/null
t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_done
