#!/bin/bash
# LFS-TEST: vm once
# A backup of an LFS tree with tar keeps the policy attributes
# (docs/NAMESPACE.md, "Backup and restore"): files with policies, an IG
# request, user attributes and data, served by the real agent and librarian,
# archived with `tar --xattrs --xattrs-include=user.*', removed, then restored
# into a fresh mount: the policies, the IG request and the user attributes
# are back in the librarian's record, the data is the same, and the
# allocation (user.LFS.Interleave) is what the restored policy makes, since
# tar creates each file empty and sets its attributes before the data. The
# two names that are observations, not settings (user.LFS.Interleave,
# user.LFS.AllocationPolicyList), refuse a restore with EPERM: tar warns once
# per name and file and exits 0, and with the documented --xattrs-exclude
# options it is silent. Also: an InterleaveRequest given as a range (0-1),
# as lfs(5) allows. One node with two fabric devices (IG 0 and 1).
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

EM_DEVICES=2 EM_FENCE_ACTION=eio em_start 1 512M 16M >&2
t_ok $? "librarian and one node with two fabric devices up ($MACHINE_OUT)" || t_done

n1() {
	em_node 1 "export PATH=\$LFS_TOP/build/driver-tests:\$PATH
cd /tmp/lfs || exit 1
$1"
}
# rec NAME: the librarian's record: policy, lfs.igs, user attributes, books
rec() {
	em_admin shelf.get "{\"name\":\"$1\",\"limit\":0}" |
		jq -c '[.policy, .attrs["lfs.igs"], (.attrs | with_entries(select(.key | startswith("user."))))] + [.books]'
}
X='--xattrs --xattrs-include=user.*'
RO='--xattrs-exclude=user.LFS.Interleave --xattrs-exclude=user.LFS.AllocationPolicyList'
# lfs does not keep owners or modes (chown, chmod: EPERM), which tar as root restores
OWN='--no-same-owner --no-same-permissions'

out=$(em_node 1 'mkdir -p /tmp/lfs && mount -t lfs lfs /tmp/lfs && echo mounted')
t_is "$out" mounted "mount -t lfs lfs /tmp/lfs"

# --- the files ------------------------------------------------------------------
# a: RequestIG on IG 1, a user attribute, 2 books; b: LZAdescending, 1 book;
# c: the default policy (Spread), a user attribute with a space; d: RequestIG
# on IG 0-1 (a range), 2 books
out=$(n1 'touch a b c d &&
setfattr -n user.LFS.InterleaveRequest -v 1 a && setfattr -n user.LFS.AllocationPolicy -v RequestIG a &&
setfattr -n user.color -v blue a && pattern 1 17M >a &&
setfattr -n user.LFS.AllocationPolicy -v LZAdescending b && pattern 2 1M >b &&
setfattr -n user.note -v "x y" c && pattern 3 3M >c || exit 1
setfattr -n user.LFS.InterleaveRequest -v 0-1 d; echo "range: $?"
setfattr -n user.LFS.AllocationPolicy -v RequestIG d && truncate -s 17M d || exit 1
getfattr --absolute-names -n user.LFS.InterleaveRequest --only-values d; echo
getfattr --absolute-names -n user.LFS.Interleave --only-values d; echo')
t_is "$out" $'range: 0\n0,1\n0,1' \
	"InterleaveRequest 0-1 (a range, lfs(5)) is taken and kept as 0,1; d's books on IG 0, 1"
t_is "$(rec a)" '["RequestIG","1",{"user.color":"blue"},2]' "the librarian's record of a"

out=$(n1 'setfattr -n user.LFS.Interleave -v 0,0 a 2>&1; echo "rc=$?"
getfattr --absolute-names -n user.LFS.Interleave --only-values a')
t_like "$out" $'Operation not permitted\nrc=1\n1,1$' \
	"setfattr of user.LFS.Interleave: EPERM, the allocation unchanged (1,1)"

before=$(n1 'getfattr --absolute-names -d -m - a b c d')
sums=$(n1 'sha256sum a b c d; stat -c %s a b c d | paste -sd" "')
t_like "$sums" "$((17 << 20)) $((1 << 20)) $((3 << 20)) $((17 << 20))\$" "the sizes: 17, 1, 3, 17 MiB"
t_like "$before" 'user.LFS.Interleave="1,1"' "a's allocation: IG 1, 1"

# --- the backup, then the files removed and the filesystem mounted afresh --------
out=$(n1 "tar -cf /tmp/b.tar $X a b c d 2>&1; echo \"rc=\$?\"")
t_is "$out" "rc=0" "tar -cf $X: no warning"
out=$(n1 'rm a b c d && cd / && umount /tmp/lfs && mount -t lfs lfs /tmp/lfs && ls -A /tmp/lfs | wc -l')
t_is "$out" 0 "rm, umount, mount: an empty /tmp/lfs"
t_is "$(em_admin shelf.list | jq -c '[.shelves[].name]')" '[]' "  and the librarian has no shelf"

# --- restore with the documented options: silent --------------------------------------
out=$(n1 "tar -xf /tmp/b.tar $X $RO $OWN 2>&1; echo \"rc=\$?\"")
t_is "$out" "rc=0" "tar -xf $X $RO $OWN: exit 0, no message"
after=$(n1 'getfattr --absolute-names -d -m - a b c d')
t_is "$(grep -v '^user.LFS.Interleave=' <<<"$after")" "$(grep -v '^user.LFS.Interleave=' <<<"$before")" \
	"every attribute is back but the allocation (getfattr -d -m -)"
t_is "$(grep -E '^(# file|user.LFS.Interleave=)' <<<"$after" | sed -n '2p;4p;8p' | paste -sd' ')" \
	'user.LFS.Interleave="1,1" user.LFS.Interleave="1" user.LFS.Interleave="0,1"' \
	"the allocation is the restored policies': a on IG 1 (RequestIG), b on the last IG (LZAdescending), d on IG 0, 1"
t_is "$(rec a)" '["RequestIG","1",{"user.color":"blue"},2]' "the librarian's record of a is as before"
t_is "$(rec c)" '["Spread",null,{"user.note":"x y"},1]' "  and of c"
t_is "$(rec d)" '["RequestIG","0,1",{},2]' "  and of d"
t_is "$(n1 'sha256sum a b c d; stat -c %s a b c d | paste -sd" "')" "$sums" \
	"the data and the sizes are the same (sha256sum, stat)"

# --- restore without the exclusions: a warning per read-only name, exit 0 --------------
out=$(n1 "rm a b c d && tar -xf /tmp/b.tar $X $OWN 2>/tmp/x.err; echo \"rc=\$?\"
sed \"s/for file '[abcd]'/for file F/\" /tmp/x.err | sort | uniq -c | sed 's/^ *//'")
t_like "$out" "^rc=0" "tar -xf $X $OWN: exit 0"
t_is "$(sed 1d <<<"$out")" \
"4 tar: setxattrat: Cannot set 'user.LFS.AllocationPolicyList' extended attribute for file F: Operation not permitted
4 tar: setxattrat: Cannot set 'user.LFS.Interleave' extended attribute for file F: Operation not permitted" \
	"  and one warning for each file for each read-only name, nothing else"
t_is "$(n1 'getfattr --absolute-names -d -m - a b c d' | grep -v '^user.LFS.Interleave=')" \
	"$(grep -v '^user.LFS.Interleave=' <<<"$before")" "  every other attribute is back"

n1 'cd / && umount /tmp/lfs && kill $(cat /tmp/agent.pid)' >/dev/null
machine_stop_node 1
t_ok $? "the node powers off with no kernel warning"
t_done
