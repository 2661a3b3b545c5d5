#!/bin/bash
# LFS-TEST: vm
# Production-sized 8 GiB books in the kernel: a shelf of two books on two
# fabric devices of 8 GiB + 16 MiB (sparse files on /dev/shm), data at its
# start, across the book boundary and at its end, ext4 -o dax and MAP_SYNC
# over both books. See tests/driver/guest/bigbooks.sh.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 8208M --timeout 180 tests/driver/guest/bigbooks.sh
