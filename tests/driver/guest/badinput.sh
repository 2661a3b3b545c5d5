#!/bin/bash
# Guest side of tests/driver/badinput.t: every bad request gets its specific
# error and extack text and changes nothing (checked with dumps); callers
# without CAP_SYS_ADMIN get EPERM; a random-message fuzz loop ends without a
# WARN or oops (the harness fails the run on either); rmmod is clean after.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"
MB=$((1 << 20))

# refused DESC ERRNO REGEX CMD...: CMD prints "error ERRNO: message" and the
# driver's state (fabric and shelf dumps) is what it was before.
state=
refused() {
	local desc=$1 errno=$2 re=$3 out now
	shift 3
	[ -n "$state" ] || state=$(nlraw state)
	out=$("$@" 2>&1)
	[[ $out =~ ^error\ $errno:\ .*$re ]]
	t_ok $? "$desc" || t_diag "expected 'error $errno: ...$re', got '$out' from: $*"
	now=$(nlraw state)
	t_is "$now" "$state" "  ... and nothing changed"
	state=$now
}

t_run "insmod lfs.ko" insmod "$LFS_KO"
t_run "attach /dev/pmem0 as IG 0" lfsctl attach /dev/pmem0 --ig 0 --book-size 64M
nb=$(lfsctl fabric --json | jq '.[0].books')

A="attach path=str:/dev/pmem1"
refused "book size not a power of two" EINVAL "book size 3145728 is not a power of two" \
	nlraw $A ig=u32:1 book_size=u64:$((3 * MB))
refused "book size below 2 MiB" EINVAL "book size 1048576 is not a power of two from 2 MiB" \
	nlraw $A ig=u32:1 book_size=u64:$MB
refused "book size larger than the device" ENOSPC "larger than '/dev/pmem1'" \
	nlraw $A ig=u32:1 book_size=u64:$((2048 * MB))
refused "offset not 2 MiB-aligned" EINVAL "offset 1048576 is not a multiple of 2 MiB" \
	nlraw $A ig=u32:1 book_size=u64:$((64 * MB)) offset=u64:$MB
refused "offset past the device" ENOSPC "offset 2147483648 plus book size" \
	nlraw $A ig=u32:1 book_size=u64:$((64 * MB)) offset=u64:$((2048 * MB))
refused "interleave group already used" EEXIST "interleave group 0 is already attached" \
	nlraw $A ig=u32:0 book_size=u64:$((64 * MB))
refused "device already attached" EBUSY "'/dev/pmem0' is already attached as interleave group 0" \
	nlraw attach path=str:/dev/pmem0 ig=u32:4 book_size=u64:$((64 * MB))
refused "not a block device" ENOTBLK "'/dev/null' is not a block device" \
	nlraw attach path=str:/dev/null ig=u32:4 book_size=u64:$((64 * MB))
refused "no such device" ENOENT "'/dev/nothing' is not a block device" \
	nlraw attach path=str:/dev/nothing ig=u32:4 book_size=u64:$((64 * MB))
refused "interleave group out of range" ERANGE "integer out of range.*LFS_A_IG" \
	nlraw $A ig=u32:65536 book_size=u64:$((64 * MB))
refused "wrong type: IG as u64" EINVAL "invalid attribute length.*LFS_A_IG" \
	nlraw $A ig=u64:1 book_size=u64:$((64 * MB))
refused "wrong type: book size as u32" EINVAL "invalid attribute length.*LFS_A_BOOK_SIZE" \
	nlraw $A ig=u32:1 book_size=u32:$((64 * MB))
refused "wrong type: path not NUL-terminated" EINVAL "LFS_A_PATH" \
	nlraw attach path=raw:/dev/pmem1 ig=u32:1 book_size=u64:$((64 * MB))
refused "missing book size" EINVAL "missing attribute: book size" nlraw $A ig=u32:1
refused "missing interleave group" EINVAL "missing attribute: interleave group" \
	nlraw $A book_size=u64:$((64 * MB))
refused "missing path" EINVAL "missing attribute: device path" \
	nlraw attach ig=u32:1 book_size=u64:$((64 * MB))
refused "attribute the command does not take" EINVAL "LFS_A_NAME" \
	nlraw $A ig=u32:1 book_size=u64:$((64 * MB)) name=str:x
