#!/bin/bash
# LFS-TEST: vm once
# `make demo` (the README's main job) runs in CI: the narrated two-node
# emulated Machine, the Library File System then block devices, ends with
# its success line and exit status 0.
. tests/lib/tap.sh
out=$(tests/demo 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
t_is "$rc" 0 "tests/demo exits 0"
t_like "$out" "^LFS demo: SUCCESS \(2 nodes" "the demo ends with its success line"
t_like "$out" "node1# truncate -s 64M /tmp/lfs/notes" "the filesystem part shows the shell managing the memory"
t_like "$out" "user.LFS.Interleave=\"1,0,1,0\"" "  getfattr -d shows the actual allocation"
t_like "$out" "identical: node2 read node1's bytes with read\(2\) and through a MAP_SYNC mapping" \
	"  node2 read and mapped the bytes node1 wrote"
t_like "$out" "identical: node2 read exactly what node1 wrote" "the block-device handover compared the data"
t_like "$out" "is active on node 'node1'" "node2's refusal named the holder"
t_done
