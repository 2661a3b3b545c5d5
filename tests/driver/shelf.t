#!/bin/bash
# LFS-TEST: vm smp
# A shelf over two fabric devices: ext4 -o dax with MAP_SYNC, grow while
# mounted, refusals while open, raw I/O across books checked on the devices,
# PMD faults compared with raw pmem, poisoned memory (hwpoison injected into
# a shelf's file and a free book: EIO, SIGBUS, the bad ranges listed), rmmod
# and reload. See tests/driver/guest/shelf.sh and poison.sh.
exec tests/vm/vmrun --fabric-nodes 2 --timeout 240 tests/driver/guest/shelf.sh
