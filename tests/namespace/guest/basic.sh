#!/bin/bash
# Guest side of tests/namespace/basic.t: the user's story of the lfs
# filesystem on one node, served by the test upcall server. Book maps come
# in parts of 2 books and listings in parts of 3 entries (LFS_A_MORE).
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/namespace/guest/lib.sh"

t_run "lfs.ko, IG 0 and 1 of 2 MiB books" ns_setup
t_run "the test upcall server registers" up_start --map-batch 2 --list-batch 3
t_run "mount -t lfs lfs $L" ns_mount
t_like "$(grep " $L " /proc/mounts)" "lfs $L lfs rw.*,mode=0700,uid=0,gid=0,attr_timeout=1,upcall_timeout=30" \
	"/proc/mounts shows the options"

# --- who may look: uid=, gid=, mode= (root only by default) -----------------
as() { local u=$1 g=$2; shift 2; setpriv --reuid="$u" --regid="$g" --clear-groups "$@"; }
# kmsg_since MARK: the kernel's messages after line MARK of dmesg
kmsg_since() { dmesg | tail -n +$(($1 + 1)); }
t_run "touch $L/a" touch $L/a
t_is "$(stat -c '%s %A %U' $L/a)" "0 -rw------- root" "a: 0 bytes, mode 0600, owner root"
t_is "$(stat -c '%A %U %G' $L)" "drwx------ root root" "the directory: mode 0700, root's"
t_is "$(as 1000 1000 fsops open $L/a r)" "error EACCES" "user 1000 cannot open a for reading: EACCES"
t_like "$(fs as 1000 1000 ls $L)" "Permission denied" "  nor list the directory"
t_run "remount with uid=1000,gid=1000,mode=0750" mount -o remount,uid=1000,gid=1000,mode=0750 $L
t_like "$(grep " $L " /proc/mounts)" ",mode=0750,uid=1000,gid=1000,attr_timeout=1," "  /proc/mounts shows them"
t_is "$(stat -c '%A %u %g' $L $L/a | tr '\n' ' ')" "drwxr-x--- 1000 1000 -rw-r----- 1000 1000 " \
	"  the directory 0750, a (cached before) 0640, both 1000's"
printf 'the bytes of user 1000' >/tmp/mine
t_run "user 1000 creates u and writes it" as 1000 1000 dd if=/tmp/mine of=$L/u status=none
t_is "$(as 1000 1000 cat $L/u)" "the bytes of user 1000" "  and reads the same bytes back"
t_is "$(fs as 1001 1000 fsops open $L/u r close) $(as 1001 1000 fsops open $L/u w)" "ok ok error EACCES" \
	"group 1000 reads u, may not write it"
t_is "$(as 1001 1001 fsops open $L/u r)" "error EACCES" "user 1001 of group 1001 cannot open u"
t_like "$(fs as 1000 1000 chmod 666 $L/u) $(fs as 1000 1000 chown 1001 $L/u)" \
	"Operation not permitted.*Operation not permitted" "chmod, chown by the owner: EPERM"
m=$(dmesg | wc -l)
mkdir -p /tmp/lfs2
t_run "a second mount of the instance (no options)" mount -t lfs lfs /tmp/lfs2
t_like "$(grep " /tmp/lfs2 " /proc/mounts)" ",mode=0750,uid=1000,gid=1000," "  shows the instance's owner and mode"
t_like "$(kmsg_since $m)" "lfs: already mounted: uid=, gid= and mode= are the instance's" "  and the kernel says so"
t_run "  umount it" umount /tmp/lfs2
for bad in uid=-5 uid=abc gid=4294967295 mode=8888 mode=77777; do
	m=$(dmesg | wc -l)
	t_fails "mount -o $bad is refused" mount -t lfs -o $bad lfs /tmp/lfs2
	t_like "$(kmsg_since $m)" "lfs: ${bad%=*} '${bad#*=}' " "  the kernel names the value '${bad#*=}'"
