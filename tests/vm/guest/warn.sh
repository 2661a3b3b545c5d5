#!/bin/bash
# Harness self-test: a kernel WARN in the guest (the script itself succeeds).
insmod "$LFS_TOP/tests/vm/warnmod/lfs_warn_test.ko"
exit 0
