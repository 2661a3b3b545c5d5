#!/bin/bash
# Where `lfsvol create' puts the books, on the host against a real librarian
# (no kernel needed: create without -a talks to the librarian only):
# lfs.conf's default_policy and its shelves entries (policy, igs), and
# create's -p, --ig and --away-from. Every setting differs from the
# librarian's own default (Spread), and every check reads the librarian's
# record of the shelf (its policy attribute, i.e. user.LFS.AllocationPolicy,
# and the IG of each book of its map), so a setting that stops reaching the
# librarian fails here.
# Fabric: node01 (IG 0, 1; power domain A), node02 (IG 2; B), node03 (IG 3;
# C), node04 (IG 4; A); 20 books of 64 MiB per IG. lfsvol runs as node01.
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

PORT=$(lv_free_port) || { echo "Bail out! no free port"; exit 1; }
mkdir -p "$LV/keys" && chmod 700 "$LV/keys"
"$LIBRARIAN" genkey "$LV/keys/node01.key" || { echo "Bail out! genkey"; exit 1; }
node() { # node NAME PD IG...
	local n=$1 pd=$2 sep= ig igs=
	shift 2
	for ig; do igs+="$sep{ ig = $ig; books = 20; }"; sep=', '; done
	printf '{ name = "%s"; power_domain = "%s"; igs = ( %s ); }' "$n" "$pd" "$igs"
}
cat >"$LV/lib.conf" <<EOC
librarian = {
	database = "$LV/cat.db";
	listen = [ "127.0.0.1:$PORT", "unix:$LV/sock" ];
	book_size = "64M";
	keys_dir = "$LV/keys";
	default_policy = "Spread";
	new_books = "zero";
};
fabric = { racks = ( { name = "r1"; enclosures = (
	{ name = "e1"; nodes = ( $(node node01 A 0 1), $(node node02 B 2) ); },
	{ name = "e2"; nodes = ( $(node node03 C 3), $(node node04 A 4) ); } ); } ); };
EOC
lv_run_librarian
t_ok $? "librarian (default_policy Spread) on 127.0.0.1:$PORT" || t_done

# The librarian's record of a shelf: "POLICY IG,IG,..." (the IG of each book)
rec() {
	"$LIBRARIAN" client --connect "unix:$LV/sock" shelf.get "{\"name\":\"$1\"}" |
		jq -r '"\(.attrs["lfs.policy"]) \([.map[][0]] | join(","))"'
}
# lv_conf with the key and address filled in
conf() {
	local f=$1
	shift
	lv_conf "$f" "127.0.0.1:$PORT" "$LV/keys/node01.key" "$@"
}
conf "$LV/plain.conf"
conf "$LV/pol.conf" 'default_policy = "LZAdescending";' 'shelves = (' \
	'	{ name = "loc"; policy = "LocalNode"; },' \
	'	{ name = "req"; policy = "RequestIG"; igs = [3, 1]; },' \
	'	{ name = "igsonly"; igs = [2]; }' \
	');'
P() { "$LFSVOL" -c "$LV/plain.conf" "$@" >/dev/null; }
C() { "$LFSVOL" -c "$LV/pol.conf" "$@" >/dev/null; }

# --- lfs.conf ----------------------------------------------------------------
t_run "without default_policy: create sp -s 5b" P create sp -s 5b
t_is "$(rec sp | cut -d' ' -f1)" Spread "  the librarian's default applies (Spread)"
t_is "$(rec sp | cut -d' ' -f2 | tr , '\n' | sort -u | paste -sd,)" 0,1,2,3,4 \
	"  one book on each IG"

t_run "default_policy = LZAdescending: create d -s 3b" C create d -s 3b
t_is "$(rec d)" "LZAdescending 4,4,4" "  the librarian records LZAdescending; the books are the highest (IG 4)"
t_is "$("$LFSVOL" -c "$LV/pol.conf" show d --json | jq -c '.[0] | [.policy, .map]')" \
	'["LZAdescending",[[4,19],[4,18],[4,17]]]' "  lfsvol show --json: the policy and the highest books in order"