t_run "attach /dev/pmem1 as IG 1" lfsctl attach /dev/pmem1 --ig 1 --book-size 64M
t_like "$(lfsctl create a 0:0,1:0)" '^/dev/lfs' "shelf a created"
state=
t_time "attach cases"

C="create name=str:b"
refused "book out of range" ERANGE "book 0:$nb is beyond the end of interleave group 0 \\(books 0-$((nb - 1)))" \
	nlraw $C books=books:0:$nb
refused "book on an unattached IG" ENODEV "book 7:0: interleave group 7 is not attached" \
	nlraw $C books=books:0:3,7:0
refused "duplicate book" EINVAL "book 0:3 appears twice in shelf 'b'" nlraw $C books=books:0:3,1:3,0:3
refused "book already in another shelf" EBUSY "book 1:0 is in shelf 'a'" nlraw $C books=books:0:3,1:0
refused "duplicate name" EEXIST "shelf 'a' exists" nlraw create name=str:a books=books:0:3
refused "name with a space" EINVAL "shelf name 'a b' is not 1-64 characters" \
	nlraw create "name=str:a b" books=books:0:3
refused "name with a slash" EINVAL "shelf name 'x/y'" nlraw create name=str:x/y books=books:0:3
refused "name .." EINVAL "shelf name '..'" nlraw create name=str:.. books=books:0:3
refused "empty name" EINVAL "shelf name ''" nlraw create name=str: books=books:0:3
refused "name starting with -" EINVAL "shelf name '-x' is not 1-64 characters" \
	nlraw create name=str:-x books=books:0:3
refused "name starting with ." EINVAL "shelf name '.x'" nlraw create name=str:.x books=books:0:3
refused "name with +" EINVAL "shelf name 'a\+b'" nlraw create name=str:a+b books=books:0:3
refused "name of 65 characters" EINVAL "LFS_A_NAME" \
	nlraw create name=str:$(printf 'n%.0s' {1..65}) books=books:0:3
refused "null UUID" EINVAL "null UUID" nlraw $C uuid=hex:$(printf '0%.0s' {1..32}) books=books:0:3
refused "UUID of 15 bytes" ERANGE "LFS_A_UUID" nlraw $C uuid=hex:$(printf 'ab%.0s' {1..15}) books=books:0:3
refused "book list not a multiple of 8 bytes" EINVAL "book list length is not a non-zero multiple of 8 bytes" \
	nlraw $C books=u32:5
refused "empty book list" EINVAL "book list length" nlraw $C books=raw:
refused "wrong type: name as u32" EINVAL "LFS_A_NAME" nlraw create name=u32:1633771873 books=books:0:3
refused "missing book list" EINVAL "missing attribute: book list" nlraw $C
refused "missing name" EINVAL "missing attribute: shelf name" nlraw create books=books:0:3
refused "extend: no such shelf" ENOENT "no shelf 'zz'" nlraw extend name=str:zz books=books:0:3
refused "extend: book already in the shelf" EINVAL "book 0:0 appears twice in shelf 'a'" \
	nlraw extend name=str:a books=books:0:3,0:0
refused "extend: UUID not accepted" EINVAL "LFS_A_UUID" \
	nlraw extend name=str:a uuid=hex:$(printf 'ab%.0s' {1..16}) books=books:0:3
refused "extend: LFS_A_ZEROED not accepted" EINVAL "LFS_A_ZEROED|attribute" \
	nlraw extend name=str:a zeroed=flag: books=books:0:3
refused "shrink to 0 books" EINVAL "new book count 0 for shelf 'a' is not between 1 and 1" \
	nlraw shrink name=str:a nr_books=u32:0
refused "shrink to the current size" EINVAL "new book count 2 for shelf 'a'" \
	nlraw shrink name=str:a nr_books=u32:2
refused "shrink: wrong type" EINVAL "LFS_A_NR_BOOKS" nlraw shrink name=str:a nr_books=str:1
refused "shrink: missing count" EINVAL "missing attribute: new book count" nlraw shrink name=str:a
refused "remove: no such shelf" ENOENT "no shelf 'zz'" nlraw remove name=str:zz
refused "remove: missing name" EINVAL "missing attribute: shelf name" nlraw remove
refused "get: no such shelf" ENOENT "no shelf 'zz'" nlraw shelf_get name=str:zz
refused "get: first book past the end" ERANGE "first book 2 is beyond the 2 books of 'a'" \
	nlraw shelf_get name=str:a books_start=u32:2
