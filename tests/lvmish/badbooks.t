#!/bin/bash
# LFS-TEST: host
# Bad books as lfsvol shows them (docs/LFSVOL.md, "Bad memory"): a node
# reports poisoned ranges (book.bad, as its agent does); `lfsvol fabric'
# lists every bad book with the shelf holding it, `lfsvol show' where in
# the shelf the bad bytes are, both with --json; `lfsvol book clear' is
# the admin's, refuses what is not IG:BOOK, and sends the book to zeroing.
# The agent's reporting from lfs.ko is zeroing.t's (VM).
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

lv_start_librarian 64M 8 2
t_ok $? "librarian started on 127.0.0.1:$PORT" || t_done
"$LIBRARIAN" genkey "$LV/keys/boss.key"
lv_stop_librarian
sed -i "s|^\tkeys_dir = .*|&\n\tadmin = { name = \"boss\"; key_file = \"$LV/keys/boss.key\"; };|" "$LV/lib.conf"
lv_run_librarian || t_done
C=$LV/lfs.conf
lv_conf "$C" "127.0.0.1:$PORT" "$LV/keys/node01.key"
printf 'librarian = "127.0.0.1:%s";\nnode = "boss";\nkey_file = "%s";\n' "$PORT" "$LV/keys/boss.key" >"$LV/admin.conf"
L() { "$LFSVOL" -c "$C" "$@"; }
A() { "$LFSVOL" -c "$LV/admin.conf" "$@"; }
node01() { "$LIBRARIAN" client --connect "127.0.0.1:$PORT" --node node01 --key "$LV/keys/node01.key" "$@"; }

L create a -s 128M -p RequestIG --ig 0 >/dev/null 2>&1
L create b -s 64M -p RequestIG --ig 1 >/dev/null 2>&1
second=$(L show a --json | jq -r '.[0].map[1][1]')
t_like "$second" '^[0-7]$' "setup: shelf a's second book is on IG 0 (book $second)"
t_run "node01 reports a range of a's second book and of the free book 0:7" \
	node01 book.bad "{\"ranges\":[[0,$second,4096,8192],[0,7,0,4096]]}"

# fabric
fab=$(L fabric --json)
t_is "$(jq -c '.[0].bad | map([.ig, .book, .offset, .length, .state, .shelf, .seq])' <<<"$fab")" \
	"[[0,$second,4096,8192,\"inuse\",\"a\",1],[0,7,0,4096,\"bad\",null,null]]" "fabric --json: node01's bad books, with the shelf and place"
out=$(L fabric)
t_like "$out" "bad memory" "fabric prints a table of bad memory"
t_like "$out" "0 +7 +0 +4096 +bad +- +-" "with the free book, on no shelf"
t_like "$out" "0 +$second +4096 +8192 +inuse +a +its book 1" "and the shelf's book"
t_like "$(L fabric -o node,bad --noheadings)" "^node01 +\\[\\{.*\"book\":7" "-o bad is a column"

# show
t_is "$(L show a --json | jq -c '.[0].bad')" \
	"[{\"seq\":1,\"ig\":0,\"book\":$second,\"offset\":4096,\"length\":8192,\"shelf_offset\":$((64 * 1048576 + 4096))}]" \
	"show --json: the bad range with its offset in the shelf"
t_like "$(L show a)" "bad memory:  8192 bytes at $((64 * 1048576 + 4096)) \(its book 1, IG 0 book $second\)" "show says which book and where"
t_like "$(L show b)" "bad memory:  -" "a shelf without bad memory says -"

# book clear: the admin's; bad arguments refused
lv_expect "a node may not clear a book" 8 "needs the admin identity" L book clear 0:7
lv_expect "a book must be IG:BOOK" 2 "Invalid book: \`0:x'" A book clear 0:x
lv_expect "nor a negative one" 2 "Invalid book: \`0:-1'" A book clear 0:-1
lv_expect "a book that is not bad is refused" 2 "book \\[0, 6\\] has no bad range" A book clear 0:6
t_is "$(node01 book.bad_list | jq -c '[.bad[] | .book]')" "[$second,7]" "the refusals changed nothing"
t_is "$(A book clear 0:7 --json | jq -c '[.command, .cleared]')" '["book",1]' "the admin clears 0:7 (--json)"
t_is "$(node01 book.bad_list | jq -c '[.bad[] | .book]')" "[$second]" "only a's book is still bad"
t_is "$(node01 zombie.list | jq -c .books)" "[[0,7]]" "0:7 waits to be zeroed (ZOMBIE), not FREE"
t_done
