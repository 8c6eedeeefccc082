#!/usr/bin/env bash
# PENDING (fails today; not globbed). Attack: talk to a host service through a unix socket file that
# lies in a --ro grant (think ~/.docker/run/docker.sock or /run/user/N/bus under a read-only grant of
# the directory).
# Policy: --ro $work/ro, where the host listens on $work/ro/sock. Decision: a read-only grant gives
# read access to files, not a channel to a host service; connecting to a unix socket is a write in
# the kernel's model (unix_find_bsd() asks path permission MAY_WRITE), so it must fail inside --ro.
# Today it succeeds: a read-only bind mount does not stop it (sb_permission's EROFS applies to
# regular files, dirs and links only, and the mount's RDONLY flag is checked by mnt_want_write, which
# connect never calls), and Landlock (ABI <= 6) has no right for connecting to path sockets.
# Twin: with --rw $work/ro the connection works.
. "$(dirname "$0")/../lib.bash"
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
[ "$out" = CONNECTED ] && pass "twin: --rw grant: socket connects" || fail "twin: $out $err"
cage_run --ro "$work/ro" -- "$py" -c "$code" "$work/ro/sock"
grep -q CONNECTED <<<"$out" && fail "connected to a host socket in a --ro grant" || pass "--ro socket refused ($out)"
finish