done
t_fails "remount with uid=1,mode=8888 is refused" mount -o remount,uid=1,mode=8888 $L
t_like "$(grep " $L " /proc/mounts)" ",mode=0750,uid=1000,gid=1000," "  and changes nothing"
t_is "$(grep -c " /tmp/lfs2 " /proc/mounts)" 0 "nothing is mounted on /tmp/lfs2"
t_run "user 1000 removes u" as 1000 1000 rm $L/u
t_run "remount with uid=0,gid=0,mode=0700" mount -o remount,uid=0,gid=0,mode=0700 $L
t_is "$(stat -c '%A %U' $L $L/a | tr '\n' ' ')" "drwx------ root -rw------- root " "  root's alone again"

# --- HPE's shell session -------------------------------------------------
t_run "setfattr user.LFS.AllocationPolicy LocalNode" \
	setfattr -n user.LFS.AllocationPolicy -v LocalNode $L/a
t_like "$(fs setfattr -n user.LFS.AllocationPolicy -v NoSuchPolicy $L/a)" "Invalid argument" \
	"a bad policy is EINVAL"
t_is "$(getfattr 2>/dev/null --only-values -n user.LFS.AllocationPolicy $L/a)" LocalNode \
	"  and changes nothing"
t_run "truncate -s 6M (three books)" truncate -s 6M $L/a
t_is "$(stat -c %s $L/a)" 6291456 "a: exactly 6 MiB"
t_is "$(stat -c %b $L/a)" 12288 "  with 6 MiB of books (st_blocks)"
t_is "$(getfattr 2>/dev/null --only-values -n user.LFS.Interleave $L/a)" "0,0,0" \
	"user.LFS.Interleave: three books on the local IG 0"
d=$(getfattr -d $L/a 2>/dev/null)
t_like "$d" 'user.LFS.AllocationPolicy="LocalNode"' "getfattr -d: the policy"
t_like "$d" 'user.LFS.Interleave="0,0,0"' "getfattr -d: the allocation"
t_like "$d" 'user.LFS.AllocationPolicyList="RandomBooks,LocalNode,.*,Spread"' \
	"getfattr -d: the policy list"
t_run "touch b; RequestIG with InterleaveRequest 1" sh -c "touch $L/b &&
	setfattr -n user.LFS.AllocationPolicy -v RequestIG $L/b &&
	setfattr -n user.LFS.InterleaveRequest -v 1 $L/b && truncate -s 5M $L/b"
t_is "$(getfattr 2>/dev/null --only-values -n user.LFS.Interleave $L/b)" "1,1,1" \
	"RequestIG gets exactly the IGs asked for"
t_like "$(fs setfattr -n user.LFS.InterleaveRequest -v 0-x $L/b)" "Invalid argument" \
	"a bad IG list is EINVAL"
t_like "$(fs setfattr -n user.LFS.Interleave -v 0 $L/b)" "Operation not permitted" \
	"user.LFS.Interleave is read-only (EPERM)"
t_is "$(getfattr 2>/dev/null --only-values -n user.LFS.AllocationPolicyDefault $L)" RandomBooks \
	"the directory's AllocationPolicyDefault is the server's default"
t_run "setfattr AllocationPolicyDefault LocalNode on the directory" \
	setfattr -n user.LFS.AllocationPolicyDefault -v LocalNode $L
t_like "$(grep " $L " /proc/mounts)" "policy=LocalNode" "  becomes the mount's policy"
t_run "setfattr user.color blue" setfattr -n user.color -v blue $L/b
t_is "$(getfattr 2>/dev/null --only-values -n user.color $L/b)" blue "user.color reads back"
t_run "setfattr -x user.color" setfattr -x user.color $L/b
t_like "$(fs getfattr -n user.color $L/b)" "No such attribute" "  and is gone"

