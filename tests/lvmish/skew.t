#!/bin/bash
# LFS-TEST: host
# lfsvol beside a loaded lfs.ko of another netlink version (after an upgrade
# of the tools while the old module still holds shelves): such a module is
# not "nothing active here". Before, lfsvol took it for an unloaded module,
# so a shrink of a shelf this node holds rw went to the librarian without the
# kernel's shrink (the librarian released books the kernel still mapped:
# another shelf could be given them), and a rename went through. Now every
# command that must know what is active here refuses (exit 5, both versions
# named, the reload advice) and changes nothing; status says it.
# build/tests/lfsvol-skew is lfsvol whose driver sessions fail so
# (tests/lvmish/lfsvol_skew.c), against a real librarian on loopback.
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

SKEW=build/tests/lfsvol-skew
make -s -C tests "$PWD/$SKEW" >&2 || { echo "Bail out! $SKEW is not built"; exit 1; }
lv_start_librarian 64M 8 1
t_ok $? "librarian started on 127.0.0.1:$PORT" || t_done
C=$LV/lfs.conf
lv_conf "$C" "127.0.0.1:$PORT" "$LV/keys/node01.key" "agent = { state_dir = \"$LV/state\"; };"
L() { "$LFSVOL" -c "$C" "$@"; }
S() { "$SKEW" -c "$C" "$@"; }
A() { "$LIBRARIAN" client --connect "unix:$LV/sock" --timeout 5000 "$@"; }

t_run "create held -s 4b" L create held -s 4b
A shelf.activate '{"name":"held","mode":"rw","node":"node01"}' >/dev/null
t_ok $? "(node01 holds held rw, as its old lfs.ko does)"
before=$(A shelf.get '{"name":"held"}' | jq -c '[.name, .books, .map, [.activations[].node]]')
VERS="family 'lfs' is version [0-9]+; this tool speaks version [0-9]+: the loaded lfs.ko is another version than this lfsvol \(reload it"
unchanged() { t_is "$(A shelf.get '{"name":"held"}' | jq -c '[.name, .books, .map, [.activations[].node]]')" "$before" "  the shelf unchanged"; }
lv_expect "a forced shrink of a shelf held here: refused, exit 5, the versions named" 5 "$VERS" S resize held -s 1b -f
unchanged
lv_expect "rename: refused, exit 5" 5 "$VERS" S rename held other
unchanged
lv_expect "remove: refused, exit 5" 5 "$VERS" S remove held -f
unchanged
lv_expect "list: refused, exit 5 (it cannot say what is active here)" 5 "$VERS" S list
out=$(S status 2>&1)
t_like "$out" "lfs.ko unusable: the kernel's generic netlink family 'lfs' is version" "status: lfs.ko unusable, and why"
t_is "$(S status --json 2>/dev/null | jq -r '.[0] | [.driver, (.driver_error | test("version"))] | @tsv')" "unusable	true" \
	"status --json: driver unusable, driver_error"
# the same commands with no module loaded at all (the real lfsvol here): not held here
A shelf.deactivate '{"name":"held","node":"node01"}' >/dev/null
t_run "with no module loaded: rename works" L rename held other
t_is "$(A shelf.get '{"name":"other"}' | jq -r .books)" 4 "  other has held's 4 books"
t_done
