#!/bin/bash
# `make install` honours DESTDIR and PREFIX and installs the module, the
# tools, configs, udev rules, units, man pages and the DKMS source tree.
. tests/lib/tap.sh
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
kver=$(make -s -f - <<<'include Makefile
print-kver: ; @echo $(KVER)' print-kver 2>/dev/null)
t_run "make install DESTDIR=... PREFIX=/opt/lfs" make -s install DESTDIR="$dest" PREFIX=/opt/lfs
t_ok "$([ -s "$dest/lib/modules/$kver/extra/lfs.ko" ]; echo $?)" "lfs.ko installed under /lib/modules/$kver/extra"
t_ok "$([ -s "$dest/usr/src/lfs-$(cat VERSION)/dkms.conf" ]; echo $?)" "dkms.conf installed for DKMS rebuilds"
t_ok "$([ -s "$dest/usr/src/lfs-$(cat VERSION)/driver/Kbuild" ] && [ ! -e "$dest/usr/src/lfs-$(cat VERSION)/driver/lfs.ko" ]; echo $?)" "DKMS source tree holds sources, not build products"
for f in man/*.[1-8]; do
	[ -e "$f" ] || continue
	s=${f##*.}
	t_ok "$([ -s "$dest/opt/lfs/share/man/man$s/$(basename "$f")" ]; echo $?)" "man page $(basename "$f") installed under PREFIX"
done
for f in udev/*.rules; do
	[ -e "$f" ] || continue
	t_ok "$([ -s "$dest/lib/udev/rules.d/$(basename "$f")" ]; echo $?)" "udev rule $(basename "$f") installed"
done
t_ok "$([ -x "$dest/opt/lfs/sbin/lfsvol" ] && [ ! -e "$dest/opt/lfs/libexec/lfs" ]; echo $?)" \
	"lfsvol installed under PREFIX/sbin, one program (no libexec helper)"
t_like "$("$dest/opt/lfs/sbin/lfsvol" --help)" "^Usage: lfsvol" "the installed lfsvol runs"
t_is "$(find "$dest" -path "$dest/usr/local*" | head -n 1)" "" "nothing escapes PREFIX into /usr/local"
t_is "$(grep -rl /usr/local "$dest/lib" 2>/dev/null | head -n 1)" "" "udev rules and units call the tools under PREFIX, not /usr/local"
for f in "$dest"/lib/udev/rules.d/*.rules "$dest"/lib/systemd/system/*.service; do
	[ -e "$f" ] || continue
	for b in $(grep -o '/opt/lfs/s\?bin/[a-z]*' "$f" | sort -u); do
		t_ok "$([ -x "$dest$b" ]; echo $?)" "$(basename "$f") calls $b, which is installed"
	done
done
t_done