t_run "shelves entry loc (policy LocalNode): create loc -s 6b" C create loc -s 6b
t_is "$(rec loc | cut -d' ' -f1)" LocalNode "  the entry's policy wins over default_policy"
t_like "$(rec loc | cut -d' ' -f2)" '^[01](,[01]){5}$' "  every book on node01's IGs (0, 1): $(rec loc | cut -d' ' -f2)"

t_run "shelves entry req (RequestIG, igs = [3, 1]): create req -s 5b" C create req -s 5b
t_is "$(rec req)" "RequestIG 3,1,3,1,3" "  the books round-robin over IG 3, 1"
t_is "$("$LIBRARIAN" client --connect "unix:$LV/sock" attr.get '{"name":"req","key":"lfs.igs"}' | jq -r .value)" \
	"3,1" "  the librarian keeps the list (lfs.igs)"

t_run "shelves entry with igs and no policy: create igsonly -s 2b" C create igsonly -s 2b
t_is "$(rec igsonly)" "LZAdescending 4,4" "  default_policy applies; the igs are kept for a later RequestIG"

# --- lfsvol create -p, --ig, --away-from ----------------------------------------
t_run "create a -s 3b -p LZAascending" P create a -s 3b -p LZAascending
t_is "$(rec a)" "LZAascending 0,0,0" "  the lowest free books (IG 0)"
t_run "create l -s 4b -p localnode (any letter case)" P create l -s 4b -p localnode
t_like "$(rec l)" '^LocalNode [01](,[01]){3}$' "  LocalNode, node01's IGs only: $(rec l)"
t_run "rename loc loc0, so that the entry loc (LocalNode) applies again" C rename loc loc0
t_run "create loc -s 2b -p LZAdescending" C create loc -s 2b -p LZAdescending
t_is "$(rec loc)" "LZAdescending 4,4" "  the command line's policy wins over the entry's"
t_run "create r -s 5b -p RequestIG --ig 2,0" P create r -s 5b -p RequestIG --ig 2,0
t_is "$(rec r)" "RequestIG 2,0,2,0,2" "  the books round-robin over IG 2, 0"
t_run "rename req req0, so that the entry req (RequestIG, igs = [3, 1]) applies again" C rename req req0
t_run "create req -s 2b --ig 4" C create req -s 2b --ig 4
t_is "$(rec req)" "RequestIG 4,4" "  the entry's policy, the command line's IG list"
t_run "create ranged -s 4b -p RequestIG --ig 1-3" P create ranged -s 4b -p RequestIG --ig 1-3
t_is "$(rec ranged)" "RequestIG 1,2,3,1" "  an IG range: 1, 2, 3, then 1 again"

t_run "create pri -s 2b -p LocalNode (power domain A)" P create pri -s 2b -p LocalNode
t_run "create mir -s 6b --away-from pri" P create mir -s 6b --away-from pri
t_is "$(rec mir | cut -d' ' -f2 | tr , '\n' | sort -u | paste -sd,)" 2,3 \
	"  no book in power domain A (IG 0, 1 of node01, IG 4 of node04): $(rec mir)"
t_is "$("$LIBRARIAN" client --connect "unix:$LV/sock" attr.get '{"name":"mir","key":"lfs.anti_affinity"}' | jq -r .value)" \
	pri "  the librarian keeps the partner (lfs.anti_affinity)"
t_run "create mir2 -s 4b -p LZAdescending --away-from pri" P create mir2 -s 4b -p LZAdescending --away-from pri
t_is "$(rec mir2)" "LZAdescending 3,3,3,3" "  with a policy: its order, outside domain A (IG 4 skipped)"

t_run "the catalogue is consistent" "$LIBRARIAN" check --db "$LV/cat.db"
t_done
