#!/bin/bash
# LFS-TEST: vm smp
# A renewal after the deadline never un-fences a shelf (issue 30): with the
# lease's fence work held in the fence of one shelf (a remapped write in
# flight on a frozen loop fabric), a second leased shelf refuses writes
# from the deadline on, and still does after a late renewal.
exec tests/vm/vmrun --fabric-nodes 1 --fabric-size 512M --timeout 240 tests/driver/guest/fencelate.sh
