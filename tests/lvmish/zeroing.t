#!/bin/bash
# LFS-TEST: vm smp
# Safe reuse and zeroing off the critical path (issue 14, docs/FENCING.md),
# one node with two labelled 1 GiB fabric devices, a librarian that takes
# new memory as unknown (new_books = "unknown") and allocates only books
# known to read as zeroes:
# - never-used books written with a pattern before the agent ever ran are
#   found by its background sweep and zeroed (labelled devices), the others
#   found zero by reading; before that, create fails with ENOSPC saying how
#   many books wait; afterwards every new shelf reads as zeroes;
# - the largest batch the VM can hold (every book, one BOOK_ZERO job) is
#   zeroed while the lease renewals go on (the renewal log shows none late)
#   and `lfsvol list', `activate' and `deactivate' keep answering; scrub and
#   status show the progress (books done of total, rate, time left).
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

# Every third book of each device gets 1 MiB of 0xa5 at its start, middle
# and end (books start after the 2 MiB data offset), before anything else.
# 62 books of 16 MiB per device: as many books as with 64 MiB books on 4
# GiB devices, a quarter of the bytes to sweep and zero under emulation
# (the batch still takes 13 s or more: renewals and 7 rounds of commands
# ran during it at load 4)
PER=62 BMB=16
MIDS="0 $((BMB / 2)) $((BMB - 1))" # the MiB of a book that get the pattern
PATTERN='head -c 1M /dev/zero | tr "\000" "\245" >/tmp/pat
for d in 0 1; do
	for ((b = 0; b < '$PER'; b += 3)); do
		for m in '"$MIDS"'; do
			dd if=/tmp/pat of=/dev/pmem$d bs=1M seek=$((2 + b * '$BMB' + m)) count=1 oflag=direct conv=notrunc status=none
		done
	done
done'
EM_DEVICES=2 EM_NEW_BOOKS=unknown EM_NO_AGENT=1 EM_NODE_PRE=$PATTERN EM_AGENT_CONF='scrub_batch = 8191;' \
	em_start 1 "$((BMB * 64))M" "${BMB}M" >&2
t_ok $? "librarian (new_books unknown) and one node with two $((BMB / 16)) GiB devices up ($MACHINE_OUT)" || t_done

n1() {
	em_node 1 "lfsctl() { \$LFS_TOP/lvmish/lfsctl/lfsctl \"\$@\"; }
wait_for() {
	local end=\$(( \$(date +%s%N) / 1000000 + \$1 * 1000 ))
	shift
	until \"\$@\"; do
		[ \$(( \$(date +%s%N) / 1000000 )) -lt \$end ] || return 1
		sleep 0.2
	done
}
# NAME reads as zeroes from start to end
zeroes() { cmp -s -n \$(blockdev --getsize64 /dev/lfs/\$1) /dev/lfs/\$1 /dev/zero; }
# Where the pattern was written (start, middle and end of every third book
# of each device), shelf NAME reads as zeroes: prints the places that do not
# (one reader for them all, build/driver-tests/zeroes: a fork per place
# would cost more than the reading under TCG)
patzero() {
	local i m r=
	for i in \$(L show \$1 --json | jq -r '.[0].map | to_entries[] | select(.value[1] % 3 == 0) | .key'); do
		for m in $MIDS; do
			r+=\" \$(( (i * $BMB + m) << 20 )):1048576\"
		done
	done
	\$LFS_TOP/build/driver-tests/zeroes /dev/lfs/\$1 \$r |
		awk -F: '{ o = \$1 / 1048576; print \"book \" int(o / $BMB) \" MiB \" o % $BMB }'
	[ \${PIPESTATUS[0]} -lt 2 ] || echo \"cannot read /dev/lfs/\$1\"
}
$1"
}

