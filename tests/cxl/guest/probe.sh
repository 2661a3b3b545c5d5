#!/bin/bash
# A manual check of volatile CXL memory under QEMU 10 (docs/CXL.md,
# "Volatile CXL: what the harness has"), not part of make check:
#   tests/vm/vmrun --cxl 1 --cxl-volatile --fabric-dir DIR tests/cxl/guest/probe.sh
# Makes a RAM region on the device, binds its dax device to device_dax,
# prints the first bytes of the memory and writes a pattern there: a
# second run on the same DIR prints it (the memory is its backing file).
. "$LFS_TOP/tests/cxl/guest/lib.sh"
set -e
for m in cxl_acpi cxl_pci cxl_port cxl_mem dax_cxl device_dax; do modprobe "$m"; done
udevadm settle 2>/dev/null || true
mem=$(cxl_memdevs | head -n 1)
region=$(cxl_make_ram_region "$mem")
echo "probe: $(uname -r): $mem -> $region"
dax=$(daxctl list -r "${region#region}" -D | jq -r '.[0].chardev')
daxctl reconfigure-device -m devdax -f "$dax" >/dev/null
python3 - "/dev/$dax" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 2 << 20, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
print("probe: %s first bytes %r" % (sys.argv[1], bytes(m[:16])))
m[:16] = b"LFS-VOLATILE-CXL"
PY
