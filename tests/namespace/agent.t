#!/bin/bash
# LFS-TEST: vm once
# The Library File System served by the real node agent (`lfsvol agent'),
# not the test server: one node with two fabric devices (IG 0 and 1) and
# the librarian on the host. HPE's shell session (touch, the policy xattr,
# truncate, getfattr showing the allocation, RequestIG), exact sizes, data
# copied in with dd and read back, `lfsvol list' agreeing with the
# directory, mv and rm seen by the librarian, a bad policy refused with
# nothing changed (the guest mounts it on /tmp/lfs: its / is read-only); then the agent stopped (ENOTCONN at once) and started
# again (operations work again).
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

BOOK=$((16 << 20))
EM_DEVICES=2 EM_FENCE_ACTION=eio em_start 1 512M 16M >&2
t_ok $? "librarian and one node with two fabric devices up ($MACHINE_OUT)" || t_done

n1() {
	em_node 1 "$1"
}
# names and books as lfsvol list sees them: "a:3 b:2"
lib_view() { n1 'L list --json | jq -r ".[] | \"\(.name):\(.books)\"" | sort | paste -sd" "'; }
# names and books as the directory shows them (books: the size in whole books)
dir_view() { n1 "for f in \$(ls /tmp/lfs | sort); do echo \"\$f:\$(( (\$(stat -c %s /tmp/lfs/\$f) + $BOOK - 1) / $BOOK ))\"; done | paste -sd' '"; }

# --- HPE's shell session ----------------------------------------------------
out=$(n1 'mkdir -p /tmp/lfs && mount -t lfs lfs /tmp/lfs && grep " /tmp/lfs " /proc/mounts')
t_like "$out" '^lfs /tmp/lfs lfs ' "mount -t lfs lfs /tmp/lfs"
t_is "$(n1 'getfattr --absolute-names -n user.LFS.AllocationPolicyDefault --only-values /tmp/lfs')" Spread \
	"getfattr of the directory's AllocationPolicyDefault, no policy= given: the librarian's default_policy (Spread)"
out=$(n1 'touch /tmp/lfs/a && ls /tmp/lfs')
t_is "$out" a "touch /tmp/lfs/a: the directory shows it"
t_is "$(n1 'L list --json | jq -c "[.[] | [.name, .books]]"')" '[["a",0]]' \
	"  the librarian has the shelf a, with no books"
n1 'setfattr -n user.LFS.AllocationPolicy -v LocalNode /tmp/lfs/a'
t_ok $? "setfattr user.LFS.AllocationPolicy LocalNode"
t_is "$(n1 'getfattr --absolute-names -n user.LFS.AllocationPolicy --only-values /tmp/lfs/a')" LocalNode \
	"  getfattr reads it back"
t_is "$(em_admin shelf.get '{"name":"a","limit":0}' | jq -r .policy)" LocalNode \
	"  the librarian's policy of a is LocalNode"
n1 "truncate -s $((BOOK * 2 + 4096)) /tmp/lfs/a"
t_ok $? "truncate -s 2 books + 4 KiB"
t_is "$(n1 'stat -c %s /tmp/lfs/a')" $((BOOK * 2 + 4096)) "  the size is exact"
t_is "$(em_admin shelf.get '{"name":"a","limit":0}' | jq .books)" 3 "  the shelf has 3 books"
out=$(n1 'getfattr --absolute-names -d /tmp/lfs/a')
t_like "$out" 'user.LFS.AllocationPolicy="LocalNode"' "getfattr --absolute-names -d shows the policy"
t_like "$out" 'user.LFS.Interleave="[01],[01],[01]"' "  and the allocation on node1's IGs (0, 1): $(grep Interleave <<<"$out")"
t_like "$out" 'user.LFS.AllocationPolicyList="[^"]*RequestIG' "  and the policy list"

