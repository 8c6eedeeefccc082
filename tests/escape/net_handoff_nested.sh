#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): the workload stacks a seccomp filter of its own that
# turns connect, bind and listen into notifications for its own listener, and a thread of its own
# answers each with CONTINUE. Of two filters that answer SECCOMP_RET_USER_NOTIF the kernel notifies the
# newest one's listener only (kernel/seccomp.c: seccomp_run_filters keeps the first of equal actions),
# so cage's mediator would never see them, and the kernel would run connect(AF_UNSPEC), connect(),
# bind() and listen() on the host sockets handed off before the filter was added.
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host; no host socket ever listens.
. "$(dirname "$0")/handoff.bash"
unguarded nested
race nested
finish