refused "detach while shelves use it" EBUSY "interleave group 0 \\(/dev/pmem0\\) holds 1 books" \
	nlraw detach path=str:/dev/pmem0
refused "detach: not attached" ENODEV "interleave group 7 is not attached" nlraw detach ig=u32:7
refused "detach: path and IG both given" EINVAL "not both" nlraw detach path=str:/dev/pmem0 ig=u32:0
t_is "$(nlraw -p zero books=books:0:5,0:0)" $'books=0:5\nok' \
	"zero skips book 0:0 (in shelf 'a'), zeroes 0:5 and says which it zeroed"
refused "zero on an unattached IG" ENODEV "interleave group 9 is not attached" nlraw zero books=books:9:0
refused "check on an unattached IG" ENODEV "interleave group 9 is not attached" nlraw check books=books:0:4,9:0
refused "check without books" EINVAL "book list" nlraw check
refused "unknown command" EOPNOTSUPP "" nlraw 200

# A create whose last message never comes is abandoned when its socket closes.
t_is "$(nlraw $C books=books:0:3 more=flag:)" ok "create with LFS_A_MORE accepted, then the socket closes"
t_is "$(nlraw state)" "$state" "  ... and the unfinished create left nothing"
t_like "$(lfsctl create b 0:3)" '^/dev/lfs' "the abandoned books and name are free again"
t_run "remove b" lfsctl remove b
state=

t_time "shelf cases"

# lfsctl prints the kernel's words.
out=$(lfsctl create c 0:0 2>&1)
t_like "$out" "^lfsctl create: c: book 0:0 is in shelf 'a' \\(Device or resource busy\\)$" \
	"lfsctl shows the kernel's message: $out"

# Callers without CAP_SYS_ADMIN: nobody, and root without the capability.
asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nocap() { setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$@"; }
for who in asuser nocap; do
	refused "$who: attach" EPERM "needs CAP_SYS_ADMIN" \
		$who nlraw attach path=str:/dev/pmem2 ig=u32:2 book_size=u64:$((64 * MB))
	refused "$who: detach" EPERM "needs CAP_SYS_ADMIN" $who nlraw detach ig=u32:1
	refused "$who: create" EPERM "needs CAP_SYS_ADMIN" $who nlraw $C books=books:0:4
	refused "$who: extend" EPERM "needs CAP_SYS_ADMIN" $who nlraw extend name=str:a books=books:0:4
	refused "$who: shrink" EPERM "needs CAP_SYS_ADMIN" $who nlraw shrink name=str:a nr_books=u32:1
	refused "$who: remove" EPERM "needs CAP_SYS_ADMIN" $who nlraw remove name=str:a
	refused "$who: zero" EPERM "needs CAP_SYS_ADMIN" $who nlraw zero books=books:0:4
	refused "$who: check" EPERM "needs CAP_SYS_ADMIN" $who nlraw check books=books:0:4
	t_is "$($who "$LFSCTL" list --json | jq -r '.[].name')" a "$who: list still works"
done

t_time "EPERM cases"

# Random messages: as root (with fabrics and a shelf present), then unprivileged.
seed=$(date +%s)
t_diag "fuzz seed $seed"
out=$(nlfuzz "$seed" 10000 2>&1)
t_ok $? "10000 random messages as root: $out"
out=$(asuser nlfuzz "$((seed + 1))" 2000 2>&1)
t_ok $? "2000 random messages as nobody: $out"
t_like "$(dmesg | grep -c 'lfs.*\(BUG\|WARNING\)')" '^0$' "no WARN or BUG from lfs"

t_time "fuzz"

# Clean up whatever the fuzzer created, then unload.
for s in $(lfsctl list --json | jq -r '.[].name'); do lfsctl remove "$s"; done
for f in $(lfsctl fabric --json | jq -r '.[].path'); do lfsctl detach "$f"; done
t_is "$(nlraw state)" "" "everything removed and detached"
t_run "rmmod lfs" rmmod lfs
t_is "$(grep -cw ^lfs /proc/modules)" 0 "module gone"
t_done
