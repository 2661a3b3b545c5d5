# shellcheck shell=bash
# Poisoned memory (docs/CXL.md "Poison"), sourced by shelf.sh in its boot:
# lfs.ko loaded, no fabric attached, BS the book size in MiB. The kernel's
# hwpoison injector poisons one page of a file on ext4 -o dax over a shelf,
# then one page of a free book; emulated memory keeps its bytes, so every
# refusal seen is the driver's own. Ends with lfs.ko reloaded, nothing
# attached.
P=/tmp/poison
PG=4096
BP=$((BS << 20 >> 12)) # pages a book
mkdir -p $P
inject() { echo "$1" >/sys/kernel/debug/hwpoison/corrupt-pfn; }
# page N of $P/f, the error only [dd's FLAGS]
page_err() { dd if=$P/f bs=$PG skip="$1" count=1 status=none $2 2>&1 >/dev/null; }

t_run "modprobe hwpoison_inject" modprobe hwpoison_inject
t_run "attach /dev/pmem0 and /dev/pmem1 again" sh -c \
	"$LFSCTL attach /dev/pmem0 --ig 0 --book-size ${BS}M && $LFSCTL attach /dev/pmem1 --ig 1 --book-size ${BS}M"
pbooks=(0:0 1:0 0:1 1:1)
pdev=$(lfsctl create sick "$(
	IFS=,
	echo "${pbooks[*]}"
)")
t_run "ext4 -o dax on $pdev" sh -c "mkfs.ext4 -q -b 4096 $pdev && mount -o dax $pdev $P"
pattern 7 8M >$P/f
N=1000 # the page poisoned, of 2048
phys=$(poison phys $P/f $((N * PG)))
pfn=$(poison pfn $P/f $((N * PG)))
t_like "$phys:$pfn" '^[0-9]+:[0-9]+$' "page $N of the file: byte $phys of $pdev, pfn $pfn"

# Two processes map the page. The kernel's generic handling, which
# notify_failure lets run, kills the one that asked for early kill and
# unmaps the page from every mapping; the other then faults on its next load
# and the driver refuses the page: SIGBUS. (With no early-kill mapper nothing
# is unmapped: on real memory the next load is a machine check, in emulation
# it reads the old bytes; docs/CXL.md "Poison".)
# hold MODE: a process holding page N (poison MODE), its standard input
# and output on fifos; sets pid, in (its input, open) and held (its line)
hold() {
	rm -f $P.in $P.out && mkfifo $P.in $P.out
	# (in a subshell that exits with its status: no "Bus error" report)
	(
		poison "$1" $P/f $((N * PG)) <$P.in >$P.out
		exit $?
	) 2>/dev/null &
	pid=$!
	exec {in}>$P.in {out}<$P.out
	read -r held <&$out
	exec {out}<&-
}
# a listener of the family's events group, for the two ranges to come
rm -f $P.ev && mkfifo $P.ev
nlevents 2 >$P.ev &
evpid=$!
exec {ev}<$P.ev
read -r -t 30 ready <&$ev
t_is "$ready" ready "a listener joins the lfs family's events group"
hold hold-early
hpid=$pid hin=$in h=$held
hold hold
t_is "$h:$held" mapped:mapped "two processes map page $N"
t_run "corrupt-pfn $pfn" inject "$pfn"
# their standard input ends: alive, they load from the page again and exit 0
exec {hin}>&- {in}>&-
wait "$hpid"
t_is "$?" 135 "the process mapping it with early kill was killed by SIGBUS"
wait "$pid"
t_is "$?" 135 "the other one's next load: SIGBUS"
t_like "$(dmesg | grep 'memory failure at book')" "interleave group [01] \(/dev/pmem[01]\)" \
	"the driver logged the failure"

