#!/bin/bash
# HPE's original librarian (tm-librarian, Python + SQLite) measured on this
# host, for side-by-side ratios (bench/librarian/run.sh with ORIG=DIR runs it
# first; docs/bench-librarian.md). DIR is the src/ directory of a checkout of
# https://github.com/FabricAttachedMemory/tm-librarian (commit 1f43788 was
# measured); it needs only python3's standard library.
#
#   bench/librarian/orig.sh DIR [SECONDS] [BOOKS-PER-NODE]
#
# A catalogue of 40 nodes x BOOKS-PER-NODE books of 8 GiB (default 1,000:
# 40,000 books) made by its book_register.py; then, one client
# (orig-client.py): SECONDS of cycles (create_shelf, get_shelf +
# resize_shelf to 8 books, close_shelf, get_shelf + destroy_shelf: what its
# FUSE client sends for create, truncate, release, unlink) and 20 lists of
# 1,000 shelves. Its server listens on every address, so it runs in a
# network namespace of its own (unshare -n) that has only a loopback.
set -u
[ $# -ge 1 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
SRC=$(cd "$1" && pwd) || exit 1
SECS=${2:-10}
PER=${3:-1000}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$SRC/librarian.py" ] || [ ! -f "$SRC/book_register.py" ]; then
	echo "orig.sh: $SRC is not tm-librarian's src/" >&2
	exit 1
fi
T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/lfs-orig.XXXXXX")
trap 'rm -rf "$T"' EXIT
printf '[global]\nnode_count = 40\nbook_size_bytes = 8G\nnvm_size_per_node = %sB\n' "$PER" >"$T/fab.ini"
(cd "$SRC" && python3 book_register.py -f -d "$T/cat.db" "$T/fab.ini") >"$T/register.log" 2>&1 ||
	{ cat "$T/register.log" >&2; exit 1; }
echo "original (tm-librarian $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')), $((40 * PER)) books"
# shellcheck disable=SC2016 # the inner script's own variables
unshare -n bash -c '
	ip link set lo up || exit 1
	cd "$1" || exit 1
	python3 librarian.py --db_file "$2/cat.db" --port 9093 2>"$2/server.log" &
	pid=$!
	trap "kill $pid 2>/dev/null; wait" EXIT
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 9093))" 2>/dev/null && break
		kill -0 $pid 2>/dev/null || { cat "$2/server.log" >&2; exit 1; }
		sleep 0.1
	done
	python3 "$3/orig-client.py" 9093 cycle "$4" 8 && python3 "$3/orig-client.py" 9093 list 1000 20
' orig "$SRC" "$T" "$HERE" "$SECS"
