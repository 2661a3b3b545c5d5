#!/bin/bash
# LFS-TEST: vm
# The VM caches under concurrent use: the emulated Machine's nodes boot
# together, so on a fresh clone two guests build the initramfs and the PVH
# vmlinux of one kernel at the same moment. Both must boot, and the cache
# must hold whole images and no leftovers. (The first `make demo` of a
# fresh clone failed here: both wrote one `.tmp` file and the second
# rename found it gone.)
. tests/lib/tap.sh

cache=$(mktemp -d "$PWD/build/vmcache-test.XXXXXX")
trap 'rm -rf "$cache" "$PWD/tests/out/cache-$$-"*' EXIT
kver=$(tools/kernels resolve "${KVER:-6.1}")

boot() {
	LFS_VM_CACHE=$cache tests/vm/vmrun --fabric-nodes 0 --timeout 120 --name "$1" \
		--out "$PWD/tests/out/cache-$$-$1" tests/vm/guest/true.sh
}
# The builders alone, four at once on an empty cache, eight times: the
# old initramfs builder failed in about one call of five here.
bad=0
for round in 1 2 3 4 5 6 7 8; do
	rm -rf "${cache:?}"/*
	pids=()
	for i in 1 2 3 4; do
		LFS_VM_CACHE=$cache tests/vm/mkinitramfs "$kver" >/dev/null 2>>"$cache.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || bad=$((bad + 1))
	done
done
t_is "$bad" 0 "32 builds of the initramfs, four at once on an empty cache, all succeed" ||
	sort "$cache.err" | uniq -c | head -n 5 | sed 's/^/#   /'
rm -f "$cache.err"

rm -rf "${cache:?}"/*
boot a >"$cache.a.log" 2>&1 &
a=$!
boot b >"$cache.b.log" 2>&1 &
b=$!
wait "$a"
ra=$?
wait "$b"
rb=$?
t_is "$ra $rb" "0 0" "two guests started at once on an empty cache both boot" ||
	tail -n 5 "$cache.a.log" "$cache.b.log" | sed 's/^/#   /'
rm -f "$cache.a.log" "$cache.b.log"

img=$cache/initramfs-$kver.cpio
t_ok "$(cpio -it --quiet <"$img" 2>/dev/null | grep -qx init; echo $?)" \
	"the cached initramfs is a whole archive (it holds /init)"
left=$(find "$cache" -name '*.tmp*' | wc -l)
t_is "$left" 0 "no temporary file is left in the cache"
t_done
