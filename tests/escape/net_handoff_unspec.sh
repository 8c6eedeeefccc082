#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): connect(AF_UNSPEC) on the handed-off socket, then
# connect() to another port, from three threads at once.
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host in 12 s of racing threads; connect(AF_UNSPEC)
# and the second connect fail.
. "$(dirname "$0")/handoff.bash"
unguarded unspec
race unspec
finish
