#!/bin/bash
# LFS-TEST: vm once smp
# Books of an active shelf moved to other books (LFS_CMD_BOOK_MOVE, issue 33)
# while ext4 -o dax on it is written by fio and through MAP_SYNC and
# MAP_SHARED mappings: nothing lost, the old books zeroed and unused, no
# WARN. 2 MiB and 64 MiB books, and a raw shelf. See guest/move.sh. Once:
# BOOK_MOVE is built for 6.1 only (EOPNOTSUPP from 6.8, docs/MOVE.md).
exec tests/vm/vmrun --fabric-nodes 2 --timeout 300 tests/driver/guest/move.sh