fab=$(lfsctl fabric --json)
t_is "$(jq '[.[].bad | length] | add' <<<"$fab")" 1 "one bad range listed"
bad=$(jq -c '.[] | select(.bad | length > 0) | [.ig, .bad[0].book, .bad[0].offset, .bad[0].length]' <<<"$fab")
want=${pbooks[phys / (BS << 20)]}
t_is "$bad" "[${want%:*},${want#*:},$((phys % (BS << 20) / PG * PG)),$PG]" \
	"it is the shelf's book $((phys / (BS << 20))) ($want) at the page's offset"
t_like "$(lfsctl fabric)" "BAD RANGES" "lfsctl fabric prints a table of bad ranges"

out=$(page_err $N iflag=direct)
t_like "$?:$out" '^1:.*Input/output error' "O_DIRECT read of page $N: EIO"
out=$(page_err $N)
t_like "$?:$out" '^1:.*Input/output error' "buffered read of page $N: EIO"
out=$(poison touch $P/f $((N * PG)))
t_is "$?:$out" 2:SIGBUS "a new mapping of page $N: SIGBUS"
for n in $((N - 1)) $((N + 1)); do
	t_run "page $n reads back its bytes (O_DIRECT, buffered, mapped)" bash -c \
		"cmp <(dd if=$P/f bs=$PG skip=$n count=1 iflag=direct status=none) <(pattern 7 $PG $((n * PG))) &&
		cmp <(dd if=$P/f bs=$PG skip=$n count=1 status=none) <(pattern 7 $PG $((n * PG))) &&
		poison touch $P/f $((n * PG))"
done
out=$(dd if="$pdev" bs=$PG skip=$((phys / PG)) count=1 iflag=direct status=none 2>&1 >/dev/null)
t_like "$?:$out" '^1:.*Input/output error' "$pdev: the page's block fails (bio path)"
prev=$(poison phys $P/f $(((N - 1) * PG)))
t_run "$pdev: the block of page $((N - 1)) reads back" \
	cmp <(dd if="$pdev" bs=$PG skip=$((prev / PG)) count=1 iflag=direct status=none) \
	<(pattern 7 $PG $(((N - 1) * PG)))
t_time "poison in a shelf"

# A free book: its pfn from the first one's (the device's pages are
# contiguous), zeroed first. BOOK_CHECK no longer counts it zero, BOOK_ZERO
# refuses it.
ig=$(jq '.[0]' <<<"$bad")
base=$((pfn - ($(jq '.[1]' <<<"$bad") * BP + $(jq '.[2]' <<<"$bad") / PG)))
t_run "zero book $ig:10" lfsctl zero "$ig:10"
inject $((base + 10 * BP + 5)) 2>/dev/null # no mapping to kill: EBUSY
t_is "$(lfsctl fabric --json | jq -c ".[] | select(.ig == $ig) | .bad[1]")" \
	"{\"book\":10,\"offset\":$((5 * PG)),\"length\":$PG}" "free book $ig:10: its page 5 listed"
t_is "$(lfsctl check "$ig:10")" "" "check: $ig:10 no longer reads as zeroes"
out=$(lfsctl zero $ig:10 2>&1)
t_like "$?:$out" "^[1-9].*book $ig:10 holds bad memory" "zero refuses $ig:10, naming it"
read -r -t 10 ev1 <&$ev
read -r -t 10 ev2 <&$ev
exec {ev}<&-
kill $evpid 2>/dev/null
t_is "$ev1|$ev2" "bad $ig /dev/pmem$ig $(jq '.[1]' <<<"$bad") $(jq '.[2]' <<<"$bad") $PG|bad $ig /dev/pmem$ig 10 $((5 * PG)) $PG" \
	"each range came as an LFS_CMD_FABRIC_BAD event"
t_time "poison in a free book"

t_run "umount, remove, detach" sh -c "umount $P && $LFSCTL remove sick &&
	$LFSCTL detach /dev/pmem0 && $LFSCTL detach /dev/pmem1"
t_run "rmmod lfs" rmmod lfs
t_run "insmod lfs.ko again" insmod "$LFS_KO"
t_is "$(lfsctl fabric --json)" "[]" "nothing attached after the reload"
t_time "poison cleanup"
