#!/bin/bash
# LFS-TEST: vm once
# A model-checked fuzz of the Library File System from two nodes, each
# served by its own agent and the one librarian: lfsfuzz runs on node1 (names
# af0..af5) and node2 (bf0..bf5) at the same time, 5,000 random create,
# truncate, fallocate, rename, unlink, setxattr, open, mmap, write, store,
# read, fsync and close calls each (10,000 in all), every result and byte
# checked against each one's model (tests/namespace/lfsfuzz.c). Then the
# views must agree: the librarian's catalogue (names, lfs.size), `lfsvol
# list' on both nodes, and the directory on both nodes (names, sizes); and
# every file reads back on the other node with the bytes and xattrs of the
# model of the node that wrote it. LFS_FUZZ_SEED=N replays the calls (not
# how the two nodes interleave).
. tests/lib/tap.sh
. tests/lib/machine.sh
. tests/lib/emachine.sh
trap em_cleanup EXIT
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

SEED=${LFS_FUZZ_SEED:-$(date +%s)}
CALLS=5000
EM_FENCE_ACTION=eio em_start 2 512M 2M >&2
t_ok $? "librarian and two nodes up, 2 MiB books ($MACHINE_OUT)" || t_done
n() {
	em_node "$1" "export PATH=\$LFS_TOP/build/tests:\$PATH
$2"
}
for i in 1 2; do
	out=$(n $i 'mkdir -p /tmp/lfs /tmp/model && mount -t lfs lfs /tmp/lfs && grep -c " /tmp/lfs lfs " /proc/mounts')
	t_is "$out" 1 "node$i: mount -t lfs lfs /tmp/lfs"
done
t_diag "seeds $SEED (node1, names af*) and $((SEED + 2)) (node2, bf*): LFS_FUZZ_SEED=$SEED"

# Both at once: each node's command runs in a host subshell of its own.
n 1 "LFSFUZZ_DUMP=/tmp/model lfsfuzz /tmp/lfs $CALLS $SEED a 2>&1" >"$MACHINE_OUT/fuzz1.out" &
p1=$!
n 2 "LFSFUZZ_DUMP=/tmp/model lfsfuzz /tmp/lfs $CALLS $((SEED + 2)) b 2>&1" >"$MACHINE_OUT/fuzz2.out" &
p2=$!
wait $p1
wait $p2
for i in 1 2; do
	t_like "$(cat "$MACHINE_OUT/fuzz$i.out")" "(^|\n)ok $CALLS calls$" \
		"node$i: $CALLS calls agree with its model" ||
		t_diag "$(grep -v '^#' "$MACHINE_OUT/fuzz$i.out" | tail -n 5; n $i 'tail -n 20 /tmp/agent.log')"
done
grep -h '^#' "$MACHINE_OUT/fuzz1.out" | head -n 40 | sed 's/^# /#   node1 /'

# --- the views agree ---------------------------------------------------------
# Names and sizes: the catalogue (lfs.size as "bytes"), each node's directory
# asked afresh (attr_timeout=0), and each node's `lfsvol list' (names, books).
cat_view=$(em_admin shelf.list '{"limit":1000}' | jq -r '.shelves[] | "\(.name):\(.bytes)"' | sort | paste -sd' ')
t_like "$cat_view" '^[ab]f' "the catalogue holds the fuzzers' files: $cat_view"
for i in 1 2; do
	dir_view=$(n $i 'mount -o remount,attr_timeout=0 /tmp/lfs && cd /tmp/lfs && for f in *; do echo "$f:$(stat -c %s "$f")"; done | sort | paste -sd" "')
	t_is "$dir_view" "$cat_view" "node$i's directory: the catalogue's names and sizes"
done
lib_view=$(em_admin shelf.list '{"limit":1000}' | jq -r '.shelves[] | "\(.name):\(.books)"' | sort | paste -sd' ')
for i in 1 2; do
	t_is "$(n $i 'L list --json | jq -r ".[] | \"\(.name):\(.books)\"" | sort | paste -sd" "')" "$lib_view" \
		"node$i's lfsvol list: the catalogue's names and books"
done

# Bytes and xattrs: each node's model against what the other node reads.
# seen DIR PFX: "NAME SHA256[:16] user.k=V,user.j=V" per file read there;
# model PFX: the same from the model in /tmp/model.
FNS='seen() {
	cd "$1" && for f in $(ls | grep "^$2"); do
		printf "%s %s %s\n" "$f" "$(sha256sum <"$f" | cut -c1-16)" \
			"$(getfattr --absolute-names -d -m "^user\.[kj]$" "$f" 2>/dev/null | sed -n "s/\"//g; /^user/p" | sort -r | paste -sd,)"
	done
}
model() {
	cd /tmp/model && for f in $(ls | grep "^$1" | grep -v "\.x$"); do
		printf "%s %s %s\n" "$f" "$(sha256sum <"$f" | cut -c1-16)" "$(paste -sd, "$f.x")"
	done
}'
for i in 1 2; do
	o=$((3 - i)) p=$([ $i = 1 ] && echo a || echo b)
	model=$(n $i "$FNS
model $p")
	t_diag "node$i's model: $(grep -c . <<<"$model") files left"
	t_is "$(n $o "$FNS
seen /tmp/lfs $p")" "$model" "node$o reads node$i's files with the bytes and xattrs of node$i's model"
done

for i in 1 2; do
	n $i 'umount /tmp/lfs' >/dev/null
	t_ok $? "node$i: umount"
done
em_stop
t_ok $? "both nodes power off with no kernel warning"
t_done