# --- data --------------------------------------------------------------------
dd if=/dev/urandom of=/tmp/data bs=1000 count=5243 status=none
t_run "cp 5243000 bytes to a new file" cp /tmp/data $L/c
t_run "  reads back identical" cmp /tmp/data $L/c
t_is "$(stat -c %s $L/c)" 5243000 "  ls -l size exact: 5243000"
t_is "$(getfattr 2>/dev/null --only-values -n user.LFS.AllocationPolicy $L/c)" LocalNode \
	"  made by the mount's policy"
t_run "dd 8 MiB, O_DIRECT, 1 MiB writes" \
	dd if=/dev/urandom of=/tmp/data2 bs=1M count=8 status=none
t_run "  to $L/d" dd if=/tmp/data2 of=$L/d bs=1M oflag=direct status=none
t_run "  O_DIRECT reads back identical, up to the end" \
	sh -c "dd if=$L/d bs=1M iflag=direct status=none | cmp /tmp/data2"
t_is "$(ls -l $L | awk '$9 == "a" || $9 == "c" || $9 == "d" {print $9, $5}' | tr '\n' ' ')" \
	"a 6291456 c 5243000 d 8388608 " "ls -l: exact sizes"
t_is "$(ls $L | tr '\n' ' ')" "a b c d " "ls lists every file (listing in parts)"
t_is "$(fs fsops open $L/c r pread 5242000 4096)" "ok sum $(tail -c 1000 /tmp/data | od -An -tu1 -v |
	tr -s ' ' '\n' | awk '{s += $1} END {print s}') of 1000" "a read past the end is short"

# --- errnos of the namespace ----------------------------------------------
t_like "$(fs mkdir $L/x)" "Operation not permitted" "mkdir: EPERM"
t_like "$(fs ln -s a $L/x)" "Operation not permitted" "symlink: EPERM"
t_like "$(fs ln $L/a $L/x)" "Operation not permitted" "link: EPERM"
t_like "$(fs mkfifo $L/x)" "Operation not permitted" "mkfifo: EPERM"
t_like "$(fs mknod $L/x b 7 0)" "Operation not permitted" "mknod: EPERM"
t_like "$(fs chmod 600 $L/a)" "Operation not permitted" "chmod: EPERM"
t_like "$(fs chown 1 $L/a)" "Operation not permitted" "chown: EPERM"
t_run "touch -d sets the times" touch -d '2020-01-02 03:04:05' $L/a
t_is "$(fs touch $L/.hidden)" "touch: cannot touch '$L/.hidden': Invalid argument" \
	"a name starting with . is EINVAL"
t_is "$(fs touch "$L/a+b")" "touch: cannot touch '$L/a+b': Invalid argument" "a+b is EINVAL"
long=$(printf 'n%.0s' {1..65})
t_like "$(fs touch $L/$long)" "File name too long" "a 65-character name is ENAMETOOLONG"
t_is "$(fs fsops open $L/a rwcx)" "error EEXIST" "O_CREAT|O_EXCL of an existing file: EEXIST"
t_is "$(fs fsops open $L/nope r)" "error ENOENT" "open of a missing file: ENOENT"

# --- rename ---------------------------------------------------------------
t_run "mv c e" mv $L/c $L/e
t_run "  e holds c's data" cmp /tmp/data $L/e
t_is "$(fs fsops rename $L/e $L/a noreplace)" "error EEXIST" "RENAME_NOREPLACE onto a: EEXIST"
t_is "$(fs fsops rename $L/e $L/a exchange)" "error EINVAL" "RENAME_EXCHANGE: EINVAL"
t_is "$(fs fsops rename $L/e $L/f whiteout)" "error EINVAL" "RENAME_WHITEOUT: EINVAL"
t_is "$(fs fsops rename $L/e $L/f noreplace)" "ok" "RENAME_NOREPLACE to a free name"
t_run "mv f over b (b is destroyed)" mv -f $L/f $L/b
t_is "$(ls $L | tr '\n' ' ')" "a b d " "  the listing agrees"
t_run "  b holds c's data" cmp /tmp/data $L/b

