#!/bin/bash
# LFS-TEST: vm
# Bad input table (specific errno and extack, nothing changed), EPERM without
# CAP_SYS_ADMIN, a random netlink fuzz loop, clean rmmod.
exec tests/vm/vmrun --fabric-nodes 2 --timeout 240 tests/driver/guest/badinput.sh
