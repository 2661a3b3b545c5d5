#!/bin/bash
# LFS-TEST: host alone
# Every documented lfsvol error, on the host: the exit code of lfsvol(8) and a
# message that names the bad value. A real librarian runs on loopback; lfs.ko
# is not loaded on the host, which is itself one of the documented errors.
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

lv_start_librarian 64M 8 2
t_ok $? "librarian started on 127.0.0.1:$PORT" || t_done
C=$LV/lfs.conf
lv_conf "$C" "127.0.0.1:$PORT" "$LV/keys/node01.key" "agent = { state_dir = \"$LV/state\"; };"
L() { "$LFSVOL" -c "$C" "$@"; }

lv_expect "create works (sanity)" 0 "rounded up to 2 books of 64 MiB" L create db -s 100M

# fabric: per node counts, and a usage bar on a terminal only (2 of 16 books used)
t_is "$(L fabric --json | jq -c '.[0] | [.node, .books, .free, .used, .zombie]')" '["node01",16,14,2,0]' "fabric --json counts per node"
t_like "$(script -qec "$LFSVOL -c $C fabric" /dev/null)" 'node01 .* \[###\.{27}\]' "fabric draws a usage bar on a terminal"
t_like "$(L fabric | tail -n 1)" '^node01 +rack1 +enc1 +node01 +online +16 +14 +2 +0$' "and none when piped"

# bad sizes (exit 2), each naming the value
lv_expect "SIZE without a unit" 2 "SIZE \`10' has no unit" L create x -s 10
lv_expect "SIZE with a fraction" 2 "invalid unit \`.5G' in SIZE \`1.5G'" L create x -s 1.5G
lv_expect "SIZE zero" 2 "SIZE \`0M' is zero" L create x -s 0M
lv_expect "SIZE overflowing 64 bits" 2 "SIZE \`99999999999999999999G' is too large" L create x -s 99999999999999999999G
lv_expect "SIZE with a bad unit" 2 "invalid unit \`X'" L create x -s 12X
lv_expect "SIZE beyond the shelf book limit" 2 "SIZE \`2000000b' is more than" L create x -s 2000000b
lv_expect "resize with a doubled sign" 2 "invalid SIZE \`\+-1M'" L resize db -s +-1M
lv_expect "shrinking to nothing" 2 "would leave shelf \`db' \(2 books\) with no book" L resize db -s -1G
lv_expect "more books than the fabric has" 4 "librarian: .*" L create big -s 100b
t_is "$(L list --json | jq -r '[.[].name] | join(",")')" "db" "failed creates left no shelf behind"

# unknown shelf (exit 6)
lv_expect "show of an unknown shelf" 6 "no shelf named 'nope'" L show nope
lv_expect "remove of an unknown shelf" 6 "no shelf named 'nope'" L remove nope
lv_expect "resize of an unknown shelf" 6 "no shelf named 'nope'" L resize nope -s +1b
lv_expect "attr of an unknown shelf" 6 "no shelf named 'nope'" L attr list nope
lv_expect "invalid shelf name" 2 "shelf name 'a/b' may contain only letters" L create a/b -s 1M

# policy typo (exit 2 on the command line, 3 in lfs.conf)
lv_expect "policy typo on the command line" 2 "unknown policy \`Sprad'; did you mean \`Spread'\?" L create x -s 1M -p Sprad
lv_conf "$LV/typo.conf" "127.0.0.1:$PORT" "$LV/keys/node01.key" "" "default_policy = \"LocalNod\";"
lv_expect "policy typo in lfs.conf names file:line" 3 "$LV/typo.conf:6: unknown policy \`LocalNod'; did you mean \`LocalNode'\?" "$LFSVOL" -c "$LV/typo.conf" list

