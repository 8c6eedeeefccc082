#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h): one thread dup2()s a handed-off socket and a fresh
# sandbox socket in turn over one number, two connect/bind/listen that number, and another flips the
# sockaddr they pass between the allowed address, a unix path, AF_UNSPEC and the forbidden one (the
# supervisor reads it once; the kernel would read it again).
# Policy: --net 127.0.0.1:ALLOWED (transparent: the workload's connect gets a socket of the host).
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host in 12 s of racing threads.
. "$(dirname "$0")/handoff.bash"
# Its twin without cage: the re-aim the swap races for, done plainly (the swap itself reaches the
# forbidden port without cage only when a fresh socket meets the forbidden address: too rare to wait for).
unguarded unspec
race swap
finish
