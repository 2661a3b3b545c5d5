#!/bin/bash
# LFS-TEST: vm
# The upcall channel: no server (ENOTCONN at once), registration rules,
# replies in many parts, a stopped server (ETIMEDOUT after upcall_timeout),
# a server killed with requests pending, a caller killed while it waits,
# replies the kernel refuses (bad book maps, sizes past the books), the
# server's errnos passed on, read-only shelves, many callers at once.
# See tests/namespace/guest/upcall.sh.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 400 tests/namespace/guest/upcall.sh
