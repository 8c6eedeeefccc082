#!/usr/bin/env bash
# Attack: talk to a host service through a unix socket file that lies in a granted directory (think
# ~/.docker/run/docker.sock or /run/user/N/bus under a grant of the directory).
# Known limit, documented in cage(1): a read-only bind mount does not stop connect() (the kernel's
# EROFS check covers regular files, directories and links, and the mount's RDONLY flag is checked
# only when writing to the file system), and Landlock (ABI <= 7) has no right for connecting to path
# sockets; so --ro DIR still lets the workload connect to sockets inside DIR.
# Policy that stops it: --hide DIR/sock masks the socket. Twin: without the mask it connects.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro"
"$py" -c '
import socket, sys, time
p = socket.socket(socket.AF_UNIX); p.bind(sys.argv[1]); p.listen(16); time.sleep(60)' "$work/ro/sock" &
at_exit "kill $!"
for _ in $(seq 50); do [ -S "$work/ro/sock" ] && break; sleep 0.1; done
code='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("CONNECTED")
except OSError as e:
    print("denied", e)'
cage_run --rw "$work/ro" -- "$py" -c "$code" "$work/ro/sock"
if landlock_only; then  # every unix socket is refused without namespaces, granted or not
  grep -q CONNECTED <<<"$out" && fail "Landlock-only: connected to a host unix socket" || pass "Landlock-only: unix sockets refused ($out)"
else
  [ "$out" = CONNECTED ] && pass "twin: --rw grant: socket connects" || fail "twin: $out $err"
fi
cage_run --ro "$work/ro" --hide "$work/ro/sock" -- "$py" -c "$code" "$work/ro/sock"
grep -q CONNECTED <<<"$out" && fail "connected to a host socket masked by --hide" || pass "--hide socket refused ($out)"
# Started from /tmp (where X11, tmux and ssh-agent keep their sockets): the implicit read-only grant
# of the start directory does not apply there, so a server socket in the host's /tmp is not reachable.
shared_sock=/tmp/cage-escape-sock.$$
"$py" -c '
import socket, sys, time
p = socket.socket(socket.AF_UNIX); p.bind(sys.argv[1]); p.listen(16); time.sleep(60)' "$shared_sock" &
at_exit "kill $!; rm -f '$shared_sock'"
for _ in $(seq 50); do [ -S "$shared_sock" ] && break; sleep 0.1; done
out=$(cd /tmp && "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$probe_dir" -- "$py" -c "$code" "$shared_sock" 2>&1 </dev/null)
grep -q CONNECTED <<<"$out" && fail "started from /tmp, reached a host socket in /tmp" || pass "start in /tmp: host sockets there unreachable ($out)"
finish
