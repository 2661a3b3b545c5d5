#!/bin/bash
# LFS-TEST: vm smp
# Leases and fencing of the filesystem's files: the node's lease covers them
# (it cannot be given up while one is open), its expiry revokes a live
# mapping (SIGBUS in the process that maps it) and read, write, mmap and
# open give EIO until the file is closed; the fence action "reset" is not
# taken for them. LFS_CMD_SHELF_FENCE revokes a file by name.
# See tests/namespace/guest/fence.sh.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 300 tests/namespace/guest/fence.sh
