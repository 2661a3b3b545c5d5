# Guest-side setup shared by the lfsvol VM tests (sourced, bash).
# Needs LFS_LIBRARIAN (from --guestfwd) and LFS_KEY (node01's key, hex).
. "$LFS_TOP/tests/lib/tap.sh"

LFSVOL_BIN=$LFS_TOP/lvmish/lfsvol/lfsvol
CONF=/tmp/lfs.conf
L() { "$LFSVOL_BIN" -c "$CONF" "$@"; }

write_conf() {
	umask 077
	printf '%s\n' "$LFS_KEY" >/tmp/node01.key
	umask 022
	cat >"$CONF" <<EOC
librarian = "$LFS_LIBRARIAN";
node = "node01";
key_file = "/tmp/node01.key";
connect_timeout = 20;
fabric = (
	{ ig = 0; numa_node = 0; },
	{ ig = 1; device = "/dev/pmem1"; }
);
shelves = (
	{ name = "auto1"; policy = "Spread"; auto_activate = true; }
);
agent = { state_dir = "/run/lfs"; };
EOC
}

# udevd with the project's rules, the auto-assembly rule pointing at this tree.
start_udev() {
	mkdir -p /run/udev/rules.d
	cp "$LFS_TOP/udev/60-lfs.rules" /run/udev/rules.d/
	sed "s#/usr/local/sbin/lfsvol#$LFSVOL_BIN -c $CONF#" "$LFS_TOP/udev/61-lfs-assemble.rules" \
		>/run/udev/rules.d/61-lfs-assemble.rules
	/lib/systemd/systemd-udevd --daemon || return 1
	udevadm control --reload
	udevadm trigger --subsystem-match=block --action=add
	udevadm settle --timeout=120
}

# wait_for SECONDS CMD...: poll a condition with a deadline
wait_for() {
	local end=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# book_is_zero IG BOOK: the 64 MiB book reads as zeros on its fabric device
book_is_zero() {
	dd if=/dev/pmem"$1" bs=1M skip=$((2 + $2 * 64)) count=64 iflag=direct status=none |
		cmp -s - <(head -c 64M /dev/zero)
}
