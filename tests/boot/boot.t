#!/bin/bash
# LFS-TEST: vm
# A real boot (issue 17): a Debian 12 root (tools/bootroot, made by make
# deps) with what make install installs, librarian.service and
# lfs-agent.service enabled, booted twice with systemd as PID 1 and
# Debian's own systemd-udevd.service on the same fabric files. The first
# boot makes shelves with the installed tools, one marked auto_activate in
# lfs.conf and one not, and writes data; in the second the shipped units
# and udev rules alone bring the auto_activate shelf back with its data and
# its /dev/lfs link, the other stays inactive, and every unit is clean.
# The librarian runs inside the guest, on loopback.
. tests/lib/tap.sh
kver=$(tools/kernels resolve "${KVER:-6.1}") || { echo "Bail out! no kernel ${KVER:-6.1} (make deps)"; exit 1; }
base=$(tools/bootroot path) || { echo "Bail out! no boot root: run 'make deps' as root"; exit 1; }
[ -x librarian/librarian ] || { echo "Bail out! librarian not built (run make)"; exit 1; }
# Under the project tree (the guests read their scripts there); the fabric
# on tmpfs (docs/EMULATION.md: pmem I/O on disk-backed files stalls).
mkdir -p tests/out
W=$(mktemp -d "$PWD/tests/out/boot.XXXXXX")
FAB=$(mktemp -d /dev/shm/lfs-boot-fabric.XXXXXX)
trap 'rm -rf "$FAB" "$W/root"' EXIT
root=$W/root
VMRUN=${LFS_VMRUN:-tests/vm/vmrun}

# The guest's TAP lines, renumbered into this file's plan.
replay() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok 0 "$1${line#ok * - }" ;;
		"not ok "*) t_ok 1 "$1${line#not ok * - }" ;;
		"#"*) printf '%s\n' "$line" ;;
		esac
	done
}

# The root: a copy of the cached one, the booted kernel's modules (hard
# links where the file system allows), then make install and the config an
# administrator would write. No file of the test harness but vmrun's unit.
make_root() {
	cp -a "$base" "$root" || return 1
	mkdir -p "$root/lib/modules/$kver" || return 1
	cp -al "/lib/modules/$kver/kernel" "$root/lib/modules/$kver/" 2>/dev/null ||
		cp -a "/lib/modules/$kver/kernel" "$root/lib/modules/$kver/" || return 1
	cp -a /lib/modules/"$kver"/modules.* "$root/lib/modules/$kver/" || return 1
	make -s install DESTDIR="$root" KVER="$kver" PREFIX=/usr/local >"$W/install.log" 2>&1 || return 1
	install -d -m 0700 "$root/etc/lfs/keys" || return 1
	librarian/librarian genkey "$root/etc/lfs/keys/node01.key" || return 1
	install -m 0600 "$root/etc/lfs/keys/node01.key" "$root/etc/lfs/node01.key" || return 1
	cat >"$root/etc/lfs/librarian.conf" <<EOC || return 1
# 2 IGs of 15 books of 64 MiB: what fits on the 1 GiB fsdax devices after
# the 2 MiB data offset.
librarian = {
	database = "/var/lib/lfs/librarian.db";
	listen = [ "127.0.0.1:9093", "unix:/run/lfs/librarian.sock" ];
	book_size = "64M";
	heartbeat_interval = 2;
	lease_time = 10;
	default_policy = "Spread";
	keys_dir = "/etc/lfs/keys";
};
fabric = { compact = { nodes = 1; igs = 2; books = 15; }; };
EOC
	cat >"$root/etc/lfs/lfs.conf" <<EOC || return 1
librarian = "127.0.0.1:9093";
node = "node01";
key_file = "/etc/lfs/node01.key";
connect_timeout = 5;
fabric = (
	{ ig = 0; numa_node = 0; },
	{ ig = 1; numa_node = 1; }
);
EOC
	systemctl --root="$root" enable librarian.service lfs-agent.service >>"$W/install.log" 2>&1
}

start=$SECONDS
t_run "a copy of the Debian 12 root with make install and lfs.conf, units enabled" make_root ||
	{ sed 's/^/#   /' "$W/install.log" | tail -n 20; t_done; }
t_is "$(readlink "$root/etc/systemd/system/multi-user.target.wants/lfs-agent.service")" \
	/lib/systemd/system/lfs-agent.service "lfs-agent.service is enabled"
t_is "$(grep -h '^IPAddressDeny' "$root/lib/systemd/system/systemd-udevd.service")" IPAddressDeny=any \
	"the root's systemd-udevd.service is Debian's, with IPAddressDeny=any"
t_diag "root ready in $((SECONDS - start)) s"

# The fabric files are converted to fsdax by a harness boot first: the
# systemd guest must not see them change mode under udev.
start=$SECONDS
"$VMRUN" --name boot-prep --out "$W/prep" --fabric-dir "$FAB" --timeout 300 tests/vm/guest/true.sh \
	>"$W/prep.tap" 2>&1
t_is "$?" 0 "the fabric files are converted to fsdax (a harness boot)" || sed 's/^/#   /' "$W/prep.tap"

for n in 1 2; do
	start=$SECONDS
	mkdir -p "$W/boot$n/share"
	[ "$n" = 2 ] && cp "$W"/boot1/share/*.sha "$W"/boot1/share/*.uuid "$W/boot2/share/" 2>/dev/null
	"$VMRUN" --name "boot$n" --out "$W/boot$n" --root "$root" --fabric-dir "$FAB" --fabric-ready \
		--timeout 900 tests/boot/guest/boot$n.sh >"$W/boot$n.tap" 2>&1
	rc=$?
	replay "boot $n: " <"$W/boot$n.tap"
	t_is "$rc" 0 "boot $n: the guest script passed and the kernel stayed clean" ||
		t_diag "journal: $W/boot$n/share/journal.txt"
	t_diag "boot $n took $((SECONDS - start)) s"
done
t_done
