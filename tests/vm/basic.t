#!/bin/bash
# LFS-TEST: vm
# Both emulated fabric devices are DAX-capable on their own NUMA nodes, and
# lfs.ko loads and unloads cleanly; the verdict comes back through the share.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 180 tests/vm/guest/basic.sh
