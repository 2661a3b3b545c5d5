#!/bin/bash
# LFS-TEST: vm once
# `tests/demo --ha` (issue 34's demo) runs in CI: a pg_auto_failover
# formation, two librarians, two node VMs; node1 stores into an ext4 -o dax
# shelf through a MAP_SYNC mapping while the active librarian and then the
# database's primary are killed. The node VM keeps the shelf mounted and
# writable through both failovers: no kernel lease lapses, the writer never
# fails, and node2 reads the last value node1 stored.
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
if ! command -v pg_autoctl >/dev/null || [ ! -x "$PGBIN/initdb" ]; then
	echo "1..0 # SKIP no pg_autoctl or PostgreSQL 15 (make deps installs them)"
	exit 77
fi
. tests/lib/tap.sh
out=$(tests/demo --ha 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
t_is "$rc" 0 "tests/demo --ha exits 0"
t_like "$out" "^LFS HA demo: SUCCESS \(librarian failover [0-9]+ ms, database failover [0-9]+ ms" \
	"the demo ends with its success line"
t_like "$out" "lb: 127.0.0.1:[0-9]+, standby; its auth reply names the leader: \{\"name\":\"la\",\"epoch\":1\}" \
	"la leads, lb stands by and names it"
t_like "$out" "mmap\(MAP_SYNC\) of /mnt/ha/counter: allowed" "node1 maps the shelf's file with MAP_SYNC"
t_like "$out" "lb leads \(epoch 2\) [0-9]+ ms after the kill" "kill -9 of la: lb takes over with a new epoch"
t_like "$out" "node1 renews through lb [0-9]+ ms after the kill" "  node1's agent follows lb"
t_like "$out" "node2 renews through lb [0-9]+ ms after the kill" "  node2's agent follows lb"
t_like "$out" "la: standby 0, lb: leader 2" "la comes back as a standby"
t_like "$out" "node2 was promoted; the first change acknowledged [0-9]+ ms after the kill" \
	"kill -9 of the database's primary: node2 promoted, the librarians serve again"
t_like "$out" "no kernel lease lapsed on either node" "  no node's kernel lease lapsed"
t_like "$out" "node1's last value: ([0-9]+); node2 reads: \\1 fencewr1" \
	"node2 reads the last value node1 stored through both failovers"
t_like "$out" "librarian check on the new primary: .*consistent" "the catalogue is consistent"
t_like "$out" "^    no node fenced$" "no node fenced"
t_done
