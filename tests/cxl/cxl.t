#!/bin/bash
# LFS-TEST: vm
# CXL-attached persistent memory (issue 17 item 4; docs/CXL.md): two QEMU
# CXL type-3 devices beside an NVDIMM (vmrun --cxl). First boot: LFS
# attaches the pmem devices of the CXL regions, builds shelves on CXL books
# and across CXL and NVDIMM books, ext4 -o dax, MAP_SYNC, bytes on the CXL
# memory, the udev rules. Second boot on the same files: the regions must
# be made again, the namespaces and the data come back. On $KVER; skipped
# on a kernel built without CXL pmem regions.
. tests/lib/tap.sh
. tests/lib/shmfabric.sh

kver=$(tools/kernels resolve "${KVER:-6.1}") || exit 1
config=/boot/config-$kver
[ -r "$config" ] || config=/lib/modules/$kver/config
missing=
for o in CXL_BUS CXL_ACPI CXL_PCI CXL_MEM CXL_PMEM CXL_REGION LIBNVDIMM BLK_DEV_PMEM FS_DAX; do
	grep -qE "^CONFIG_$o=(y|m)$" "$config" 2>/dev/null || missing="$missing CONFIG_$o"
done
if [ ! -r "$config" ] || [ -n "$missing" ]; then
	echo "1..0 # SKIP kernel $kver cannot make CXL pmem regions (${missing:- no config at $config}) "
	exit 77
fi

shm_fabric_reap
FAB=$(shm_fabric_mkdir lfs-fabric) || { echo "not ok 1 - cannot make a fabric directory in /dev/shm"; exit 1; }
OUT=tests/out/cxl-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT"
trap 'rm -rf "$FAB"' EXIT

# Re-number the guest's TAP lines into this file's plan.
replay() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok 0 "${line#ok * - }" ;;
		"not ok "*) t_ok 1 "${line#not ok * - }" ;;
		"#"*) printf '%s\n' "$line" ;;
		esac
	done
}

VM=(tests/vm/vmrun --fabric-dir "$FAB" --fabric-nodes 1 --fabric-size 512M --cxl 2 --cxl-size 512M
	--timeout 900)
"${VM[@]}" --name cxl-boot1 --out "$OUT/boot1" tests/cxl/guest/boot1.sh >"$OUT/boot1.tap" 2>&1
rc=$?
replay <"$OUT/boot1.tap"
t_is "$rc" 0 "first boot on $kver: the guest script passed and the kernel stayed clean" ||
	t_diag "$(grep -E '^not ok - vm|console log' "$OUT/boot1.tap")"

mkdir -p "$OUT/boot2/share"
cp "$OUT"/boot1/share/{cxl-namespaces,cxl.sha,mixed.sha} "$OUT/boot2/share/" 2>/dev/null
"${VM[@]}" --name cxl-boot2 --out "$OUT/boot2" --cxl-raw --fabric-ready tests/cxl/guest/boot2.sh \
	>"$OUT/boot2.tap" 2>&1
rc=$?
replay <"$OUT/boot2.tap"
t_is "$rc" 0 "second boot on $kver: the guest script passed and the kernel stayed clean" ||
	t_diag "$(grep -E '^not ok - vm|console log' "$OUT/boot2.tap")"
t_done
