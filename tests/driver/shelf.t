#!/bin/bash
# LFS-TEST: vm smp
# A shelf over two fabric devices: ext4 -o dax with MAP_SYNC, grow while
# mounted, refusals while open, raw I/O across books checked on the devices,
# PMD faults compared with raw pmem, rmmod. See tests/driver/guest/shelf.sh.
exec tests/vm/vmrun --fabric-nodes 2 --timeout 240 tests/driver/guest/shelf.sh
