#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): handed-off sockets passed over SCM_RIGHTS to another
# process of the sandbox, which disconnects, reconnects, binds, listens and sends with Fast Open.
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host in 12 s of racing threads.
. "$(dirname "$0")/handoff.bash"
# Its twin without cage: the same abuse in one process (a blocking connect in the receiving process
# without cage can wait on the forbidden listener's queue for as long as it likes).
unguarded unspec
race passed
finish