# bad config lines (exit 3), file:line
printf 'node = "node01";\n\nlibrarian = 127.0.0.1:%s;\n' "$PORT" >"$LV/syntax.conf"
lv_expect "syntax error names file:line" 3 "$LV/syntax.conf:3: syntax error" "$LFSVOL" -c "$LV/syntax.conf" list
printf 'librarian = "127.0.0.1:%s";\nfabric = (\n  { ig = 0; device = "/dev/pmem0"; },\n  { ig = 0; numa_node = 1; }\n);\n' "$PORT" >"$LV/dup.conf"
lv_expect "IG mapped twice names both lines" 3 "$LV/dup.conf:4: IG 0 is mapped twice \(also at line 3\)" "$LFSVOL" -c "$LV/dup.conf" list
lv_expect "missing -c file" 3 "/nonexistent/lfs.conf: cannot read" "$LFSVOL" -c /nonexistent/lfs.conf list
lv_expect "LFS_CONF is honoured" 3 "$LV/syntax.conf:3:" env LFS_CONF="$LV/syntax.conf" "$LFSVOL" list

# librarian unreachable: a refused port, and a librarian that does not answer
dead=$(lv_free_port)
start=$(date +%s%N)
lv_expect "librarian refusing connections" 4 "cannot reach the librarian at 127.0.0.1:$dead" L --librarian "127.0.0.1:$dead" list
kill -STOP "$LPID"
start=$(date +%s%N)
lv_expect "librarian not answering" 4 "gave up after at most 2 s" L list
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "$LPID"
[ "$ms" -le 4000 ]
t_ok $? "a silent librarian gives up within connect_timeout (2 s) + 2 s: took $ms ms"
lv_conf "$LV/nokey.conf" "127.0.0.1:$PORT" "$LV/keys/nosuch.key"
lv_expect "missing key file names it" 3 "key_file \`$LV/keys/nosuch.key': No such file" "$LFSVOL" -c "$LV/nokey.conf" list
lv_expect "--librarian overrides lfs.conf" 0 "^db " L --librarian "127.0.0.1:$PORT" list

# the driver not loaded (exit 5): lfs.ko is never loaded on the host
if [ -d /sys/module/lfs ]; then
	t_diag "lfs.ko is loaded on this host; the not-loaded case runs in the VM test only"
elif [ "$(id -u)" = 0 ]; then
	lv_expect "driver not loaded" 5 "lfs kernel module is not loaded.*modprobe lfs" L activate db
fi

# not root (exit 8)
if [ "$(id -u)" = 0 ]; then
	lv_expect "not root" 8 "activate needs root" setpriv --reuid=65534 --regid=65534 --clear-groups "$LFSVOL" -c "$C" activate db
else
	lv_expect "not root" 8 "activate needs root" L activate db
fi

# usage (exit 2) and help (exit 0)
lv_expect "unknown command" 2 "invalid command \`frobnicate'" L frobnicate
lv_expect "unknown attr verb" 2 "invalid attr verb \`del'" L attr del db k
lv_expect "activate without a name" 2 "usage: lfsvol activate" L activate
for c in create remove resize rename copy list show activate deactivate attr fabric scrub status agent; do
	lv_expect "$c --help" 0 "^Usage: lfsvol $c" L $c --help
done
# the version is the release's (VERSION), as the librarian's is
v=$(cat VERSION)
lv_expect "--version" 0 "^lfsvol ${v//./\\.}$" L --version
lv_expect "-V" 0 "^lfsvol ${v//./\\.}$" L -V
t_is "$(lvmish/lfsctl/lfsctl --version)" "lfsctl $v" "lfsctl --version"
t_is "$(lvmish/lfsctl/lfsctl -V)" "lfsctl $v" "lfsctl -V"

# remove guard when the shelf cannot be probed here, then forced
lv_expect "remove refused when no filesystem check is possible" 7 "cannot check shelf \`db'.*with -f" L remove db
lv_expect "remove -f" 0 "removed shelf db; 2 books wait to be zeroed" L remove db -f
t_is "$("$LIBRARIAN" client --connect "unix:$LV/sock" stats | jq .books.zombie)" 2 "the removed shelf's books are ZOMBIE"
t_done
