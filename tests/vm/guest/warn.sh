#!/bin/bash
# Harness self-test: a kernel WARN in the guest (the script itself succeeds).
insmod "$LFS_WARN_KO"
exit 0