# --- rm while open ----------------------------------------------------------
mkfifo /tmp/hold
fsops open $L/d r wait </tmp/hold >/tmp/hold.out &
hold=$!
exec 7>/tmp/hold
t_run "d is held open" wait_for 120 grep -q waiting /tmp/hold.out
t_like "$(fs rm $L/d)" "Device or resource busy" "rm while open: EBUSY"
t_is "$(fs fsops rename $L/a $L/d none)" "error EBUSY" "rename over an open file: EBUSY"
t_is "$(up_state nr_active)" 1 "one file active"
exec 7>&-
wait $hold
t_run "rm after the close" rm $L/d
t_is "$(ls $L | tr '\n' ' ')" "a b " "d is gone"

# --- mappings --------------------------------------------------------------
t_run "fallocate 32 MiB (16 books)" fallocate -l 32M $L/m
t_is "$(fs fsops open $L/m rw mmap 4096 sync store 0 7 munmap close)" "ok ok ok ok ok" \
	"MAP_SHARED_VALIDATE|MAP_SYNC mapping allowed"
pmd=$(pmd_faults mapsync --touch $L/m 32M)
t_ok "$([ "${pmd:-0}" -gt 0 ]; echo $?)" "PMD faults over 32 MiB: $pmd"
t_is "$(fs fsops open $L/m rw pwrite 4096 1 3 mmap 8192 private store 4096 9 load 4096 \
	pread 4096 1 munmap close)" "ok ok ok ok 9 sum 3 of 1 ok ok" \
	"a private mapping copies on write; the file keeps its byte"
t_run "truncate -s 4196 $L/s" truncate -s 4196 $L/s
t_is "$(fs fsops open $L/s rw mmap 12288 shared store 4100 6 store 5000 7 load 8192)" \
	"ok ok ok ok SIGBUS" "a fault past the end of the file: SIGBUS"
t_is "$(fs fsops open $L/s rw pread 4096 4096)" "ok sum 6 of 100" \
	"  the mapped store inside the size landed"
t_run "truncate -s 12288" truncate -s 12288 $L/s
t_is "$(fs fsops open $L/s r pread 4196 8192)" "ok sum 0 of 8092" \
	"  what the mapping stored past the old end reads as zeroes"

# Growth by writes.
t_run "touch g; write 1 MiB at 5 MiB" sh -c "touch $L/g &&
	dd if=/tmp/data2 of=$L/g bs=1M seek=5 count=1 conv=notrunc status=none"
t_is "$(stat -c %s $L/g) $(getfattr 2>/dev/null --only-values -n user.LFS.Interleave $L/g)" "6291456 0,0,0" \
	"the write grew g to 6 MiB, three books"
t_is "$(fs fsops open $L/g r pread 0 5242880)" "ok sum 0 of 5242880" "  the hole reads as zeroes"
t_run "  the data is there" cmp <(head -c 1M /tmp/data2) <(tail -c 1M $L/g)

# Shrinking a mapped file.
fsops open $L/m rw mmap 4096 shared wait </tmp/hold >/tmp/hold.out &
hold=$!
exec 7>/tmp/hold
t_run "m is held open and mapped" wait_for 120 grep -q waiting /tmp/hold.out
t_like "$(fs truncate -s 1M $L/m)" "Device or resource busy" "shrinking a mapped file: EBUSY"
t_is "$(stat -c %s $L/m)" 33554432 "  its size stays"
t_run "growing it is fine" truncate -s 40M $L/m
exec 7>&-
wait $hold
t_run "shrinking it after the munmap" truncate -s 1M $L/m
t_is "$(stat -c %s $L/m) $(stat -c %b $L/m)" "1048576 4096" "  1 MiB in one book"
t_is "$(fs fsops open $L/m rw fallocate 1 0 4096)" "ok error EOPNOTSUPP" "fallocate KEEP_SIZE: EOPNOTSUPP"
t_is "$(fs fsops open $L/m rw fallocate 0 0 3000000)" "ok ok" "fallocate mode 0 grows"
t_is "$(stat -c %s $L/m)" 3000000 "  to 3000000 bytes"

