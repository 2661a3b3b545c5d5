#!/bin/bash
# Every allocation policy, checked against the fabric geometry (tests/librarian/lib.sh):
#   r1/e1: n1 (IG 0,1; pd A), n2 (IG 2; pd B)   r1/e2: n3 (IG 3; pd C), n4 (IG 4; pd A)
#   r2/e3: n5 (IG 5; pd D), n6 (IG 6; pd E)      20 books per IG
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
fresh() {
	[ -n "$LPID" ] && lt_stop
	lt_fresh
	lt_conf "$LT_FABRIC" "share = \"rw\"; $1" # the nodes use each other's shelves
	lt_start
}
# IG of each book of a shelf, in order
igs() { lc shelf.get "{\"name\":\"$1\"}" | jq -r '[.map[][0]] | join(",")'; }
uniq_igs() { lc shelf.get "{\"name\":\"$1\"}" | jq -r '[.map[][0]] | unique | join(",")'; }
snapshot() { { lc stats | jq -c .books; lc shelf.list | jq -c '[.shelves[] | [.name, .books, .gen]]'; lc geometry | jq -c '[.racks[].enclosures[].nodes[].igs[].free]'; } | tr '\n' ' '; }

fresh
lcn n1 shelf.create '{"name":"r","books":30,"policy":"RandomBooks"}' >/dev/null
t_is "$(lc shelf.get '{"name":"r"}' | jq '[.map[] | tostring] | unique | length')" "30" "RandomBooks: 30 distinct books"
t_like "$(uniq_igs r)" "," "RandomBooks: books from several IGs"

lcn n1 shelf.create '{"name":"local","books":25,"policy":"LocalNode"}' >/dev/null
t_like "$(uniq_igs local)" "^(0|1|0,1)$" "LocalNode: only the node's own IGs (0, 1)"
before=$(snapshot)
t_is "$(lerr lcn n2 shelf.create '{"name":"big","books":21,"policy":"LocalNode"}')" "ENOSPC" "LocalNode beyond the node's memory: ENOSPC"
t_is "$(snapshot)" "$before" "ENOSPC left the catalogue unchanged (no shelf, no book taken)"

fresh
lcn n2 shelf.create '{"name":"near","books":30,"policy":"Nearest"}' >/dev/null
t_is "$(igs near | cut -d, -f1-20 | tr ',' '\n' | sort -u | tr '\n' ' ')" "2 " "Nearest: the first 20 books are local (IG 2)"
t_like "$(igs near | cut -d, -f21- | tr ',' '\n' | sort -u | tr '\n' ' ')" "^(0 |1 |0 1 )$" "Nearest: then the same enclosure (n1: IG 0, 1)"
lcn n2 shelf.create '{"name":"far","books":50,"policy":"Nearest"}' >/dev/null
t_is "$(igs far | tr ',' '\n' | sort -u | tr '\n' ' ')" "0 1 3 " "Nearest: the rest of the enclosure (IG 0, 1), then the same rack (IG 3)"
lcn n2 shelf.create '{"name":"farther","books":50,"policy":"Nearest"}' >/dev/null
t_is "$(igs farther | tr ',' '\n' | sort -u | tr '\n' ' ')" "4 5 6 " "Nearest: the rack (IG 4), then the other rack last (IG 5, 6)"

fresh
lcn n2 shelf.create '{"name":"rem","books":30,"policy":"NearestRemote"}' >/dev/null
t_like "$(uniq_igs rem)" "^(0|1|0,1)$" "NearestRemote: never local, the enclosure first (IG 0, 1)"

fresh
t_is "$(lerr lcn n3 shelf.create '{"name":"enc","books":41,"policy":"NearestEnc"}')" "ENOSPC" "NearestEnc: only the enclosure's 40 books"
lcn n3 shelf.create '{"name":"enc","books":35,"policy":"NearestEnc"}' >/dev/null
t_is "$(uniq_igs enc)" "3,4" "NearestEnc: IGs of the enclosure only"
t_is "$(igs enc | cut -d, -f1-20 | tr ',' '\n' | sort -u | tr -d '\n')" "3" "NearestEnc: local node first"

fresh
t_is "$(lerr lcn n5 shelf.create '{"name":"rack","books":41,"policy":"NearestRack"}')" "ENOSPC" "NearestRack: only rack r2's 40 books"
t_is "$(lerr lcn n3 shelf.create '{"name":"rack","books":101,"policy":"NearestRack"}')" "ENOSPC" "NearestRack: only rack r1's 100 books"
lcn n3 shelf.create '{"name":"rack","books":100,"policy":"NearestRack"}' >/dev/null
t_is "$(uniq_igs rack)" "0,1,2,3,4" "NearestRack: rack r1 only, never IG 5 or 6"
t_is "$(igs rack | cut -d, -f1-40 | tr ',' '\n' | sort -u | tr '\n' ' ')" "3 4 " "NearestRack: local node and enclosure first"

