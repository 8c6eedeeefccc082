#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): after connect(AF_UNSPEC), bind() and listen() on the
# handed-off socket (a host port open to the network).
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host in 12 s of racing threads; no host socket ever
# listens.
. "$(dirname "$0")/handoff.bash"
unguarded bindlisten
race bindlisten
finish