out=$(n1 'touch /tmp/lfs/b && setfattr -n user.LFS.InterleaveRequest -v 1 /tmp/lfs/b &&
setfattr -n user.LFS.AllocationPolicy -v RequestIG /tmp/lfs/b && truncate -s 32M /tmp/lfs/b &&
getfattr --absolute-names -n user.LFS.Interleave --only-values /tmp/lfs/b; echo; getfattr --absolute-names -n user.LFS.InterleaveRequest --only-values /tmp/lfs/b')
t_is "$out" $'1,1\n1' "RequestIG with InterleaveRequest 1: both books on IG 1"

# --- data -------------------------------------------------------------------
out=$(n1 'dd if=/dev/urandom of=/tmp/d bs=1M count=20 status=none &&
dd if=/tmp/d of=/tmp/lfs/c bs=1M status=none && cmp /tmp/d /tmp/lfs/c && echo same; stat -c %s /tmp/lfs/c')
t_like "$out" '^same' "dd 20 MiB into /tmp/lfs/c and read it back: the same bytes (cmp)" ||
	t_diag "$(n1 'cmp -l /tmp/d /tmp/lfs/c | awk "NR==1{print \"first\", \$0} END{print NR, \"differ\"}"; tail -n 30 /tmp/agent.log')"
t_like "$out" "^$((20 << 20))\$" "  ls -l size 20 MiB exactly"
out=$(n1 'echo 3 >/proc/sys/vm/drop_caches; sha256sum </tmp/d; sha256sum </tmp/lfs/c')
t_is "$(sed -n 2p <<<"$out")" "$(sed -n 1p <<<"$out")" "  the same sha256 after dropping caches"
t_is "$(lib_view)" "$(dir_view)" "lfsvol list agrees with the directory (names, books): $(lib_view)"

# --- mv, rm ------------------------------------------------------------------
n1 'mv /tmp/lfs/c /tmp/lfs/d'
t_ok $? "mv /tmp/lfs/c /tmp/lfs/d"
t_is "$(n1 'ls /tmp/lfs | paste -sd" "')" "a b d" "  the directory shows d, not c"
t_is "$(n1 'L list --json | jq -r ".[].name" | paste -sd" "')" "a b d" "  so does lfsvol list"
out=$(n1 'cmp /tmp/d /tmp/lfs/d && echo same')
t_is "$out" same "  the data moved with it"
n1 'touch /tmp/lfs/e && mv /tmp/lfs/e /tmp/lfs/b'
t_ok $? "mv over an existing file replaces it"
t_is "$(n1 'L list --json | jq -c "[.[] | [.name, .books]]"')" '[["a",3],["b",0],["d",2]]' \
	"  lfsvol list: b is the empty e now"
n1 'rm /tmp/lfs/d'
t_ok $? "rm /tmp/lfs/d"
t_is "$(n1 'ls /tmp/lfs | paste -sd" "')" "a b" "  gone from the directory"
t_is "$(n1 'L list --json | jq -r ".[].name" | paste -sd" "')" "a b" "  and from lfsvol list"
out=$(n1 'exec 3</tmp/lfs/a; rm /tmp/lfs/a 2>&1; exec 3<&-; ls /tmp/lfs | paste -sd" "')
t_like "$out" 'Device or resource busy' "rm of a file open here: EBUSY"
t_like "$out" 'a b$' "  a is still there"

# --- a bad policy -------------------------------------------------------------
out=$(n1 'setfattr -n user.LFS.AllocationPolicy -v NoSuchPolicy /tmp/lfs/a 2>&1; echo "rc=$?"')
t_like "$out" 'Invalid argument' "a bad policy: EINVAL"
t_is "$(n1 'getfattr --absolute-names -n user.LFS.AllocationPolicy --only-values /tmp/lfs/a')" LocalNode "  the policy is unchanged"
t_is "$(em_admin shelf.get '{"name":"a","limit":0}' | jq -c '[.policy, .books]')" '["LocalNode",3]' \
	"  and so is the shelf"
n1 'setfattr -n user.color -v blue /tmp/lfs/a'
t_is "$(em_admin attr.get '{"name":"a","key":"user.color"}' | jq -r .value)" blue \
	"setfattr user.color is the shelf's attribute user.color"

# --- the agent stopped and started ------------------------------------------
em_agent_stop 1 >/dev/null
# "At once": no server is registered and the calls sent no request (the
# kernel's count of requests sent does not move), so nothing was waited for.
out=$(n1 'up() { nlraw -p up_get | sed -n "s/^$1=//p"; }
echo "portid=$(up up_portid) sent=$(up up_sent)"
touch /tmp/lfs/f 2>&1; cat /tmp/lfs/a >/dev/null 2>&1; echo "rc=$?"
echo "sent=$(up up_sent) pending=$(up up_pending)"')
t_like "$out" 'Transport endpoint is not connected' "agent stopped: touch fails with ENOTCONN"
t_like "$out" 'rc=1' "  so does cat"
before=$(sed -n 's/^portid=0 sent=\([0-9]*\)$/\1/p' <<<"$out")
t_like "$out" "^portid=0 sent=[0-9]+" "  no upcall server is registered"
t_like "$out" "sent=${before:-x} pending=0" "  at once: no request was sent for them, none is pending"
em_agent_start 1 >/dev/null
t_ok $? "the agent starts again"
out=$(n1 'touch /tmp/lfs/f && ls /tmp/lfs | paste -sd" "; sha256sum </tmp/lfs/a | cut -c1-8')
t_like "$out" '^a b f' "  touch works again"
t_is "$(n1 'L list --json | jq -r ".[].name" | paste -sd" "')" "a b f" "  and the librarian has f"

# --- open(O_CREAT) of a name not in the dcache: one CREATE_OPEN -----------
# touch asks CREATE_OPEN (the shelf made and activated in one librarian
# request) and CLOSE, where it asked LOOKUP, CREATE, OPEN and CLOSE; a name
# that exists opens as any open does: O_EXCL is EEXIST, O_TRUNC truncates.
out=$(n1 'up() { nlraw -p up_get | sed -n "s/^$1=//p"; }
fsops() { $LFS_TOP/build/tests/fsops "$@"; }
s0=$(up up_sent); touch /tmp/lfs/co1; echo "touch=$? upcalls=$(($(up up_sent) - s0))"
truncate -s 8192 /tmp/lfs/co1 && printf abc | dd of=/tmp/lfs/co1 conv=notrunc status=none
echo 2 >/proc/sys/vm/drop_caches
echo "excl: $(fsops open /tmp/lfs/co1 wcx | paste -sd" ")"
echo "existing: $(fsops open /tmp/lfs/co1 rc pread 0 3 close | paste -sd" ")"
echo 2 >/proc/sys/vm/drop_caches
echo "trunc: $(fsops open /tmp/lfs/co1 wct close stat /tmp/lfs/co1 | paste -sd" ")"
echo "rdonly: $(fsops open /tmp/lfs/co2 rc pwrite 0 1 65 pread 0 1 close stat /tmp/lfs/co2 | paste -sd" ")"')
t_like "$out" "touch=0 upcalls=2" "touch of a new name: 2 upcalls (CREATE_OPEN, CLOSE), not 4"
t_like "$out" "excl: error EEXIST" "  O_CREAT|O_EXCL of a name that exists (not in the dcache): EEXIST"
t_like "$out" "existing: ok sum 294 of 3 ok" "  O_CREAT of it opens the shelf that is there, bytes and all"
t_like "$out" "trunc: ok ok 0" "  O_CREAT|O_TRUNC of it truncates it (it was not created)"
t_like "$out" "rdonly: ok error EBADF sum 0 of 0 ok 0" \
	"  O_CREAT|O_RDONLY of a new name: created, opened read-only"
t_is "$(em_admin shelf.get '{"name":"co1"}' | jq -c '[.books, .activations]')" '[0,[]]' \
	"  co1 after the last close: no books (truncated to 0), active nowhere"
t_is "$(em_admin shelf.get '{"name":"co2"}' | jq -c '[.books, .activations]')" '[0,[]]' \
	"  co2: created, active nowhere"

# --- O_CREAT over a negative dentry: no LOOKUP first ------------------------
# A name found missing stays a negative dentry; an open(O_CREAT) of it is
# not revalidated first (attr_timeout=0: it always would be), the create
# asks. A name made since (here renamed on the librarian) is not created
# again: O_EXCL is EEXIST, O_CREAT opens it, O_CREAT|O_TRUNC truncates it.
out=$(n1 'up() { nlraw -p up_get | sed -n "s/^$1=//p"; }
mount -o remount,attr_timeout=0 /tmp/lfs || exit 1
neg=; for f in ng1 ng2 ng3; do stat /tmp/lfs/$f >/dev/null 2>&1 || neg="$neg $f"; done; echo "negative:$neg"
s0=$(up up_sent); touch /tmp/lfs/ng1; echo "touch=$? upcalls=$(($(up up_sent) - s0))"
truncate -s 8192 /tmp/lfs/ng1 && printf abc | dd of=/tmp/lfs/ng1 conv=notrunc status=none')
t_like "$out" "touch=0 upcalls=2" "touch of a name cached as missing: 2 upcalls, no LOOKUP first"
t_like "$out" "negative: ng1 ng2 ng3" "  ng1, ng2 and ng3 were looked up and found missing"
em_admin shelf.rename '{"name":"ng1","new_name":"ng2"}' >/dev/null
t_ok $? "the librarian renames ng1 to ng2 behind the node's back"
out=$(n1 'fsops() { $LFS_TOP/build/tests/fsops "$@"; }
echo "excl: $(fsops open /tmp/lfs/ng2 wcx | paste -sd" ")"
echo "existing: $(fsops open /tmp/lfs/ng2 rc pread 0 3 close | paste -sd" ")"')
t_like "$out" "excl: error EEXIST" "  O_CREAT|O_EXCL of ng2 (a negative dentry): EEXIST"
t_like "$out" "existing: ok sum 294 of 3 ok" "  O_CREAT of ng2 opens the shelf that is there"
em_admin shelf.rename '{"name":"ng2","new_name":"ng3"}' >/dev/null
t_ok $? "the librarian renames it to ng3"
out=$(n1 'fsops() { $LFS_TOP/build/tests/fsops "$@"; }
echo "trunc: $(fsops open /tmp/lfs/ng3 wct close stat /tmp/lfs/ng3 | paste -sd" ")"
mount -o remount,attr_timeout=1 /tmp/lfs')
t_like "$out" "trunc: ok ok 0" "  O_CREAT|O_TRUNC of ng3 (a negative dentry) truncates it"
t_is "$(em_admin shelf.get '{"name":"ng3"}' | jq -c '[.books, .activations]')" '[0,[]]' \
	"  ng3: no books, active nowhere"

n1 'umount /tmp/lfs && kill $(cat /tmp/agent.pid)' >/dev/null
machine_stop_node 1
t_ok $? "the node powers off with no kernel warning"
t_done
