#!/bin/bash
# LFS-TEST: vm
# Networking of the harness: --guestfwd reaches a server on the host's
# 127.0.0.1 for every new connection (QEMU user networking, restrict=on).
. tests/lib/tap.sh
port=
for p in $(shuf -i 20000-32000 -n 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { port=$p; break; }
done
socat TCP4-LISTEN:"$port",bind=127.0.0.1,reuseaddr,fork EXEC:cat &
spid=$!
trap 'kill $spid 2>/dev/null' EXIT
tests/vm/vmrun --fabric-nodes 0 --guestfwd "$port" --timeout 180 tests/vm/guest/net.sh
exit $?
