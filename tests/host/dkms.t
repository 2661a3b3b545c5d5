#!/bin/bash
# LFS-TEST: vm
# DKMS as a user runs it: make install puts the source tree in
# /usr/src/lfs-VERSION (here under a scratch DESTDIR), Debian's dkms adds,
# builds and installs lfs.ko from it for kernels other than the one
# running (6.12 with the host's dkms, 7.x with Debian 13's in the chroot:
# tools/kernels dkms), into scratch trees; then each kernel boots in a VM
# and loads that module, makes a shelf and reads back what it wrote.
# The host's /var/lib/dkms and /lib/modules are left alone (checked).
. tests/lib/tap.sh
KERNELS=${LFS_DKMS_KERNELS:-6.12 7}
# Under the project tree: the guest sees it at $LFS_TOP.
mkdir -p tests/out
S=$(mktemp -d "$PWD/tests/out/dkms.XXXXXX")
trap 'rm -rf "$S"' EXIT
ver=$(cat VERSION)
touch "$S/stamp"

t_run "make install DESTDIR=scratch" make -s install DESTDIR="$S/dest" || t_done
src=$S/dest/usr/src/lfs-$ver
t_is "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")" "$ver" "dkms.conf carries VERSION ($ver)"
# dkms signs what it builds: a key of this test's own, not the host's.
mkdir -p "$S/mok"
export mok_signing_key=$S/mok/mok.key mok_certificate=$S/mok/mok.pub

for k in $KERNELS; do
	kver=$(tools/kernels resolve "$k") || { t_ok 1 "kernel $k is installed (make deps)"; continue; }
	t_ok "$([ "$kver" != "$(uname -r)" ]; echo $?)" "$kver is not the running kernel ($(uname -r))"
	d=$S/$kver
	mkdir -p "$d/dkms" "$d/lib/modules/$kver"
	# what a kernel's modules tree holds besides the modules, for depmod
	cp /lib/modules/"$kver"/modules.{order,builtin,builtin.modinfo} "$d/lib/modules/$kver/"
	trees=(--dkmstree "$d/dkms" --sourcetree "$S/dest/usr/src" --installtree "$d/lib/modules")
	start=$SECONDS
	t_run "[$kver] dkms add lfs/$ver" tools/kernels dkms "$kver" add "lfs/$ver" "${trees[@]}" &&
		t_run "[$kver] dkms build lfs/$ver" tools/kernels dkms "$kver" build "lfs/$ver" "${trees[@]}" &&
		t_run "[$kver] dkms install lfs/$ver" tools/kernels dkms "$kver" install "lfs/$ver" "${trees[@]}"
	t_diag "[$kver] dkms add, build, install: $((SECONDS - start)) s"
	t_is "$(tools/kernels dkms "$kver" status "lfs/$ver" "${trees[@]}" 2>/dev/null | grep '^lfs/')" \
		"lfs/$ver, $kver, x86_64: installed" "[$kver] dkms status: installed"
	ko=$(ls "$d/lib/modules/$kver"/updates/dkms/lfs.ko* 2>/dev/null | head -n 1)
	t_ok "$([ -n "$ko" ]; echo $?)" "[$kver] the module is in the scratch tree's updates/dkms (${ko#"$S"/})" || continue
	vermagic=$(modinfo -F vermagic "$ko")
	t_is "${vermagic%% *}" "$kver" "[$kver] built for $kver (vermagic)"
	# a signature names its certificate by serial number
	t_is "$(modinfo -F sig_key "$ko" | tr -d :)" "$(openssl x509 -inform DER -in "$mok_certificate" -noout -serial |
		sed 's/^serial=//')" "[$kver] signed with this test's DKMS key"
	t_like "$(grep -c . "$d/lib/modules/$kver/modules.dep")" "^[1-9]" "[$kver] depmod ran on the scratch tree"
	t_is "$(grep -o '^updates/dkms/lfs.ko[^:]*' "$d/lib/modules/$kver/modules.dep")" "${ko#"$d/lib/modules/$kver/"}" \
		"[$kver] modules.dep lists it"
	t_is "$(find /lib/modules/"$kver" /var/lib/dkms -newer "$S/stamp" \( -name 'lfs*' -o -name 'modules.dep' \) 2>/dev/null)" "" \
		"[$kver] the host's /lib/modules/$kver and /var/lib/dkms are untouched"

	KVER=$kver "${LFS_VMRUN:-tests/vm/vmrun}" --name "dkms-$kver" --out "$S/vm-$kver" --fabric-nodes 1 \
		--fabric-size 512M --timeout 240 tests/host/dkms-guest.sh "${ko#"$PWD"/}" "$kver" \
		>"$S/vm-$kver.tap" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok 0 "[$kver] ${line#ok * - }" ;;
		"not ok "*) t_ok 1 "[$kver] ${line#not ok * - }" ;;
		"#"*) printf '%s\n' "$line" ;;
		esac
	done <"$S/vm-$kver.tap"
	t_is "$rc" 0 "[$kver] the guest passed and its kernel stayed clean" ||
		cp -r "$S/vm-$kver" "tests/out/dkms-vm-$kver-$$" 2>/dev/null
done
t_done
