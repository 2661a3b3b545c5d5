#!/bin/bash
# LFS-TEST: host
# lfsvol copy's refusals on the host, against a real librarian on loopback
# (lfs.ko is not loaded here: every refusal comes before the kernel is
# needed): a missing SRC, SRC = DST, a DST that exists, SRC active for
# writing on another node or on this one, an incomplete SRC; each with its
# exit status, a message naming the bad value, and `list' unchanged. The
# librarian's side of the lfs.incomplete mark: set only by shelf.create,
# removable, and activate refused while it is there. The copy itself runs
# in tests/lvmish/lifecycle.t's VM (tests/lvmish/guest/copy.sh).
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

LV_NODES=2 lv_start_librarian 64M 8 2
t_ok $? "librarian started on 127.0.0.1:$PORT" || t_done
C=$LV/lfs.conf
lv_conf "$C" "127.0.0.1:$PORT" "$LV/keys/node01.key" "agent = { state_dir = \"$LV/state\"; };"
L() { "$LFSVOL" -c "$C" "$@"; }
A() { "$LIBRARIAN" client --connect "unix:$LV/sock" --timeout 5000 "$@"; }

t_run "create src -s 2b -p RandomBooks" L create src -s 2b -p RandomBooks
t_run "create taken -s 1b" L create taken -s 1b
t_run "create busy -s 1b" L create busy -s 1b
before=$(L list --json)
# refused, nothing changed: exit status, message, list
refused() {
	local desc=$1 rc=$2 re=$3
	shift 3
	lv_expect "$desc" "$rc" "$re" "$@"
	t_is "$(L list --json)" "$before" "  list unchanged"
}
refused "copy of a shelf that does not exist: exit 6, named" 6 "no shelf named 'nosuch'" L copy nosuch dst
refused "copy onto itself: exit 2, named" 2 "SRC and DST are both .src'" L copy src src
refused "copy onto a shelf that exists: exit 2, DST named" 2 "shelf .taken' exists already" L copy src taken
refused "a bad DST name: exit 2" 2 "dst/x" L copy src dst/x
refused "copy without DST: exit 2, the usage" 2 \
	"usage: lfsvol copy \\[--max-rate SIZE\\] SRC DST, or lfsvol copy --wait DST" L copy src
refused "copy --wait names DST alone: exit 2" 2 "usage: lfsvol copy" L copy --wait src dst
refused "copy --max-rate takes a SIZE: exit 2, the value named" 2 "copy --max-rate: .*fast" \
	L copy --max-rate fast src dst
A shelf.activate '{"name":"busy","mode":"rw","node":"node02"}' >/dev/null
t_ok $? "(the admin activates busy for writing on node02)"
before=$(L list --json)
refused "SRC active for writing on another node: exit 7, the node named" 7 \
	"shelf .busy' is active on node .node02' for writing \(mode rw\)" L copy busy dst
A shelf.activate '{"name":"src","mode":"rw","node":"node01"}' >/dev/null
before=$(L list --json)
refused "SRC active for writing here: exit 7" 7 "shelf .src' is active on this node for writing" \
	L copy src dst
A shelf.deactivate '{"name":"src","node":"node01"}' >/dev/null
out=$(L --json copy nosuch dst 2>/dev/null)
t_is "$(jq -c '[.command, .source, .error.code, .error.reason]' <<<"$out")" \
	'["copy","nosuch",6,"no-such-shelf"]' "copy --json: the error object"

# The mark of a copy under way: only shelf.create sets it; activate is refused
# while it is there, and a marked shelf is not copied
out=$(A shelf.create '{"name":"half","books":1,"node":"node01","incomplete":"copy of src by node01"}' 2>&1)
t_ok $? "(a shelf made with the incomplete mark, as lfsvol copy makes DST)" || t_diag "$out"
t_is "$(L attr get half lfs.incomplete)" "copy of src by node01" "attr get shows the mark"
lv_expect "attr set of lfs.incomplete is refused" 8 "set only by shelf.create" \
	L attr set src lfs.incomplete x
lv_expect "the librarian refuses to activate it (EBUSY), saying why" 1 \
	"EBUSY: shelf 'half' is incomplete \(lfs.incomplete: copy of src by node01\); remove it" \
	A shelf.activate '{"name":"half","mode":"ro","node":"node01"}'
before=$(L list --json)
refused "copy of an incomplete shelf: exit 7" 7 "shelf .half' is itself an incomplete copy" \
	L copy half dst
t_run "attr rm takes the mark off" L attr rm half lfs.incomplete
t_ok "$(A shelf.activate '{"name":"half","mode":"ro","node":"node01"}' >/dev/null; echo $?)" \
	"  and the shelf can be activated"
t_done