# --- shelves of the same name as block devices -----------------------------
t_like "$(lfsctl create blk 1:200 2>&1)" "^/dev/lfs" "a block-device shelf 'blk' on this node"
t_run "touch $L/blk (the catalogue's)" touch $L/blk
t_is "$(fs fsops open $L/blk r)" "error EBUSY" "opening it through the filesystem: EBUSY"
fsops open $L/a r wait </tmp/hold >/tmp/hold.out &
hold=$!
exec 7>/tmp/hold
t_run "a is held open" wait_for 120 grep -q waiting /tmp/hold.out
t_like "$(lfsctl create a 1:201 2>&1)" "'a' is open through the lfs filesystem on this node" \
	"SHELF_CREATE of a name open here: EBUSY"
t_like "$(lfsctl create x 0:0 2>&1)" "book 0:0 is in shelf '\(a file open through the lfs filesystem\)'" \
	"a book of the open file is refused to a shelf"
t_like "$(lfsctl detach /dev/pmem0 2>&1)" "holds [0-9]+ books" "the fabric under an open file stays attached"
exec 7>&-
wait $hold
t_run "remove blk" lfsctl remove blk

# --- revalidation ------------------------------------------------------------
# A remount drops the dentries nobody uses (the VFS shrinks the cache), so
# "within attr_timeout" is checked after setting a long one, and expiry
# with a short one, waited for without a remount between.
t_run "remount with attr_timeout=3600" mount -o remount,attr_timeout=3600 $L
t_like "$(grep " $L " /proc/mounts)" "attr_timeout=3600,upcall_timeout=30,policy=LocalNode" \
	"  the options changed"
stat $L/a >/dev/null
up_fault "errno LOOKUP 2"
t_run "within attr_timeout a lookup is not asked again" stat $L/a
t_run "remount (the name is forgotten)" mount -o remount,attr_timeout=3600 $L
t_like "$(fs stat $L/a)" "No such file" "the next lookup asks: a shelf gone from the catalogue is gone"
up_fault
t_like "$(fs stat $L/a)" "No such file" "  and stays gone within attr_timeout (negative dentry)"
t_run "remount with attr_timeout=1" mount -o remount,attr_timeout=1 $L
t_run "  it is back" stat $L/a
up_fault "errno LOOKUP 2"
t_run "after attr_timeout, a cached name of a shelf gone is gone" \
	wait_for 60 sh -c "stat $L/a 2>&1 | grep -q 'No such file'"
up_fault
t_run "  and a negative name is asked again after attr_timeout" wait_for 60 stat $L/a
t_run "remount with attr_timeout=0" mount -o remount,attr_timeout=0 $L
up_fault "errno LOOKUP 2"
t_like "$(fs stat $L/a)" "No such file" "  every lookup asks"
up_fault

# --- O_CREAT over a negative dentry of a name that exists -------------------
# CREATE_OPEN of a name made since it was cached as missing is EEXIST: the
# file is opened, not marked created (ESTALE, and the VFS walks again):
# O_TRUNC truncates it.
t_run "a file of bytes" sh -c "truncate -s 4096 $L/ne && printf xyz | dd of=$L/ne conv=notrunc status=none"
t_run "remount with attr_timeout=3600" mount -o remount,attr_timeout=3600 $L
up_fault "errno LOOKUP 2"
t_like "$(fs stat $L/ne)" "No such file" "  a LOOKUP says it is missing: a negative dentry"
up_fault
t_is "$(fs fsops open $L/ne rc pread 0 3 close)" "ok sum 363 of 3 ok" \
	"O_CREAT of it opens the file that is there"
up_fault "errno LOOKUP 2"
t_run "  forgotten, missing again" sh -c "mount -o remount,attr_timeout=3600 $L; ! stat $L/ne"
up_fault
t_is "$(fs fsops open $L/ne wct close stat $L/ne)" "ok ok 0" "O_CREAT|O_TRUNC of it truncates it"
t_is "$(fs fsops open $L/ne wcx)" "error EEXIST" "O_CREAT|O_EXCL of it: EEXIST"
t_run "rm ne" rm $L/ne
t_run "remount with attr_timeout=0" mount -o remount,attr_timeout=0 $L

