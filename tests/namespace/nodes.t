#!/bin/bash
# LFS-TEST: vm once
# The Library File System on two nodes of one fabric, each served by its
# own agent, both mounting it on /tmp/lfs (the guests' / is read-only): data
# written on one node read on the other; one file mapped MAP_SYNC on both at
# once, a counter stored on one seen advancing on the other, both ways; rm
# of a file open on the other node refused (EBUSY) with nothing lost, then
# done once it is closed; mv seen on the other node within attr_timeout;
# `lfsvol activate' of a file open through the filesystem on the other node
# refused, naming that node, and an open of a shelf active as a block device
# on the other node refused (EBUSY); last, with the librarian restarted
# with share = "ro" and a node quota, a write to the other node's file is
# EACCES and a growth over the quota EDQUOT, nothing changed. One boot of
# the two nodes for it all.
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

EM_FENCE_ACTION=eio em_start 2 512M 16M >&2
t_ok $? "librarian and two nodes up ($MACHINE_OUT)" || t_done

# n I 'commands': in node I, with wait_for SECONDS CMD... (a bounded poll)
# and the namespace test helpers (shmcount) on PATH
n() {
	em_node "$1" "wait_for() {
	local end=\$(( \$(date +%s%N) / 1000000 + \$1 * 1000 ))
	shift
	until \"\$@\"; do
		[ \$(( \$(date +%s%N) / 1000000 )) -lt \$end ] || return 1
		sleep 0.1
	done
}
export PATH=\$LFS_TOP/build/tests:\$PATH
$2"
}
n1() { n 1 "$1"; }
n2() { n 2 "$1"; }

