#!/bin/bash
# LFS-TEST: vm
# Device-DAX fabrics (issue 32 item 1; docs/CXL.md "Device-DAX fabrics"):
# a volatile CXL RAM region of QEMU 10 (vmrun --cxl-volatile), its dax
# device bound to fsdev_dax (7.x) or left unbound for lfs.ko to map (6.12),
# attached as an IG; shelves on it with ext4 -o dax and plain DAX mmap, no
# MAP_SYNC; bad input refused; an unbind under an active shelf (7.x), a
# bind refused while attached (6.12). 6.1 has no CXL RAM regions: there an
# NVDIMM namespace in devdax mode, unbound, persistent (MAP_SYNC allowed).
. tests/lib/tap.sh
. tests/lib/shmfabric.sh

kver=$(tools/kernels resolve "${KVER:-6.1}") || exit 1
# A volatile CXL region needs RAM regions (6.3 and later) and QEMU 10; 6.1
# has none: there the device-DAX is an NVDIMM namespace in devdax mode.
config=/boot/config-$kver
[ -r "$config" ] || config=/lib/modules/$kver/config
VM=(--cxl 1 --cxl-volatile --cxl-size 512M)
if ! grep -q '^CONFIG_DEV_DAX_CXL=[ym]' "$config" 2>/dev/null; then
	VM=(--env LFS_DEVDAX=nvdimm)
elif ! tools/qemu10 path >/dev/null 2>&1; then
	echo "1..0 # SKIP no QEMU 10 for volatile CXL memory (make deps: tools/qemu10)"
	exit 77
fi
shm_fabric_reap
FAB=$(shm_fabric_mkdir lfs-fabric) || { echo "not ok 1 - cannot make a fabric directory in /dev/shm"; exit 1; }
OUT=tests/out/devdax-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT"
trap 'rm -rf "$FAB"' EXIT

tests/vm/vmrun --fabric-dir "$FAB" "${VM[@]}" --timeout 600 \
	--name devdax --out "$OUT/vm" tests/cxl/guest/devdax.sh >"$OUT/vm.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP"*) t_skip "${line#*# SKIP }" ;;
	"ok "*) t_ok 0 "${line#ok * - }" ;;
	"not ok "*) t_ok 1 "${line#not ok * - }" ;;
	"#"*) printf '%s\n' "$line" ;;
	esac
done <"$OUT/vm.tap"
t_is "$rc" 0 "the guest on $kver passed and the kernel stayed clean" ||
	t_diag "$(grep -E '^not ok - vm|console log' "$OUT/vm.tap")"
t_done
