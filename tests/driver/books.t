#!/bin/bash
# LFS-TEST: vm
# Shelves of tens of thousands of books (multi-message lists), DAX and book
# size rules across fabric devices, dump consistency under concurrent change.
exec tests/vm/vmrun --fabric-nodes 2 --fabric-size 512M --timeout 240 tests/driver/guest/books.sh