# hold I FILE REDIR [TAG]: a shell in node I holds FILE open (REDIR '<'
# read-only, '<>' writable) until release I [TAG]; it says "held" once the
# open succeeded. TAG tells two holders on one node apart.
hold() {
	n "$1" "rm -f /tmp/held$4 /tmp/release$4 && mkfifo /tmp/release$4
setsid bash -c 'exec 3$3$2 && echo held >/tmp/held$4 && read -r _ </tmp/release$4' \
	</dev/null >/tmp/holder$4.log 2>&1 &
echo \$! >/tmp/holder$4.pid
wait_for 30 test -e /tmp/held$4 || { echo \"the holder of $2 did not open it:\"; cat /tmp/holder$4.log; exit 1; }"
}
release() {
	n "$1" "timeout 10 sh -c 'echo go >/tmp/release$2' &&
wait_for 10 sh -c '! kill -0 \$(cat /tmp/holder$2.pid) 2>/dev/null'"
}
# the activations of shelf NAME at the librarian: [["node1","shared"]]
activations() {
	em_admin shelf.get "{\"name\":\"$1\",\"limit\":0}" | jq -c '[.activations[] | [.node, .mode]]'
}

out=$(n1 'mkdir -p /tmp/lfs && mount -t lfs lfs /tmp/lfs && grep -c " /tmp/lfs lfs " /proc/mounts')
t_is "$out" 1 "node1: mount -t lfs lfs /tmp/lfs"
out=$(n2 'mkdir -p /tmp/lfs && mount -t lfs lfs /tmp/lfs && grep -c " /tmp/lfs lfs " /proc/mounts')
t_is "$out" 1 "node2: mount -t lfs lfs /tmp/lfs"

# --- data written on one node, read on the other ------------------------------
# 20 MiB and an odd tail: two books, the size exact to the byte
sum=$(n1 'head -c $((20 * 1048576 + 12345)) /dev/urandom >/tmp/d &&
dd if=/tmp/d of=/tmp/lfs/x bs=1M status=none && sha256sum </tmp/d | cut -d" " -f1')
t_like "$sum" '^[0-9a-f]{64}$' "node1: dd 20 MiB + 12345 bytes into /tmp/lfs/x"
out=$(n2 'stat -c %s /tmp/lfs/x; sha256sum </tmp/lfs/x | cut -d" " -f1')
t_is "$(sed -n 1p <<<"$out")" $((20 * 1048576 + 12345)) "node2: x has the exact size"
t_is "$(sed -n 2p <<<"$out")" "$sum" "node2: x reads back with node1's sha256"
sum2=$(n2 'head -c $((5 * 1048576 + 7)) /dev/urandom >/tmp/d2 && cp /tmp/d2 /tmp/lfs/y &&
sha256sum </tmp/d2 | cut -d" " -f1')
out=$(n1 'stat -c %s /tmp/lfs/y; sha256sum </tmp/lfs/y | cut -d" " -f1')
t_is "$out" "$((5 * 1048576 + 7))"$'\n'"$sum2" "node2: cp 5 MiB + 7 bytes into y; node1 reads the same size and sha256"
t_is "$(activations x)$(activations y)" "[][]" "  closed on both nodes: no activation left"

# --- rm of a file open on the other node ----------------------------------------
hold 2 /tmp/lfs/x '<' >/dev/null
t_ok $? "node2 holds x open read-only"
t_is "$(activations x)" '[["node2","ro"]]' "  the librarian: x active on node2, ro"
out=$(n1 'rm /tmp/lfs/x 2>&1; echo "exit=$?"')
t_like "$out" "rm: cannot remove '/tmp/lfs/x': Device or resource busy" "node1: rm x is EBUSY"
t_like "$out" 'exit=1' "  rm fails"
out=$(n1 'ls /tmp/lfs | grep -x x; sha256sum </tmp/lfs/x | cut -d" " -f1')
t_is "$out" "x"$'\n'"$sum" "  x is still there, with its bytes"
t_is "$(release 2; echo "rc=$?")" "rc=0" "node2 closes x"
t_is "$(activations x)" '[]' "  the librarian: x active nowhere"
n1 'rm /tmp/lfs/x' >/dev/null
t_ok $? "node1: rm x now works"
t_is "$(n1 'L list --json | jq -r ".[].name" | grep -cx x')" 0 "  lfsvol list no longer shows x"
out=$(n2 'wait_for 5 sh -c "! ls /tmp/lfs | grep -qx x" && echo gone; stat /tmp/lfs/x 2>&1')
t_like "$out" '^gone' "  node2's listing drops x within attr_timeout"
t_like "$out" 'No such file or directory' "  node2: stat x is ENOENT"

# --- mv seen on the other node --------------------------------------------------
n1 'echo "the bytes of a" >/tmp/lfs/a' >/dev/null
t_is "$(n2 'cat /tmp/lfs/a; ls /tmp/lfs | grep -x "[ab]"')" "the bytes of a"$'\n'"a" \
	"node2 reads a (its name now cached there)"
n1 'mv /tmp/lfs/a /tmp/lfs/b' >/dev/null
t_ok $? "node1: mv /tmp/lfs/a /tmp/lfs/b"
# attr_timeout (1 s) has passed since the mv once node2 has slept 1.1 s
# after it returned: from then on node2 must see it at the first look
out=$(n2 'sleep 1.1; stat -c %n /tmp/lfs/a 2>&1; cat /tmp/lfs/b; ls /tmp/lfs | grep -x "[ab]"')
t_like "$out" "stat: cannot statx? '/tmp/lfs/a': No such file or directory" \
	"node2: a is ENOENT at the first look once attr_timeout has passed (its cached name expired)"
t_like "$out" 'the bytes of a' "  node2 reads a's bytes in b"
t_is "$(tail -n 1 <<<"$out")" "b" "  node2's listing shows b, not a"

# --- a block device and a file on two nodes ----------------------------------
n1 'truncate -s 16M /tmp/lfs/v && echo v-data | dd of=/tmp/lfs/v conv=notrunc status=none' >/dev/null
hold 1 /tmp/lfs/v '<>' >/dev/null
t_ok $? "node1 holds v open writable"
before=$(activations v)
t_is "$before" '[["node1","shared"]]' "  the librarian: v active on node1, shared"
out=$(n2 'L activate v 2>&1; echo "exit=$?"; test -e /dev/lfs/v && echo "/dev/lfs/v exists"')
t_like "$out" "shelf 'v' is active on node 'node1' \(shared\)" \
	"node2: lfsvol activate v is refused (EBUSY at the librarian), naming node1: $(head -n 1 <<<"$out")"
t_like "$out" 'exit=7' "  exit status 7 (refused)"
t_ok "$(grep -q 'dev/lfs/v exists' <<<"$out"; [ $? = 1 ]; echo $?)" "  node2 has no /dev/lfs/v"
t_is "$(activations v)" "$before" "  the librarian's activations of v are unchanged"
t_is "$(release 1; echo "rc=$?")" "rc=0" "node1 closes v"
out=$(n1 'L activate v 2>&1 && test -b /dev/lfs/v && echo "block device"')
t_like "$out" 'block device' "node1: lfsvol activate v: /dev/lfs/v"
t_is "$(activations v)" '[["node1","rw"]]' "  the librarian: v active on node1, rw"
out=$(n2 'head -c 6 /tmp/lfs/v 2>&1; echo; echo x >>/tmp/lfs/v 2>&1')
t_like "$out" 'head: cannot open .*/tmp/lfs/v.* Device or resource busy' "node2: open of v for reading is EBUSY"
t_like "$out" '/tmp/lfs/v: Device or resource busy' "  and for writing"
out=$(n1 'head -c 6 /tmp/lfs/v 2>&1')
t_like "$out" 'Device or resource busy' "node1: open of v through the filesystem is EBUSY while it is a block device here"
t_is "$(activations v)" '[["node1","rw"]]' "  v is still node1's alone"
n1 'L deactivate v' >/dev/null
t_ok $? "node1: lfsvol deactivate v"
t_is "$(n2 'head -c 6 /tmp/lfs/v')" "v-data" "node2 now opens v and reads it"

# --- one mapping on two nodes ---------------------------------------------------
# shmcount: node A stores a counter, node B watches it advance and then tells
# A to stop through the same page (so A sees B's store too).
n1 'truncate -s 16M /tmp/lfs/m' >/dev/null
# shm_both A B: the writer in node A (background), the watcher in node B
shm_both() {
	local a=$1 b=$2 out r w vals
	out=$(n "$a" "setsid shmcount write /tmp/lfs/m 120 </dev/null >/tmp/shm.out 2>&1 &
echo \$! >/tmp/shm.pid
wait_for 30 grep -q mapped /tmp/shm.out; cat /tmp/shm.out")
	t_is "$out" mapped "node$a: /tmp/lfs/m mapped MAP_SHARED_VALIDATE|MAP_SYNC, counter running"
	t_is "$(activations m)" "[[\"node$a\",\"shared\"]]" "  the librarian: m active on node$a, shared"
	r=$(n "$b" 'shmcount watch /tmp/lfs/m 5 60')
	t_like "$r" '^mapped' "node$b: /tmp/lfs/m mapped MAP_SYNC at the same time"
	t_like "$r" '^saw( [0-9]+){6}$' "node$b: sees the counter advance: $(tail -n 1 <<<"$r")"
	vals=$(sed -n 's/^saw //p' <<<"$r")
	t_is "$(tr ' ' '\n' <<<"$vals" | sort -n -u | paste -sd' ')" "${vals:-none}" "  six increasing values"
	w=$(n "$a" 'wait_for 30 sh -c "! kill -0 $(cat /tmp/shm.pid) 2>/dev/null" || kill $(cat /tmp/shm.pid)
tail -n 1 /tmp/shm.out')
	t_like "$w" 'stopped by the watcher' "node$a: sees node$b's store and stops: $w"
}
t_diag "fabric namespaces (dev, mode, map): $(n1 'ndctl list -N | jq -c "[.[] | [.blockdev, .mode, .map]]"')"
shm_both 1 2
shm_both 2 1

# --- access rules and quotas, as the file's caller sees them -------------------
# The librarian restarts with share = "ro" (the nodes may read each other's
# shelves, not write them) and a quota of 3 books per node: the agents'
# sessions die with it and each worker's next request must reconnect.
out=$(n1 'printf private >/tmp/lfs/acl && cat /tmp/lfs/acl')
t_is "$out" private "node1: writes /tmp/lfs/acl (its own shelf)"
n2 'touch /tmp/lfs/mvme' >/dev/null
# node2 drops the FIN and RST of the librarian's end while it restarts, as
# when the librarian's host reboots: its agent's sessions look open until
# used, or until QEMU's network sends the FIN again (then the agent sees the
# close before the use); either way the agent says so and connects again
n2 "nft add table inet lfsfin && nft add chain inet lfsfin in '{ type filter hook input priority 0; }' &&
nft add rule inet lfsfin in ip saddr 10.0.2.100 tcp sport $EM_PORT 'tcp flags & (fin | rst) != 0' drop" >/dev/null
t_ok $? "node2: drops FIN and RST from the librarian (nft)"
em_librarian_stop
sed -i 's/^\tshare = "rw";$/\tshare = "ro";\n\tnode_quota = { books = 3; };/' "$EM_DIR/librarian.conf"
t_is "$(grep -c 'share = "ro";\|node_quota = { books = 3; };' "$EM_DIR/librarian.conf")" 2 \
	"librarian.conf: share = ro, node_quota books = 3"
em_librarian_start
t_ok $? "the librarian restarted with them"
n2 'nft delete table inet lfsfin' >/dev/null
t_ok $? "node2: takes FIN and RST again"
out=$(n2 'cat /tmp/lfs/acl; echo; echo more 2>&1 >>/tmp/lfs/acl | sed "s/.*: //"; cat /tmp/lfs/acl')
t_is "$out" $'private\nPermission denied\nprivate' \
	"node2: reads node1's acl; a write is EACCES (Permission denied) and changes nothing" ||
	t_diag "node2's agent: $(n2 'tail -n 20 /tmp/agent.log')"
t_is "$(activations acl)" "[]" "  no activation of acl left"
t_is "$(n2 'mv /tmp/lfs/mvme /tmp/lfs/mvd 2>&1; ls /tmp/lfs | grep mv')" mvd \
	"node2: mv after the restart works (a rename is never sent twice: the session is pinged first)"
r=$(n2 'grep "session was closed" /tmp/agent.log')
t_like "$r" 'session was closed' "  node2's agent found its old sessions closed and used new ones" ||
	t_diag "node2's agent: $(n2 'tail -n 20 /tmp/agent.log')"
t_diag "$r"
# the modes show what the librarian now allows (node2 opened acl since the restart)
t_is "$(n2 'stat -c %a /tmp/lfs/acl') $(n1 'stat -c %a /tmp/lfs/acl')" "400 600" \
	"ls -l: acl is 0400 on node2 (share ro) and 0600 on node1 (its owner)"
out=$(n1 'touch /tmp/lfs/q && truncate -s 64M /tmp/lfs/q 2>&1 | sed "s/.*: //"; stat -c %s /tmp/lfs/q')
t_is "$out" $'Disk quota exceeded\n0' "node1: truncate of q to 4 books over a 3-book quota is EDQUOT; q stays empty"
t_is "$(em_admin shelf.get '{"name":"q","limit":0}' | jq .books)" 0 "  the librarian's q has no books"
t_like "$(n1 'grep quota /tmp/agent.log | tail -n 1')" "node 'node1' would go over its quota" \
	"  node1's agent logged the librarian's reason"
t_diag "node1's agent on its old sessions: $(n1 'grep -c "session was closed" /tmp/agent.log; grep "session was closed" /tmp/agent.log | tail -n 4')"

# --- renamed by lfsvol while open here ------------------------------------------
# node1 holds r1 open for writing and renames it r2 with lfsvol (the only
# holder may: the kernel and the agent still know it as r1); a new r1 is
# made and held for writing here too. Another write open of r2, and the
# last close of r2, reach the librarian under r2's name, checked by UUID.
# Under the old name (run once against the old agent), the close ended the
# new r1's activation while r1 was held, and left r2's. (No data is
# written: node1 is at its quota here.)
n1 'touch /tmp/lfs/r1' >/dev/null
hold 1 /tmp/lfs/r1 '<>' >/dev/null
t_ok $? "node1 holds r1 open for writing"
t_like "$(n1 'L rename r1 r2 2>&1')" "renamed shelf r1 to r2" "node1: lfsvol rename r1 r2 while it holds it"
out=$(n1 'wait_for 10 sh -c "! test -e /tmp/lfs/r1" && touch /tmp/lfs/r1 && echo r1 made')
t_is "$out" "r1 made" "node1 sees r1 gone within attr_timeout and makes a new r1"
hold 1 /tmp/lfs/r1 '<>' 2 >/dev/null
t_ok $? "node1 holds the new r1 open for writing"
out=$(n1 'sh -c ": >>/tmp/lfs/r2" 2>&1 && echo opened')
t_is "$out" "opened" "node1: another write open of r2 works" ||
	t_diag "node1's agent: $(n1 'grep "r1\|r2" /tmp/agent.log | tail -n 6')"
t_is "$(activations r1) $(activations r2)" '[["node1","shared"]] [["node1","shared"]]' \
	"  the librarian: both active on node1"
release 1 >/dev/null
t_ok $? "node1 closes r2"
t_is "$(activations r2) $(activations r1)" '[] [["node1","shared"]]' \
	"  r2's activation ended, under its new name; the new r1, still held, still active"
release 1 2 >/dev/null
t_is "$(activations r1)" '[]' "node1 closes the new r1: its activation ends"
t_is "$(n1 'rm /tmp/lfs/r1 /tmp/lfs/r2 && ls /tmp/lfs | grep -c "^r[12]$"')" 0 "node1: rm r1 r2"

# --- fenced by UUID: two open files the kernel knows by one name --------------
# node1 holds f1 (B) open; `lfsvol rename' makes it h at the librarian (the
# only holder may), the kernel still calls it f1. A backup of the catalogue.
# Then a new f1 (A) is made and held: the kernel has two open files named
# f1. The catalogue restored from the backup (as in lvmish/fencing.t) lists
# B's activation, not A: the agent fences A alone, by its UUID (by name it
# fenced both, B wrongly).
n1 'touch /tmp/lfs/f1' >/dev/null
hold 1 /tmp/lfs/f1 '<>' >/dev/null
t_ok $? "node1 holds f1 (B) open for writing"
t_like "$(n1 'L rename f1 h 2>&1')" "renamed shelf f1 to h" "node1: lfsvol rename f1 h while it holds it"
"$LIBRARIAN_BIN" backup -c "$EM_DIR/librarian.conf" "$EM_DIR/noa.db" >/dev/null
t_ok $? "a backup of the catalogue: h (B) active on node1"
out=$(n1 'wait_for 10 sh -c "! test -e /tmp/lfs/f1" && touch /tmp/lfs/f1 && echo f1 made')
t_is "$out" "f1 made" "node1 sees f1 gone within attr_timeout and makes a new f1 (A)"
hold 1 /tmp/lfs/f1 '<>' 2 >/dev/null
t_ok $? "node1 holds A open too"
t_is "$(activations f1) $(activations h)" '[["node1","shared"]] [["node1","shared"]]' "  the librarian: both active on node1"
em_librarian_stop
cp "$EM_DIR/noa.db" "$EM_DIR/catalogue.db" && rm -f "$EM_DIR/catalogue.db-wal" "$EM_DIR/catalogue.db-shm"
em_librarian_start
t_ok $? "the catalogue restored from the backup: A is unknown, B still active"
# the agent logs its fence once the kernel has revoked what it fenced
out=$(n1 'wait_for 10 grep -q "\"name\":\"f1\"" /run/lfs/renewal.json || echo "no fence logged"
dmesg | grep -c "revoked (asked to by the node agent)"; cat /tmp/lfs/h >/dev/null && echo "h opens"')
t_is "$out" $'1\nh opens' "node1's agent fenced one file, A, by its UUID; B (h) still opens" ||
	t_diag "node1: $(n1 'dmesg | grep "lfs filesystem revoked"; grep -i fenc /tmp/agent.log | tail -n 5')"
release 1 2 >/dev/null && release 1 >/dev/null
t_ok $? "node1's holders close the files"
t_is "$(activations h)" '[]' "  B's activation ended, under its name h"

n1 'umount /tmp/lfs && kill $(cat /tmp/agent.pid)' >/dev/null
t_ok $? "node1: umount"
n2 'umount /tmp/lfs && kill $(cat /tmp/agent.pid)' >/dev/null
t_ok $? "node2: umount"
machine_stop_node 1
t_ok $? "node1 powers off with no kernel warning"
machine_stop_node 2
t_ok $? "node2 powers off with no kernel warning"
t_done
