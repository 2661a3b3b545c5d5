#!/bin/bash
# Guest side of tests/lvmish/lifecycle.t, first boot: the life cycle of a
# shelf through lfsvol alone, then shelves left for the auto-assembly boot.
. "$LFS_TOP/tests/lvmish/guest/common.sh"
write_conf

out=$(L activate db 2>&1)
t_is "$?" 5 "before insmod, activate fails with exit 5 (driver not loaded)"
t_like "$out" "lfs kernel module is not loaded" "and says so: $out"
t_run "insmod lfs.ko" insmod "$LFS_KO" || t_done

# New fabric memory is labelled once (attach --init), as an operator does;
# a fabric device carrying a foreign signature is refused
mkfs.ext4 -q -F -L foreign /dev/pmem1
out=$(L attach --init 2>&1)
t_like "$out" "refusing to (label|attach) /dev/pmem1 as IG 1: it carries a signature \(ext4 LABEL=foreign\)" \
	"attach --init refuses a device with a foreign ext4 signature"
t_is "$(L status --json | jq -c '[.[0].fabric[].ig]')" "[]" "  and stops there: nothing is attached"
# wipefs removes the signatures only: mkfs left metadata all over the device,
# which the agent's check below would rightly find. Start from zeroes.
wipefs -q -a /dev/pmem1 && blkdiscard -z /dev/pmem1
# (--json: the info lines go to stderr, stdout is what attach did)
out=$(L attach --init --json 2>/tmp/attach.err)
t_like "$(cat /tmp/attach.err)" "labelled /dev/pmem1 as IG 1 of fabric" \
	"once wiped, attach --init labels it: $(head -n 1 /tmp/attach.err)"
t_is "$(jq -c '[.fabric[] | [.ig, .attached, .path, .labelled]]' <<<"$out")" \
	'[[0,true,"/dev/pmem0",true],[1,true,"/dev/pmem1",true]]' "attach --init --json: each IG attached and labelled"
"$LFS_TOP/lvmish/lfsctl/lfsctl" detach /dev/pmem0 && "$LFS_TOP/lvmish/lfsctl/lfsctl" detach /dev/pmem1
t_is "$(L status --json | jq -c '[.[0].fabric[].ig]')" "[]" "both detached again, for udev"

t_run "udevd starts with the LFS rules" start_udev
t_is "$(L status --json | jq -c '[.[0].fabric[] | [.ig, .path]]')" '[[0,"/dev/pmem0"],[1,"/dev/pmem1"]]' \
	"udev's assembly rule attached both fabric devices (IG 0 by NUMA node, IG 1 by path)"

# The node agent (lfs-agent.service): it renews the node's lease, which
# every activation needs, and its check of the never-used books (the
# librarian says new_books = "unknown") makes them known zero
# (bounds generous: the sweep read 8 MiB/s under TCG on a loaded host)
out=$(L create early -s 1b 2>&1)
t_like "$out" "only 0 free books known to be zero are available" \
	"before the agent's check, create fails: no book is known zero yet"
"$LFSVOL_BIN" -c "$CONF" agent >/tmp/agent.log 2>&1 &
apid=$!
leased() { "$LFS_TOP/lvmish/lfsctl/lfsctl" lease | grep -q 'ends in'; }
t_ok "$(wait_for 60 leased; echo $?)" "the agent renews the node's lease"
checked() { L status --json | jq -r '.[0].agent.check' | grep -q '^idle'; }
t_ok "$(wait_for 600 checked; echo $?)" "the agent's check of never-used books ends"
t_is "$(L status --json | jq -c '.[0].agent | [.checked_zero, .checked_other]')" "[30,0]" \
	"it found the 30 books reading as zeroes"
t_like "$(L status)" "check of FREE books: idle: .* 30 found zero, 0 zeroed, 0 not" "status says so"

out=$(L create db -s 100M -a 2>&1)
t_ok $? "create db -s 100M -a" || t_diag "$out"
t_like "$out" "100M rounded up to 2 books of 64 MiB \(128 MiB\)" "the rounding is stated"
t_ok "$([ -b /dev/lfs/db ]; echo $?)" "/dev/lfs/db is a block device on return"
zflag() { cat "/sys/block/$(basename "$(readlink -f "/dev/lfs/$1")")/lfs/zeroed"; }
t_is "$(zflag db)" 1 "db's books are known zero (the agent's check): marked zeroed, udev skips the probe"
uuid=$(L list --json | jq -r '.[] | select(.name == "db") | .uuid')
t_like "$(readlink -f /dev/disk/by-id/lfs-"$uuid")" "^/dev/lfs[0-9]+$" "/dev/disk/by-id/lfs-$uuid exists"
t_is "$(readlink -f /dev/disk/by-id/lfs-"$uuid")" "$(readlink -f /dev/lfs/db)" "both names lead to the same device"

