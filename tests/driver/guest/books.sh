#!/bin/bash
# Guest side of tests/driver/books.t: shelves of tens of thousands of books
# (book lists in several messages, in both directions), DAX and book size
# rules when mixing fabric devices, dumps that detect concurrent change.
# A 64 GiB null_blk device (no data, no DAX) supplies 32768 books of 2 MiB.
. "$LFS_TOP/tests/lib/tap.sh"
. "$LFS_TOP/tests/driver/guest/lib.sh"

t_run "insmod lfs.ko" insmod "$LFS_KO"
t_run "null_blk of 64 GiB" modprobe null_blk nr_devices=1 gb=64 irqmode=0
t_run "attach /dev/nullb0 as IG 2 with 2 MiB books" lfsctl attach /dev/nullb0 --ig 2 --book-size 2M
t_run "attach /dev/pmem0 as IG 0 with 2 MiB books" lfsctl attach /dev/pmem0 --ig 0 --book-size 2M
t_is "$(lfsctl fabric --json | jq -c '[.[] | [.ig, .books, .dax]]')" \
	"[[0,$(($(blockdev --getsize64 /dev/pmem0) >> 21)),true],[2,32768,false]]" "fabric: books and DAX per device"

# 20000 books: three messages to the kernel, several dump parts back.
dev=$(lfsctl create big 2:0-19999)
t_like "$dev" '^/dev/lfs[0-9]+$' "create with 20000 books: $dev"
sys=/sys/block/${dev#/dev/}/lfs
t_is "$(lfsctl list --json big | jq -c '.[0] | [.books, (.map | length), .map[0], .map[-1], .dax]')" \
	'[20000,20000,"2:0","2:19999",false]' "list --json shows all 20000 books in order"
t_is "$(wc -l <$sys/books) $(head -n 1 $sys/books) $(tail -n 1 $sys/books)" "20000 2:0 2:19999" \
	"sysfs books has 20000 lines"
t_is "$(cat $sys/dax)" 0 "a shelf on a non-DAX device is not DAX-capable"
t_is "$(blockdev --getsize64 $dev)" $((20000 << 21)) "capacity 20000 books"
t_is "$(nlraw shelf_get name=str:big books_start=u32:19999)" ok "get from the last book"
t_time "create"

t_run "extend by 12768 books (two messages)" lfsctl extend big 2:20000-32767
t_is "$(lfsctl list --json big | jq -c '.[0] | [.books, (.map | length), .map[20000], .map[-1]]')" \
	'[32768,32768,"2:20000","2:32767"]' "list shows 32768 books"
t_is "$(wc -l <$sys/books) $(tail -n 1 $sys/books)" "32768 2:32767" "sysfs books has 32768 lines"
t_is "$(lfsctl fabric --json | jq '.[1].books_used')" 32768 "every book of IG 2 is used"
out=$(lfsctl create more 2:5 2>&1)
t_like "$out" "book 2:5 is in shelf 'big'" "a book is in at most one shelf: $out"
t_run "shrink to 30000 books" lfsctl shrink big --books 30000
t_is "$(wc -l <$sys/books) $(lfsctl fabric --json | jq '.[1].books_used')" "30000 30000" \
	"shrink released 2768 books"
t_time "extend and shrink"

# DAX rules: a DAX shelf only takes DAX books; mixed shelves are not DAX.
dax=$(lfsctl create d 0:0-9)
t_is "$(cat /sys/block/${dax#/dev/}/lfs/dax)" 1 "shelf on pmem is DAX-capable"
before=$(nlraw state)
out=$(lfsctl extend d 2:30000 2>&1)
t_like "$out" "book 2:30000: interleave group 2 has no DAX, shelf 'd' is DAX-capable" \
	"extending a DAX shelf with a non-DAX book is refused: $out"
t_is "$(nlraw state)" "$before" "  ... and nothing changed"
mix=$(lfsctl create mix 0:10,2:30000)
t_is "$(cat /sys/block/${mix#/dev/}/lfs/dax) $(cat /sys/block/${mix#/dev/}/queue/dax)" "0 0" \
	"a shelf mixing DAX and non-DAX books is not DAX-capable"
t_run "remove mix" lfsctl remove mix
t_run "attach /dev/pmem1 as IG 1 with 4 MiB books" lfsctl attach /dev/pmem1 --ig 1 --book-size 4M
before=$(nlraw state)
out=$(lfsctl create odd 0:20,1:0 2>&1)
t_like "$out" "book 1:0: interleave group 1 has book size 4194304, shelf 'odd' uses 2097152" \
	"books of different sizes do not mix: $out"
t_is "$(nlraw state)" "$before" "  ... and nothing changed"

# Dumps: a change between two parts is flagged, and the tool retries.
t_is "$(nlraw dumpintr 0:30)" interrupted "a dump spanning a change carries NLM_F_DUMP_INTR"
( for i in $(seq 15); do lfsctl create churn 0:40-49 >/dev/null && lfsctl remove churn; done ) &
churn=$!
bad=0
for i in $(seq 5); do
	lfsctl list --json | jq -e 'all(.[]; (.map | length) == .books)' >/dev/null || bad=$((bad + 1))
done
wait $churn
t_ok $? "create/remove loop ran alongside the dumps"
t_is "$bad" 0 "every list during the churn was complete and consistent"
t_time "dumps"

for s in big d; do lfsctl remove $s; done
for f in /dev/nullb0 /dev/pmem0 /dev/pmem1; do lfsctl detach $f; done
t_is "$(nlraw state)" "" "everything removed and detached"
t_run "rmmod lfs" rmmod lfs
t_run "rmmod null_blk" rmmod null_blk
t_done