fresh
lcn n1 shelf.create '{"name":"nle","books":50,"policy":"NonLocal_Enc"}' >/dev/null
t_is "$(uniq_igs nle)" "3,4,5" "NonLocal_Enc: never the local enclosure (IG 0, 1, 2)"
t_is "$(lerr lcn n1 shelf.create '{"name":"nle2","books":31,"policy":"NonLocal_Enc"}')" "ENOSPC" "NonLocal_Enc: ENOSPC when only the local enclosure has books"
t_is "$(igs nle | cut -d, -f1-40 | tr ',' '\n' | sort -u | tr '\n' ' ')" "3 4 " "NonLocal_Enc: nearest first (same rack)"

fresh
lc shelf.create '{"name":"up","books":25,"policy":"LZAascending"}' >/dev/null
t_is "$(lc shelf.get '{"name":"up"}' | jq -c '.map[18:22]')" "[[0,18],[0,19],[1,0],[1,1]]" "LZAascending: lowest addresses in order"
lc shelf.create '{"name":"down","books":22,"policy":"LZAdescending"}' >/dev/null
t_is "$(lc shelf.get '{"name":"down"}' | jq -c '.map[0:2] + .map[19:22]')" "[[6,19],[6,18],[6,0],[5,19],[5,18]]" "LZAdescending: highest addresses in order"

fresh
lc shelf.create '{"name":"rig","books":7,"policy":"RequestIG","igs":[5,2,3]}' >/dev/null
t_is "$(igs rig)" "5,2,3,5,2,3,5" "RequestIG: round-robin over the list"
lc shelf.resize '{"name":"rig","books":9}' >/dev/null
t_is "$(igs rig)" "5,2,3,5,2,3,5,2,3" "RequestIG: a grow continues the round-robin"
t_is "$(lerr lc shelf.create '{"name":"rig2","books":1,"policy":"RequestIG"}')" "EINVAL" "RequestIG without an IG list is refused"
lc shelf.create '{"name":"rig3","books":40,"policy":"RequestIG","igs":"4,6"}' >/dev/null
t_is "$(igs rig3 | cut -d, -f1-6)" "4,6,4,6,4,6" "RequestIG: the list may be given as text"
t_is "$(lerr lc shelf.resize '{"name":"rig3","books":41}')" "ENOSPC" "RequestIG: only the listed IGs are used (ENOSPC when they are full)"

fresh
spread_ok() {
	lc shelf.get "{\"name\":\"$1\"}" | jq -r '.attrs["lfs.allocation"] | fromjson | .igs | [.[]] | (max - min) <= 1'
}
lc shelf.create '{"name":"fill","books":15,"policy":"LZAascending"}' >/dev/null
lc shelf.create '{"name":"sp","books":17,"policy":"Spread"}' >/dev/null
t_is "$(lc shelf.get '{"name":"sp"}' | jq -r '.attrs["lfs.allocation"] | fromjson | .igs | length')" "7" "Spread: every IG with free books gets some"
t_is "$(spread_ok sp)" "true" "Spread: counts per IG differ by at most one"
lc shelf.resize '{"name":"sp","books":40}' >/dev/null
t_is "$(spread_ok sp)" "true" "Spread: still even after a grow"
lc shelf.resize '{"name":"sp","books":100}' >/dev/null
t_is "$(lc shelf.get '{"name":"sp"}' | jq -c '.attrs["lfs.allocation"] | fromjson | .igs | [.["0"], ([del(.["0"])[]] | max - min <= 1)]')" '[5,true]' "Spread: an IG that runs out (IG 0) is left, the rest stay even"

fresh
lcn n1 shelf.create '{"name":"pri","books":5,"policy":"LocalNode"}' >/dev/null
lc shelf.create '{"name":"mir","books":60,"anti_affinity":"pri"}' >/dev/null
t_is "$(uniq_igs mir)" "2,3,5,6" "anti-affinity: no book in power domain A (IG 0, 1 of n1 and IG 4 of n4)"
t_is "$(lerr lc shelf.resize '{"name":"mir","books":81}')" "ENOSPC" "anti-affinity: ENOSPC when the other domains are full"
lc attr.set '{"name":"pri","key":"lfs.anti_affinity","value":["mir"]}' >/dev/null
lc attr.set '{"name":"pri","key":"lfs.policy","value":"RandomBooks"}' >/dev/null
lc shelf.resize '{"name":"pri","books":30}' >/dev/null
t_is "$(uniq_igs pri)" "0,1,4" "anti-affinity both ways: the partner grows only in domain A"
t_is "$(lc attr.get '{"name":"mir","key":"lfs.anti_affinity"}' | jq -r .value)" "pri" "anti-affinity is a shelf attribute"

fresh 'default_policy = "LZAdescending";'
lc shelf.create '{"name":"d","books":1}' >/dev/null
t_is "$(lc attr.get '{"name":"d","key":"lfs.policy"}' | jq -r .value)" "LZAdescending" "the default policy comes from the config"
t_is "$(ltls n1 auth | jq -r .default_policy)" LZAdescending "  and a node's auth reply says it"
lc attr.set '{"name":"d","key":"lfs.policy","value":"LocalNode"}' >/dev/null
lcn n3 shelf.resize '{"name":"d","books":3}' >/dev/null
t_is "$(igs d)" "6,3,3" "a changed policy attribute applies to the next grow"
t_is "$(lerr lc shelf.resize '{"name":"d","books":4}')" "EINVAL" "LocalNode from the admin without a node is refused"

t_run "the catalogue is consistent" lt_check_db
lt_stop
lt_done