t_run "mkfs.ext4 /dev/lfs/db" mkfs.ext4 -q -b 4096 -L dbfs /dev/lfs/db
mkdir -p /tmp/mnt
t_run "mount -o dax" mount -o dax /dev/lfs/db /tmp/mnt
t_like "$(grep ' /tmp/mnt ' /proc/mounts)" "dax" "mounted with dax"
head -c 16M /dev/urandom >/tmp/mnt/data
sum=$(sha256sum </tmp/mnt/data)
sync

j=$(L list --json)
t_is "$(jq -c '.[] | select(.name == "db") | [.size, .books, .active, .device, .fstype, .policy]' <<<"$j")" \
	'[134217728,2,["node01"],"/dev/lfs/db","ext4","Spread"]' "list --json: size, books, active, device, fstype, policy"
t_is "$(L show db --json | jq -r '.[0].label')" "dbfs" "show reports the filesystem label"

before=$(df -B1 --output=size /tmp/mnt | tail -1)
t_run "grow db by 2 books while mounted" L resize db -s +2b
t_run "resize2fs online" resize2fs /dev/lfs/db
after=$(df -B1 --output=size /tmp/mnt | tail -1)
t_ok "$([ "$after" -gt $((before + 100 * 1024 * 1024)) ]; echo $?)" "the mounted filesystem grew ($before -> $after bytes)"
t_is "$(L show db --json | jq -c '.[0] | [.books, .allocation.nodes.node01]')" "[4,4]" \
	"show: 4 books, allocation per node"

out=$(L remove db 2>&1)
t_is "$?" 7 "remove is refused while mounted (exit 7)"
t_like "$out" "in use on this node.*unmount it first" "and says why: $out"
out=$(L resize db -s -1b -f 2>&1)
t_is "$?" 7 "shrink is refused while mounted, even with -f"
out=$(L deactivate db 2>&1)
t_is "$?" 7 "deactivate is refused while mounted"
out=$(L deactivate db --json 2>/dev/null)
t_is "$?/$(jq -c '[.error.code, .error.reason, .shelves]' <<<"$out")" '7/[7,"refused",[]]' \
	"deactivate --json while mounted: the refusal as an error object"

t_run "umount" umount /tmp/mnt
disk=$(readlink -f /dev/lfs/db)
out=$(L deactivate db --json 2>/dev/null)
t_is "$?/$(jq -c '.shelves' <<<"$out")" "0/[{\"name\":\"db\",\"disk\":\"$disk\",\"fenced\":false}]" \
	"deactivate db --json: the shelf and the disk it had"
t_ok "$(wait_for 10 test ! -e /dev/lfs/db; echo $?)" "/dev/lfs/db is gone"
# a kernel shelf of the same name but another UUID (made behind lfsvol's
# back) is not taken for db: activate refuses and gives the activation back
out=$("$LFS_TOP/lvmish/lfsctl/lfsctl" create db 1:14 --uuid 00000000-0000-4000-8000-000000000001 --json)
t_is "$?/$(jq -c '.shelf | [.name, .uuid, .map]' <<<"$out")" \
	'0/["db","00000000-0000-4000-8000-000000000001",["1:14"]]' "lfsctl create --json: db 1:14 with another UUID"
out=$(L activate db 2>&1)
t_is "$?" 7 "activate db is refused while another shelf named db is active here"
t_like "$out" "another shelf named .db. is active here as /dev/lfs[0-9]+ \(different UUID\)" "and says why: $out"
t_is "$(L show db --json | jq -c '.[0].active')" "[]" "the librarian's activation was given back"
t_is "$("$LFS_TOP/lvmish/lfsctl/lfsctl" remove db --json | jq -r .name)" db "lfsctl remove db --json (the impostor)"
out=$(L activate db --json 2>/dev/null)
t_is "$?/$(jq -c '.shelves[0] | [.name, .device, .mode, .already]' <<<"$out")" '0/["db","/dev/lfs/db","rw",false]' \
	"activate db --json: the shelf, its device and mode"