# A new file's inode is a file, whatever the inode cache reuses: lfs's
# inodes come from a slab, where a freed directory's mode stayed behind
# and made the next mount's new file a directory ("Is a directory").
# Mount and umount again and again so that freed inodes are reused.
bad=
for i in $(seq 12); do
	# (ls: an upcall's round trip between mount and touch, time for the
	# freed inodes' RCU grace period to end and the slab to hand them out)
	umount $L && ns_mount && ls $L >/dev/null && touch $L/reuse$i $L/reuse$i.b || { bad="mount $i: umount, mount or touch failed"; break; }
	t=$(stat -c %F $L/reuse$i $L/reuse$i.b | tr '\n' ,)
	[ "$t" = "regular empty file,regular empty file," ] || { bad="mount $i: $t"; break; }
	rm $L/reuse$i $L/reuse$i.b || { bad="mount $i: rm failed"; break; }
	ls $L >/dev/null
done
t_is "${bad:-none}" none "12 mounts in a row: every new file is a regular file"
t_like "$(df -B1 $L | tail -1)" "^lfs +1[0-9]{9} " "df: the server's space"

# --- poisoned memory (docs/CXL.md "Poison") ---------------------------------
# One page of a file poisoned with the kernel's injector: that page fails
# (EIO, SIGBUS), a read across it stops short, the pages beside it read back.
P=$L/poisoned PG=4096 N=700
t_run "a file of 2 books written" sh -c "modprobe hwpoison_inject && pattern 9 4M >$P"
pfn=$(poison pfn $P $((N * PG)))
# (the write may fail: with the file closed, the page has no mapping for the
# kernel's generic handling to lock, EBUSY; the driver was told before that)
echo "$pfn" 2>/dev/null >/sys/kernel/debug/hwpoison/corrupt-pfn
t_like "$(dmesg | grep 'memory failure at book' | tail -n 1)" "pages [0-9]+-[0-9]+ of" \
	"corrupt-pfn $pfn (page $N of the file): the driver logged it"
t_like "$(fs dd if=$P of=/dev/null bs=$PG skip=$N count=1 iflag=direct)" \
	"Input/output error" "O_DIRECT read of page $N: EIO"
t_like "$(fs dd if=$P of=/dev/null bs=$PG skip=$N count=1)" "Input/output error" \
	"buffered read of page $N: EIO"
t_is "$(fs poison touch $P $((N * PG)))" SIGBUS "a mapping of page $N: SIGBUS"
t_is "$(dd if=$P bs=$((3 * PG)) skip=$(((N - 1) * PG)) iflag=skip_bytes count=1 2>/dev/null | wc -c)" \
	$PG "a read of pages $((N - 1))-$((N + 1)) returns page $((N - 1)) alone"
t_run "pages $((N - 1)) and $((N + 1)) read back their bytes (O_DIRECT, mapped)" bash -c "
	for n in $((N - 1)) $((N + 1)); do
		cmp <(dd if=$P bs=$PG skip=\$n count=1 iflag=direct status=none) \
			<(pattern 9 $PG \$((n * $PG))) && poison touch $P \$((n * $PG)) || exit 1
	done"
t_is "$(lfsctl fabric --json | jq -c '[.[].bad[] | [.offset, .length]]')" \
	"[[$(((N - 512) * PG)),$PG]]" "the range is listed, in the file's second book"
t_run "rm the file" rm $P
t_fails "rmmod while mounted is refused" rmmod lfs
ns_check_idle "the end"
t_run "umount" umount $L
up_stop
t_run "rmmod lfs" sh -c "$LFSCTL detach /dev/pmem0 && $LFSCTL detach /dev/pmem1 && rmmod lfs"
t_done
