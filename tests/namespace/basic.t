#!/bin/bash
# LFS-TEST: vm
# The Library File System with the test upcall server: who may look (the
# uid=, gid=, mode= mount options, root alone by default), HPE's shell session
# (touch, setfattr, truncate, getfattr), cp/dd data, exact sizes, the errnos
# of the namespace, rename flags, rm while open, MAP_SYNC and PMD faults, a
# private copy-on-write mapping, growth by writes, SIGBUS past the end,
# shrinking a mapped file, shelves of the same name as block devices, and a
# poisoned page of a file (hwpoison_inject: EIO, SIGBUS, the pages beside it
# intact, the range listed).
# See tests/namespace/guest/basic.sh.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 400 tests/namespace/guest/basic.sh