t_ok "$([ -b /dev/lfs/db ]; echo $?)" "/dev/lfs/db is back"
t_is "$(jq -r '.shelves[0].disk' <<<"$out")" "$(readlink -f /dev/lfs/db)" "  and the disk /dev/lfs/db leads to"
out=$(L activate db 2>&1)
t_is "$?" 0 "activate db again: nothing to do, success"
t_like "$out" "shelf db is already active as /dev/lfs[0-9]+" "and says so: $out"
mount -o dax /dev/lfs/db /tmp/mnt
t_is "$(sha256sum </tmp/mnt/data)" "$sum" "the data is intact after deactivate + activate"
umount /tmp/mnt

out=$(L remove db 2>&1)
t_is "$?" 7 "remove without -f is refused while a filesystem is on the shelf"
t_like "$out" "holds a filesystem \(ext4 LABEL=dbfs" "and names it: $out"
out=$(L resize db -s -1b 2>&1)
t_is "$?" 7 "shrink without -f is refused too"

map=$(L show db --json | jq -c '.[0].map')
first=$(jq -r '.[0] | "\(.[0]) \(.[1])"' <<<"$map")
# shellcheck disable=SC2086
book_is_zero $first
t_is "$?" 1 "before scrubbing, the first book ($first) holds data"
out=$(L remove db -f 2>&1)
t_like "$out" "removed shelf db; 4 books wait to be zeroed" "remove -f: $out"
# the running agent zeroes them (it learns of ZOMBIE books from its heartbeats)
zeroed() { [ "$(L status --json | jq '.[0].agent.zeroed // 0')" -ge 4 ]; }
t_ok "$(wait_for 300 zeroed; echo $?)" "the agent zeroed the 4 books"
t_like "$(L status)" "agent: librarian connected.*4 zeroed" "status shows the agent's progress"
nozombie() { [ "$(L fabric --json | jq '.[0].zombie')" = 0 ]; }
t_ok "$(wait_for 30 nozombie; echo $?)" "no book is ZOMBIE any more"
t_is "$(L fabric --json | jq -c '.[0] | [.zombie, .free]')" "[0,30]" "the books are FREE again"
sed 's#^key_file = .*#key_file = "/nonexistent.key";#' "$CONF" >/tmp/nokey.conf
t_like "$("$LFSVOL_BIN" -c /tmp/nokey.conf list 2>&1)" "^NAME" \
	"with the agent running, lfsvol uses the agent's librarian session (no key file needed)"
t_like "$("$LFSVOL_BIN" -c /tmp/nokey.conf --librarian "$LFS_LIBRARIAN" list 2>&1)" "key_file \`/nonexistent.key'" \
	"an explicit --librarian bypasses the agent"
# Each command is one process of its own; with the agent running it borrows
# the agent's librarian session (no key file needed above), and its working
# directory and environment are its own: a relative -c and LFS_CONF work.
err_a=$(cd /tmp && "$LFSVOL_BIN" -c nokey.conf show nosuch 2>&1 >/dev/null)
rc_a=$?
t_is "$rc_a" 6 "exit status 6 for an unknown shelf (config relative to the cwd)"
t_like "$err_a" "no shelf named 'nosuch'" "and says so: $err_a"
t_like "$(LFS_CONF=/tmp/nokey.conf "$LFSVOL_BIN" list 2>/dev/null)" "^NAME" \
	"the environment (LFS_CONF) selects the config"
t_like "$(LFSVOL_NO_AGENT=1 "$LFSVOL_BIN" -c /tmp/nokey.conf list 2>&1)" "key_file \`/nonexistent.key'" \
	"LFSVOL_NO_AGENT=1 opens a session of its own (and needs the key file)"
# An edited config is read again by the next command.
cp "$CONF" /tmp/conf.saved
echo "bogus_setting = ;" >>"$CONF"
out=$(L list 2>&1)
t_like "$out" "$CONF:[0-9]+" "an edited config is read again: $out"
cp /tmp/conf.saved "$CONF"
t_like "$(LFSVOL_TRACE=1 L list 2>&1 >/dev/null)" "config $CONF read: 0" "and the restored one too"
out=$("$LFSVOL_BIN" -c "$CONF" agent --once 2>&1)
t_like "$out" "activating shelf .auto1'" "lfsvol agent --once runs a pass beside the running agent: $out"
t_is "$(jq -c '[.pid, .daemon]' /run/lfs/agent.json)" "[$apid,true]" \
	"a --once pass leaves the running agent's progress in agent.json"
