#!/bin/bash
# LFS-TEST: vm smp
# The node's lease in the kernel: leased shelves, renewals, the fence when
# the lease runs out (fence_action eio: bios fail, the writer stops, the
# fabric holds nothing written after the fence), SHELF_FENCE, a fence waiting
# for a remapped write held in flight by a frozen loop fabric; fabric labels
# (written once, checked at every attach, a mismatch refused with nothing
# written); BOOK_ZERO one book at a time, skipping busy books.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 240 tests/driver/guest/fence.sh
