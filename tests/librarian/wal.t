#!/bin/bash
# With synchronous = "normal" the daemon checkpoints in a background thread
# (librarian/store.c): the WAL must stay bounded while requests keep coming,
# and nothing acknowledged may be missing after a kill -9. The daemon's VFS
# (librarian/walvfs.c) hands each commit's WAL frames to the kernel in one
# write: checked with its counters, across checkpoints and WAL restarts.
# On PostgreSQL (LFS_TEST_STORE=pg) the writes, the kill -9 and what
# survives it are checked; the WAL's own checks are SQLite's (skipped).
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC" 'synchronous = "normal";'
lt_start || { t_ok 1 "librarian starts"; lt_done; }
lc shelf.create '{"name":"w","books":1}' >/dev/null
# 20,000 attribute writes of 3 KiB each, back to back: each commits one or two
# WAL frames.
v=$(head -c 3000 /dev/zero | tr '\0' x)
before=$(lc stats | jq -c .db)
seq 20000 | jq -c --arg v "$v" '{op:"attr.set",name:"w",key:"user.k\(. % 50)",value:"\($v)\(.)"}' |
	"$CLI" client --connect "unix:$SOCK" --stdin >"$T/wal.out" 2>&1
t_is "$?" 0 "20,000 attribute writes acknowledged"
if lt_sqlite_only 3 "the WAL file and the daemon's WAL VFS (PostgreSQL keeps its own WAL)"; then
	after=$(lc stats | jq -c .db)
	writes=$(jq -n --argjson a "$before" --argjson b "$after" '$b.wal_writes - $a.wal_writes')
	calls=$(jq -n --argjson a "$before" --argjson b "$after" '$b.wal_write_calls - $a.wal_write_calls')
	t_diag "SQLite wrote the WAL $writes times; the VFS made $calls write calls"
	t_ok "$([ "$writes" -ge 40000 ]; echo $?)" "SQLite wrote each commit's frames in pieces ($writes writes for 20,000 commits)"
	t_ok "$([ "$calls" -ge 20000 ] && [ "$calls" -le 20100 ]; echo $?)" \
		"one write call per commit ($calls for 20,000 commits and a few WAL headers)"
	# the page size from the WAL header (bytes 8-11, big-endian)
	page=$(od -An -tu1 -j8 -N4 "$T/cat.db-wal" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	frames=$(( ($(stat -c %s "$T/cat.db-wal") - 32) / (page + 24) ))
	t_diag "WAL holds $frames frames after 20,000 writes"
	# Without checkpoints the WAL would hold >= 20,000 frames; the thread is woken
	# at 4,000, the serving connection completes a checkpoint at 12,000, and the
	# next write starts the WAL over.
	t_ok "$([ "$frames" -lt 14000 ]; echo $?)" "the WAL stays bounded ($frames frames < 14,000)"
fi
t_is "$(lc attr.get '{"name":"w","key":"user.k0"}' | jq -r '.value | ltrimstr("'"$v"'")')" 20000 \
	"the last write of a key is the one read"
kill -9 "$LPID"
wait "$LPID" 2>/dev/null
t_run "catalogue consistent after kill -9" lt_check_db
lt_start || t_ok 1 "librarian restarts"
t_is "$(lc attr.get '{"name":"w","key":"user.k49"}' | jq -r '.value | ltrimstr("'"$v"'")')" 19999 \
	"acknowledged writes survive kill -9"
lt_stop
t_done
