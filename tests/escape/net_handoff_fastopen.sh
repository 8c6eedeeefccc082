#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): sendto/sendmsg/sendmmsg with an address and
# MSG_FASTOPEN, TCP_FASTOPEN_CONNECT then connect(), and an IP_OPTIONS source route, on the handed-off
# socket.
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host in 12 s of racing threads; the Fast Open sends
# and IP_OPTIONS fail with EPERM.
. "$(dirname "$0")/handoff.bash"
unguarded fastopen
race fastopen
finish
