# Shared by the guest scripts of tests/cxl. Source after tests/lib/tap.sh
# and tests/driver/guest/lib.sh.

# The CXL memory devices in the order of their serial numbers, as vmrun
# numbered them (cxlI.img has serial 0x4c465300 + I).
cxl_memdevs() { cxl list -M | jq -r 'sort_by(.serial) | .[].memdev'; }

# The serial number of MEMDEV: what names a device from one boot to the
# next (the memN names follow probe order, which changes).
cxl_serial_of() { cxl list -M -m "$1" | jq -r '.[0].serial'; }

# The pmem region of MEMDEV, empty if it has none (cxl list -m does not
# filter regions: match their mappings).
cxl_region_of() {
	cxl list -R -T 2>/dev/null |
		jq -r --arg m "$1" '[.[] | select(any(.mappings[]?; .memdev == $m)) | .region][0] // empty'
}

# The fsdax namespace of REGION as JSON: dev, uuid, blockdev.
cxl_namespace_of() {
	ndctl list -r "$1" -N 2>/dev/null | jq -c '[.[] | select(.mode == "fsdax")][0] // empty'
}

# A pmem region on MEMDEV under the root decoder (the fixed memory window)
# that reaches it; prints the region's name.
cxl_make_region() {
	local root
	root=$(cxl list -D -d root -m "$1" | jq -r '.[0].decoder // empty')
	[ -n "$root" ] || return 1
	cxl create-region -m -t pmem -d "$root" -w 1 "$1" | jq -r .region
}

# The udev rules under test, with the auto-assembly pass replaced by a
# recorder: it logs the device each RUN was for, so the test sees which
# devices would start an agent pass. udevd is started by hand, as in
# tests/lvmish (no systemd in this guest).
start_udev_recording() {
	local rec=/tmp/record-assembly
	printf '#!/bin/sh\necho "$ACTION $DEVNAME" >>/tmp/assembly.log\n' >$rec
	chmod +x $rec
	mkdir -p /run/udev/rules.d
	cp "$LFS_TOP/udev/60-lfs.rules" /run/udev/rules.d/
	sed "s#/usr/local/sbin/lfsvol agent --once#$rec#" "$LFS_TOP/udev/61-lfs-assemble.rules" \
		>/run/udev/rules.d/61-lfs-assemble.rules
	grep -q "RUN+=\"$rec\"" /run/udev/rules.d/61-lfs-assemble.rules || return 1
	/lib/systemd/systemd-udevd --daemon || return 1
	udevadm control --reload
	udevadm trigger --subsystem-match=block --action=add
	udevadm settle --timeout=120
}

# A RAM (volatile) region on MEMDEV, through sysfs: Debian 12's cxl tool
# (ndctl 76) refuses `create-region -t ram` ("not supported yet"). Linux
# 6.3 and later (create_ram_region); prints the region's name. The region's
# dax device comes up without a driver (dax_cxl asks for kmem): bind it
# with `daxctl reconfigure-device -m devdax -f daxN.0`.
cxl_make_ram_region() {
	local B=/sys/bus/cxl/devices root ep edec region size
	root=$(cxl list -D -d root -m "$1" | jq -r '.[0].decoder // empty')
	ep=$(cxl list -E -m "$1" | jq -r '.[0].endpoint // empty')
	size=$(cxl list -M -m "$1" | jq -r '.[0].ram_size // 0')
	[ -n "$root" ] && [ -n "$ep" ] && [ "$size" -gt 0 ] && [ -e "$B/$root/create_ram_region" ] || return 1
	edec=$(basename "$(ls -d "$B/$ep"/decoder* | head -n 1)")
	echo ram >"$B/$edec/mode" && echo "$size" >"$B/$edec/dpa_size" || return 1
	region=$(cat "$B/$root/create_ram_region") && echo "$region" >"$B/$root/create_ram_region" || return 1
	cat "$B/$root/interleave_granularity" >"$B/$region/interleave_granularity" &&
		echo 1 >"$B/$region/interleave_ways" && echo "$size" >"$B/$region/size" &&
		echo "$edec" >"$B/$region/target0" && echo 1 >"$B/$region/commit" &&
		echo "$region" >/sys/bus/cxl/drivers/cxl_region/bind || return 1
	echo "$region"
}