# The librarian's books (emachine's geometry leaves a margin: the devices
# may hold a book more, which the librarian does not know)
total=$(em_admin geometry | jq .total_books)
held=$(n1 'lfsctl fabric --json | jq "[.[].books] | add"')
patterned=$((2 * ((PER + 2) / 3)))
t_is "$total" $((2 * PER)) "the librarian has $total books of $BMB MiB ($patterned of them written with a pattern)"
t_ok "$([ "$held" -ge "$total" ]; echo $?)" "  the node's devices hold them ($held books)"
t_is "$(n1 'dd if=/dev/pmem1 bs=1M skip='"$((2 + 60 * BMB + BMB - 1))"' count=1 iflag=direct status=none | od -An -tx1 | head -n 1 | tr -d " "')" \
	a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5 "book 1:60 ends with the pattern"

# --- before the agent: nothing is known zero ----------------------------------
out=$(n1 'L create early -s 1b; echo "exit=$?"')
t_like "$out" "only 0 free books known to be zero are available to it; $total more wait to be zeroed \(0 freed, $total never used or of unknown content\)" \
	"create before the agent's sweep: ENOSPC saying $total books wait to be zeroed"
t_like "$out" "^exit=4$" "  exit status 4"

# --- the sweep: read, and zero what is not zero -------------------------------
em_agent_start 1 >/dev/null
t_ok $? "the agent starts"
out=$(n1 'seen=
for i in $(seq 1500); do
	s=$(L status)
	[ -z "$seen" ] && seen=$(grep -m1 "sweep of never-used books: [0-9]* of [0-9]* done" <<<"$s")
	grep -q "check of FREE books: idle" <<<"$s" && break
	sleep 0.2
done
echo "$seen"; L status --json | jq -c ".[0].agent | [.checked_zero, .zeroed_free, .checked_other]"')
t_like "$out" "agent: sweep of never-used books: [0-9]+ of $total done \([0-9.]+ ([KMG]i)?B\), [0-9.]+ ([KMG]i)?B/s, ([0-9]+ s left|rate not known yet)" \
	"status shows the sweep's progress: $(head -n 1 <<<"$out")"
t_is "$(tail -n 1 <<<"$out")" "[$((total - patterned)),$patterned,0]" \
	"the sweep found $((total - patterned)) books zero and zeroed the $patterned written ones"

# --- every new shelf reads as zeroes ------------------------------------------
out=$(n1 'L create small -s 1b -a >/dev/null && L create all -s $(('"$total"' - 1))b -a >/dev/null &&
	zeroes small && echo "small: zeroes" &&
	echo "all: $(L show all --json | jq "[.[0].map[] | select(.[1] % 3 == 0)] | length") books written before, $(patzero all | wc -l) places not zero" &&
	echo "zeroed flag $(cat /sys/block/$(basename $(readlink -f /dev/lfs/all))/lfs/zeroed)"')
t_like "$out" "small: zeroes" "a new shelf reads as zeroes from end to end"
inall=$patterned
[ "$(n1 'L show small --json | jq ".[0].map[0][1] % 3"')" = 0 ] && inall=$((patterned - 1))
t_like "$out" "all: $inall books written before, 0 places not zero" \
	"a shelf of every other book reads as zeroes where the pattern was: $(grep '^all:' <<<"$out")"
t_like "$out" "zeroed flag 1" "  both are made of known-zero books (the driver marks them zeroed)"

# --- the largest batch, while renewals and commands go on ----------------------
r0=$(n1 'jq -c "[.renewals, .late]" /run/lfs/renewal.json')
first=$(n1 'L show all --json | jq -c ".[0].map[0]"')
out=$(n1 'dd if=/tmp/pat of=/dev/lfs/all bs=1M count=1 oflag=direct status=none &&
	L deactivate small all >/dev/null && L remove all -f')
t_like "$out" "removed shelf all; $((total - 1)) books wait to be zeroed" "every book but small's goes ZOMBIE: $out"
# While the agent zeroes: rounds of list + activate + deactivate in the
# background, each logged with its start and end (ms), and the agent's
# zeroing progress sampled; scrub runs in the foreground and ends with it.
out=$(n1 'ms() { echo $(( $(date +%s%N) / 1000000 )); }
rm -f /tmp/stop /tmp/rounds /tmp/zstat
(while [ ! -e /tmp/stop ]; do
	t0=$(ms)
	L list >/dev/null && L activate small >/dev/null && L deactivate small >/dev/null && ok=ok || ok=failed
	echo "$t0 $(ms) $ok" >>/tmp/rounds
done) &
(while [ ! -e /tmp/stop ]; do
	echo "$(ms) $(L status --json | jq -c ".[0].agent.zeroing | if . then .done else null end")" >>/tmp/zstat
	L status | grep -m1 "agent: zeroing ZOMBIE" >>/tmp/zlines
	sleep 0.2
done) &
# scrub follows; stopped while the run goes on, it resumes only after the
# run ended and a second scrub ran one that found nothing: its count is
# still that of its own run
runs0=$(jq .runs /run/lfs/agent.json)
$LFS_TOP/lvmish/lfsvol/lfsvol -c /tmp/lfs.conf scrub >/tmp/scrub.out 2>&1 & a=$!
until grep -q "by the node agent" /tmp/scrub.out || ! kill -0 $a 2>/dev/null; do sleep 0.1; done
kill -STOP $a 2>/dev/null && echo "scrub stopped while it followed"
n=0; until [ "$(jq .runs /run/lfs/agent.json)" -gt "$runs0" ] || [ $n -ge 900 ]; do sleep 0.2; n=$((n + 1)); done
L scrub >/tmp/scrub2.out 2>&1; echo "second scrub exit $?: $(tail -n 1 /tmp/scrub2.out)"
kill -CONT $a; wait $a; echo "scrub exit $?"
touch /tmp/stop; wait
from=$(awk "\$2 != \"null\" { print \$1; exit }" /tmp/zstat)
to=$(awk "\$2 != \"null\" { t = \$1 } END { print t }" /tmp/zstat)
echo "zeroing seen from $from to $to ms: $(( to - from )) ms"
awk -v f="$from" -v t="$to" "\$1 < t && \$2 > f { n++; if (\$2 - \$1 > max) max = \$2 - \$1; if (\$3 != \"ok\") bad++ }
	END { printf \"rounds=%d max=%d failed=%d\\n\", n, max, bad }" /tmp/rounds
head -n 1 /tmp/zlines; cat /tmp/scrub.out')
t_like "$out" "scrub exit 0" "lfsvol scrub follows the agent's zeroing and ends with it"
t_like "$out" "scrub stopped while it followed" "  (stopped while it followed the run)"
t_like "$out" "second scrub exit 0: scrub done: 0 books zeroed" \
	"  a second scrub after that run ended runs one that finds nothing: $(grep '^second' <<<"$out")"
t_like "$out" "scrub done: $((total - 1)) books zeroed" "  and counts the books: $(grep 'scrub done' <<<"$out")"
# the total follows the librarian's ZOMBIE count of this node (a heartbeat
# old, so an estimate); the exact count is scrub's, checked above
t_like "$out" "zeroing \(by the node agent\): [0-9]+ of [0-9]+ ZOMBIE books, [0-9.]+ [MG]iB/s, ([0-9]+ s left|rate not known yet)" \
	"  with progress lines: $(grep -m1 'by the node agent' <<<"$out")"
t_like "$out" "agent: zeroing ZOMBIE books: [0-9]+ of [0-9]+ done \([0-9.]+ ([KMG]i)?B\), [0-9.]+ ([KMG]i)?B/s, ([0-9]+ s left|rate not known yet)" \
	"status shows books done of total, rate and time left: $(grep -m1 'agent: zeroing' <<<"$out")"
t_diag "$(grep 'zeroing seen' <<<"$out")"
rounds=$(sed -n 's/^rounds=\([0-9]*\) .*/\1/p' <<<"$out")
max=$(sed -n 's/^rounds=[0-9]* max=\([0-9]*\) .*/\1/p' <<<"$out")
t_ok "$([ "${rounds:-0}" -ge 2 ]; echo $?)" "while it zeroed, list + activate + deactivate ran $rounds times"
t_like "$out" "^rounds=[0-9]+ max=[0-9]+ failed=0$" "  every one of them succeeded"
# 5 s under emulation, times the files run side by side (tests/run)
bound=$((5000 * ${LFS_VM_TIMEOUT_FACTOR:-1}))
t_ok "$([ "${max:-99999}" -le "$bound" ]; echo $?)" "  the slowest round took $max ms (under emulation; at most $bound)"
j=$(n1 'cat /run/lfs/renewal.json')
r1=$(jq -c '[.renewals, .late]' <<<"$j")
t_ok "$([ "$(jq '.[0]' <<<"$r1")" -gt "$(jq '.[0]' <<<"$r0")" ]; echo $?)" \
	"renewals went on during the zeroing ([renewals, late] $r0 -> $r1)"
t_is "$(jq .late <<<"$j")" 0 "  none was late (gap over interval + 1 s)"
t_ok "$([ "$(jq .longest_gap_ms <<<"$j")" -le 2000 ]; echo $?)" \
	"  the longest gap between two renewals: $(jq .longest_gap_ms <<<"$j") ms (interval 1 s)"
out=$(n1 'L create all2 -s $(('"$total"' - 1))b -a >/dev/null &&
	i=$(L show all2 --json | jq ".[0].map | index(['"$first"'])") &&
	dd if=/dev/lfs/all2 bs=1M skip=$((i * '"$BMB"')) count='"$BMB"' iflag=direct status=none | cmp -s - <(head -c '"$BMB"'M /dev/zero) &&
	echo "book '"$first"' zero" && echo "$(patzero all2 | wc -l) places not zero"')
t_is "$out" "$(printf 'book %s zero\n0 places not zero' "$first")" \
	"the zeroed books make a shelf that reads as zeroes (book $first, written through all, and the patterned places)"
# --- a ZOMBIE book with bad memory stays ZOMBIE; the others are zeroed ----------
# all2's last 4 books go ZOMBIE; the first of them in book order (the first the
# agent meets) gets a page poisoned (the kernel's hwpoison injector; pmemN's
# data starts at its pfn device's resource, the books 2 MiB after it). Before,
# BOOK_ZERO's EIO failed the agent's whole batch at it, every pass again.
# The agent is stopped meanwhile, so that it zeroes nothing before the poison.
out=$(n1 'p=$(cat /tmp/agent.pid); kill $p; wait_for 20 sh -c "! kill -0 $p 2>/dev/null" || echo "agent still runs"
L deactivate all2 >/dev/null && L resize all2 -s -4b -f >/dev/null || echo "shrink failed"
modprobe hwpoison_inject; mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
echo ok')
t_is "$out" ok "(set-up)"
zl=$(em_admin zombie.list '{"limit":100}' | jq -c '.books | sort')
bad=$(jq -c '.[0]' <<<"$zl") free=$(jq -c '.[1]' <<<"$zl")
zbefore=$(em_admin stats | jq .books.zombie)
# poison IG BOOK PAGE: that page of the book, through the hwpoison injector
# (pmemN's data starts at its pfn device's resource, the books 2 MiB after it)
poison='poison() {
	local dev res
	dev=$(lfsctl fabric --json | jq -r ".[] | select(.ig == $1) | .path")
	res=$(cat /sys/block/$(basename $dev)/device/resource)
	echo $(( (res + (2 << 20) + $2 * ('"$BMB"' << 20) + $3 * 4096) / 4096 )) >/sys/kernel/debug/hwpoison/corrupt-pfn 2>/dev/null
}'
out=$(n1 "$poison"'
poison '"$(jq '.[0]' <<<"$bad") $(jq '.[1]' <<<"$bad")"' 3
lfsctl fabric --json | jq -c "[.[] | .ig as \$i | .bad[]? | [\$i, .book, .offset]]"')
em_agent_start 1 >/dev/null
out+=$'\n'$(n1 'L scrub >/tmp/scrub3.out 2>&1; L status | grep -m1 "bad memory"')
t_is "$(head -n 1 <<<"$out")" "[[$(jq '.[0]' <<<"$bad"),$(jq '.[1]' <<<"$bad"),12288]]" \
	"book $bad, ZOMBIE, gets page 3 poisoned: the node lists that bad range"
t_is "$(em_admin stats | jq -c '[.books.zombie, .books.bad]')" "[0,1]" \
	"  the agent reported it (BAD) and zeroed the other $((zbefore - 1)) ZOMBIE books"
t_is "$(em_admin book.bad_list | jq -c '[.bad[] | [.ig, .book, .offset, .length, .state, .node]]')" \
	"[[$(jq '.[0]' <<<"$bad"),$(jq '.[1]' <<<"$bad"),12288,4096,\"bad\",\"node1\"]]" \
	"  the librarian lists $bad bad: never FREE, never handed out"
# --- issue 32 item 3: poison under the running agent: a page of an active
# shelf's book and one of a FREE book; the agent's next pass (a heartbeat
# interval) reports them; the librarian keeps them out of every new shelf
t0=$SECONDS fkz=$(em_admin stats | jq .free_known_zero)
out=$(n1 "$poison"'
L activate all2 >/dev/null || echo "activate failed"
b=$(L show all2 --json | jq -c ".[0].map[1]")
poison $(jq ".[0]" <<<"$b") $(jq ".[1]" <<<"$b") 5
poison '"$(jq '.[0]' <<<"$free") $(jq '.[1]' <<<"$free")"' 7
lfsctl fabric --json | jq "[.[] | .bad[]?] | length"
echo "$b"')
inuse=$(tail -n 1 <<<"$out")
t_is "$(head -n 1 <<<"$out")" 3 "a book of active shelf all2 ($inuse, page 5) and FREE $free (page 7) poisoned: 3 bad ranges"
end=$((SECONDS + 20))
until [ "$(em_admin book.bad_list | jq '.bad | length')" = 3 ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.2; done
t_is "$(em_admin book.bad_list | jq -c --argjson u "$inuse" --argjson f "$free" \
	'[.bad[] | select([.ig, .book] == $u or [.ig, .book] == $f) | [.ig, .book, .offset, .state, .shelf, .seq]]')" \
	"$(jq -cn --argjson u "$inuse" --argjson f "$free" \
		'[[$u[0], $u[1], 20480, "inuse", "all2", 1], [$f[0], $f[1], 28672, "bad", null, null]] | sort_by(.[0] * 4294967296 + .[1])')" \
	"  the agent reported both within $((SECONDS - t0)) s: all2's book stays on all2, the FREE one is BAD"
t_is "$(em_admin stats | jq -c '[.books.bad, .free_known_zero]')" "[2,$((fkz - 1))]" \
	"  2 BAD books; $((fkz - 1)) books left to allocate (the FREE bad one is no longer counted)"
out=$(n1 'L create all3 -s '"$((fkz - 1))"'b >/dev/null && L show all3 --json | jq -c ".[0].map"
L create all4 -s 1b >/dev/null 2>&1 || echo "all4 refused"
L fabric | sed -n "/bad memory/,\$p" | tail -n +3 | awk "{print \$5, \$6}" | sort | paste -sd " "
L show all2 --json | jq -c ".[0].bad | map([.seq, .offset, .length, .shelf_offset])"')
t_is "$(jq length <<<"$(sed -n 1p <<<"$out")")" "$((fkz - 1))" "a new shelf gets the last $((fkz - 1)) good books: $(sed -n 1p <<<"$out")"
t_ok "$(jq -e --argjson f "$free" --argjson b "$bad" 'index([$f]) == null and index([$b]) == null' <<<"$(sed -n 1p <<<"$out")" >/dev/null; echo $?)" \
	"  neither bad book"
t_is "$(sed -n 2p <<<"$out")" "all4 refused" "  and the next shelf is refused: the bad books are not handed out"
t_is "$(sed -n 3p <<<"$out")" "bad - bad - inuse all2" "lfsvol fabric lists the 3 bad books, all2's with its shelf"
t_is "$(sed -n 4p <<<"$out")" "[[1,20480,4096,$((BMB * 1048576 + 20480))]]" "lfsvol show all2 --json: its book 1, at byte $((BMB * 1048576 + 20480)) of the shelf"
t_diag "the checks of reported bad memory took $((SECONDS - t0)) s"
n1 'L deactivate --all >/dev/null; kill $(cat /tmp/agent.pid)' >/dev/null
machine_stop_node 1
t_ok $? "the node powers off with no kernel warning"
t_done
