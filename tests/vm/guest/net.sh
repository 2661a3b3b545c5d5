#!/bin/bash
# Guest side of tests/vm/net.t: several successive connections to the host
# through the guestfwd each reach the host's loopback server.
. "$LFS_TOP/tests/lib/tap.sh"
host=${LFS_LIBRARIAN%:*} port=${LFS_LIBRARIAN#*:}
t_is "$host" 10.0.2.100 "the guest is told the forwarded address"
for i in 1 2 3; do
	reply=$(exec 3<>"/dev/tcp/$host/$port" && echo "hello $i" >&3 && timeout 20 head -n 1 <&3)
	t_is "$reply" "hello $i" "connection $i reaches the host's echo server"
done
reply=$(timeout 5 bash -c 'exec 3<>/dev/tcp/10.0.2.2/22 && echo reached' 2>/dev/null)
t_is "$reply" "" "restrict=on: the guest reaches nothing else (10.0.2.2:22)"
t_done
