#!/bin/bash
# LFS-TEST: vm
# The long netlink fuzz of make check-debug (docs/TESTING.md, "The debug
# kernel"): LFS_NLFUZZ_COUNT random generic netlink messages (default
# 100000: nine tenths as root, one tenth as nobody) at lfs.ko with two
# fabrics and shelves present, seeded (LFS_NLFUZZ_SEED, default 17) so that a
# failure replays. The module must survive: no WARN, BUG, KASAN or lockdep
# report (the harness boots with panic_on_warn=1 and fails on any), a
# shelf still works afterwards, everything is removed and rmmod is clean.
# Any kernel also checks its slab objects here (slub_debug=FZPU: red zones,
# poison, consistency checks at free) and, where built in (6.12, 7.x),
# samples them with KFENCE at every allocation it can: a weaker net than
# KASAN's, for the kernels that are not the debug one.
# Not in the default selection of tests/run (too slow outside a debug
# kernel's run): tests/run debug, or make check-debug.
seed=${LFS_NLFUZZ_SEED:-17}
count=${LFS_NLFUZZ_COUNT:-100000}
exec tests/vm/vmrun --fabric-nodes 2 --timeout 1800 --append "slub_debug=FZPU kfence.sample_interval=1" \
	--env LFS_NLFUZZ_SEED="$seed" --env LFS_NLFUZZ_COUNT="$count" tests/debug/guest/nlfuzz.sh
