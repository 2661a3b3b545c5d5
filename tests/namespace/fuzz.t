#!/bin/bash
# LFS-TEST: vm smp
# A model-checked fuzz of the filesystem against the test upcall server:
# 10,000 random create, truncate, fallocate, rename, unlink, setxattr, open,
# mmap, write, store, read, fsync and close calls, every result and byte
# compared with a model, under panic_on_warn; then 2,000 with attr_timeout=0,
# and two fuzzers at once on names of their own, 3,000 calls each.
# LFS_FUZZ_SEED=N replays a run (the calls; not how two interleave).
# See tests/namespace/lfsfuzz.c.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 900 \
	${LFS_FUZZ_SEED:+--env LFS_FUZZ_SEED=$LFS_FUZZ_SEED} tests/namespace/guest/fuzz.sh