# create -a asks the librarian once (shelf.create with "activate"); the
# phases come from LFSVOL_TRACE=1
tr=$(LFSVOL_TRACE=1 L create one -s 1b -a 2>&1 >/dev/null)
t_like "$tr" "trace [0-9.]+ ms \[[0-9]+\] librarian shelf.create: 0" "LFSVOL_TRACE=1 shows the librarian call"
t_is "$(grep -c 'librarian shelf.activate' <<<"$tr")" 0 "create -a activates in the same librarian request"
grep -A1 -F "nice -18 (was 0)" <<<"$tr" | grep -q "kernel shelf create: 0"
t_ok "$?" "the kernel's create ran at process_priority -18 (the default)"
t_is "$(L list --json | jq -c '.[] | select(.name == "one") | .activations')" '[{"node":"node01","mode":"rw"}]' \
	"the librarian has one active here"
t_ok "$([ -b /dev/lfs/one ]; echo $?)" "/dev/lfs/one is there"
tr=$(LFSVOL_TRACE=1 L deactivate one 2>&1 >/dev/null)
t_is "$?" 0 "deactivate one"
t_like "$tr" "nice -18 \(was 0\)" "the kernel's remove ran at process_priority -18"
t_run "remove one" L remove one
t_run "create sig -s 1b" L create sig -s 1b
mv /run/udev/rules.d/60-lfs.rules /tmp/60-lfs.rules.off && udevadm control --reload
# Without the naming rule, activate waits (up to 10 s) for udev's
# /dev/lfs/NAME once the kernel has the shelf. While that activate waits,
# holding its librarian session through the agent, another command's
# librarian requests are served (the agent serves its clients request by
# request): `list` returns while activate still runs. Ctrl-C (SIGINT) then
# ends the command; had it not, it would exit 1 after its 10 s wait.
out=$(perl -MPOSIX=:sys_wait_h -e '
	my $pid = fork() // die "fork: $!";
	if (!$pid) { exec @ARGV; die "exec: $!" }
	sub line { open(my $f, "<", shift) or return ""; return scalar <$f> // "" }
	for (1 .. 2000) {	# until the kernel has the shelf (10 ms steps, 20 s at most)
		last if grep { line($_) eq "sig\n" } glob("/sys/block/lfs*/lfs/name");
		select(undef, undef, undef, 0.01);
	}
	my $list = system("$ARGV[0] -c $ARGV[2] list >/tmp/sig.list 2>&1") == 0 ? "list ok" : "list failed";
	# not kill 0: that succeeds on a zombie too
	my $alive = waitpid($pid, WNOHANG) == 0 ? "activate still running" : "activate ended";
	if ($alive eq "activate still running") {
		kill "INT", $pid;
		waitpid($pid, 0);
	}
	print "$list, $alive, ", ($? & 127 ? "signal " . ($? & 127) : "exit " . ($? >> 8));
' "$LFSVOL_BIN" -c "$CONF" activate sig 2>/tmp/sig.err)
t_is "$out" "list ok, activate still running, signal 2" \
	"list is served while activate waits for udev; then SIGINT ends that command"
t_like "$(cat /tmp/sig.list)" "sig" "and the list shows sig"
t_is "$(grep -c 'udev made no' /tmp/sig.err)" 0 "the command did not run on to its udev timeout"
mv /tmp/60-lfs.rules.off /run/udev/rules.d/60-lfs.rules && udevadm control --reload
t_run "deactivate sig (left active by the interrupted command)" L deactivate sig
t_run "remove sig" L remove sig
t_ok "$(wait_for 60 nozombie; echo $?)" "the agent zeroed sig's book"
# lfs.ko reloaded under the running agent: generic netlink gives the family
# a new id, and the agent's next pass must use a new driver session
t_run "rmmod lfs under the running agent (nothing active)" rmmod lfs
t_run "insmod lfs.ko again (a new family id)" insmod "$LFS_KO"
out=$(L create rl -s 1b -a 2>&1)
t_is "$?" 0 "create rl -s 1b -a after the reload"
t_run "remove rl" L remove rl
t_ok "$(wait_for 60 nozombie; echo $?)" "the agent zeroed rl's book through the reloaded module"
t_ok "$(kill -0 "$apid"; echo $?)" "the agent is still running"
t_ok "$(wait_for 30 leased; echo $?)" "and renews the lease in the reloaded module"
allz=0
for b in $(jq -r '.[] | "\(.[0]):\(.[1])"' <<<"$map"); do
	book_is_zero "${b%%:*}" "${b##*:}" || { allz=1; t_diag "book $b is not zero"; }
done
t_ok "$allz" "every book of the removed shelf reads as zeros on the fabric"

t_is "$(L fabric --json | jq -c '.[0] | [.zombie, .free]')" "[0,30]" "all 30 books are FREE"
# a new shelf holding every book of the fabric includes db's old books
t_run "create all -s 30b -a" L create all -s 30b -a
amap=$(L show all --json | jq -c '.[0].map')
allz=0
for b in $(jq -r '.[] | "\(.[0]):\(.[1])"' <<<"$map"); do
	i=$(jq --argjson ig "${b%%:*}" --argjson bk "${b##*:}" 'map(. == [$ig, $bk]) | index(true)' <<<"$amap")
	[ "$i" != null ] || { allz=1; t_diag "book $b is not in the new shelf"; continue; }
	dd if=/dev/lfs/all bs=1M skip=$((i * 64)) count=64 iflag=direct status=none |
		cmp -s - <(head -c 64M /dev/zero) || { allz=1; t_diag "book $b (index $i) is not zero"; }
done
t_ok "$allz" "the new shelf reads only zeros where db's books were"
t_is "$(zflag all)" 1 "every book is known zero (db's zeroed after use, the others checked by the agent): marked zeroed"
t_run "remove the all-books shelf (no filesystem, no -f needed)" L remove all
out=$(L scrub --json 2>/tmp/scrub.err)
t_like "$(cat /tmp/scrub.err)" "scrub done: [0-9]+ books? zeroed" \
	"lfsvol scrub follows the agent's zeroing: $(tail -n 1 /tmp/scrub.err)"
t_is "$(jq -c '[.command, .zeroed]' <<<"$out")" "[\"scrub\",$(grep -oE 'scrub done: [0-9]+' /tmp/scrub.err | grep -oE '[0-9]+$')]" \
	"scrub --json: the count the text gives"
t_ok "$(wait_for 300 nozombie; echo $?)" "  and the agent zeroes all 30 books"
t_is "$(L fabric --json | jq -c '.[0] | [.zombie, .free]')" "[0,30]" "  all FREE again"
. "$LFS_TOP/tests/lvmish/guest/copy.sh"

# shelves for the auto-assembly boot: auto1 is configured auto_activate, manual is not
t_run "create auto1 -a" L create auto1 -s 2b -a
# every book scrubbed: the librarian says so, the driver marks the shelf and
# udev skips the signature probe, until the first open for writing
t_is "$(zflag auto1)" 1 "a shelf of scrubbed books is marked zeroed"
t_is "$(udevadm info --query=property /dev/lfs/auto1 | grep -cE '^(LFS_ZEROED=1|ID_FS_)')" 1 \
	"udev skipped the probe (LFS_ZEROED=1, no ID_FS_*)"
mkfs.ext4 -q -b 4096 -L autofs /dev/lfs/auto1
t_is "$(zflag auto1)" 0 "mkfs (an open for writing) cleared zeroed"
udevadm trigger --action=change --settle /dev/lfs/auto1
t_like "$(udevadm info --query=property /dev/lfs/auto1 | grep -E '^(LFS_ZEROED|ID_FS_TYPE|ID_FS_LABEL)=' | sort | paste -sd' ')" \
	"^ID_FS_LABEL=autofs ID_FS_TYPE=ext4$" "the next udev event probes it and finds the filesystem"
mount -o dax /dev/lfs/auto1 /tmp/mnt
head -c 8M /dev/urandom >/tmp/mnt/data
sha256sum </tmp/mnt/data >"$LFS_RESULTS/auto1.sha"
umount /tmp/mnt
t_run "create manual -a" L create manual -s 1b -a
L list --json | jq -r '.[] | select(.name == "auto1") | .uuid' >"$LFS_RESULTS/auto1.uuid"
sync
kill "$apid"
wait "$apid"
t_is "$?" 0 "the agent exits cleanly on SIGTERM"
t_done
