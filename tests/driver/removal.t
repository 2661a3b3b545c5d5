#!/bin/bash
# LFS-TEST: vm smp
# A removed shelf whose disk the reaper has not deleted yet: its sysfs book
# list read while its fabric device is detached, or lfs.ko unloaded, at
# once (issue 17 item 5). With slab poisoning, so freed memory shows. And the
# fabric's pmem unbound under a writer: its I/O fails, nothing faults.
# Two virtual CPUs on every kernel: sysrace pins its reader to CPU 1.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --cpus 2 --timeout 240 --append "slub_debug=P" \
	tests/driver/guest/removal.sh
