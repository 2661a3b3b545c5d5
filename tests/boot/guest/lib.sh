# Shared by the guest scripts of tests/boot (bash, sourced): the guest
# booted its own root with systemd; the installed tools are in /usr/local.
. "$LFS_TOP/tests/lib/tap.sh"
L=/usr/local/sbin/lfsvol
export LFS_NO_COLOR=1

# wait_for SECONDS CMD...: poll a condition with a deadline
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

fabric_count() { "$L" status --json 2>/dev/null | jq '.[0].fabric | length'; }
both_attached() { [ "$(fabric_count)" = 2 ]; }

# The boot is over (no job left but this test's) and what systemd says.
boot_state() { timeout 300 systemctl is-system-running --wait; }

# Every unit clean: no failed unit, both LFS units active, their status
# commands exit 0 (systemctl status is 3 for an inactive unit).
check_units() {
	local tag=$1
	t_is "$(systemctl --failed --plain --no-legend --no-pager)" "" "$tag: systemctl --failed is empty"
	t_is "$(systemctl is-active librarian.service lfs-agent.service | tr '\n' ' ')" "active active " \
		"$tag: librarian.service and lfs-agent.service are active"
	systemctl status --no-pager librarian.service lfs-agent.service >/tmp/status.txt 2>&1
	t_is "$?" 0 "$tag: systemctl status of both units exits 0" || sed 's/^/#   /' /tmp/status.txt
}

# lfs-assemble@DEV.service ran at least once, succeeded, and no failure was
# hidden by its Restart=on-failure.
check_assembled() {
	local tag=$1 d
	for d in pmem0 pmem1; do
		t_is "$(systemctl show -p Result,NRestarts,ExecMainStatus --value "lfs-assemble@$d.service" | tr '\n' ' ')" \
			"success 0 0 " "$tag: udev started lfs-assemble@$d.service, it succeeded the first time"
	done
}
