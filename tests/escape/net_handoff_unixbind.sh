#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h, performer.h): bind() of a unix socket to a path,
# raced. One thread dup2()s a host socket whose connection has ended (a hand-off the server closed:
# bind() works on it) and a sandbox unix socket in turn over one number, two bind that number to an
# address a third flips between a unix path and a free port of the host's loopback. A bind that cage
# answered CONTINUE would be run by the kernel on whatever the number and the address are by then.
# Policy: --net 127.0.0.1:ALLOWED (transparent), --rw DIR for the twin.
# Expected: in 12 s of racing threads no host socket is ever bound (seen inside by the socket's network
# namespace, and from the host, which can bind the port all along), while the sandbox's own unix binds
# work; twin: a plain unix bind to a relative path works, under the workload's umask.
. "$(dirname "$0")/handoff.bash"
free=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# From the host, all along the run: whether the free port can be bound (held: a host socket has it).
"$py" - "$free" "$work/held" "$work/stop" <<'PY' & prober=$!
import errno, os, socket, sys, time
port, held, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
while not os.path.exists(stop):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            open(held, "a").write("held\n")
    s.close()
    time.sleep(0.2)
PY
at_exit "kill $prober"
cage_run --ro "$work" --net 127.0.0.1:$allowed -- "$work/race" unixbind $allowed $free "$secs"
touch "$work/stop"
wait "$prober"
[ "$rc" -eq 0 ] || fail "the helper exited $rc: $err"
n=$(awk '/^handoffs/ { print $2 }' <<<"$out") h=$(awk '/^hostbound/ { print $2 }' <<<"$out")
u=$(awk '/^unixbound/ { print $2 }' <<<"$out")
[ "${n:-0}" -gt 0 ] || fail "no socket was handed off (the attack tested nothing): $out $err"
[ "${u:-0}" -gt 0 ] || fail "no unix bind of the sandbox worked (the race tested nothing): $out $err"
[ "${h:-0}" -eq 0 ] || fail "a host socket was bound to 127.0.0.1:$free $h time(s) from the sandbox"
[ -s "$work/held" ] && fail "the host saw 127.0.0.1:$free held during the run ($(wc -l < "$work/held") time(s))"
[ "${n:-0}" -gt 0 ] && [ "${u:-0}" -gt 0 ] && [ "${h:-0}" -eq 0 ] && [ ! -s "$work/held" ] &&
  pass "$n hand-offs and $u unix binds raced for ${secs}s: no host socket bound to 127.0.0.1:$free"
# Twin: a relative unix path from the workload's cwd, under its umask, owned by the caller.
mkdir "$work/rw" && chmod 777 "$work/rw"
cage_run --rw "$work/rw" --net 127.0.0.1:$allowed -- sh -c "cd '$work/rw' && umask 027 && exec $py -c '
import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"b.sock\"); print(\"bound\")'"
mode=$(stat -c '%A %u' "$work/rw/b.sock" 2>/dev/null)
if [ "$out" = bound ] && [ "$mode" = "srwxr-x--- $(id -u)" ]; then
  pass "a relative unix bind works, under the workload's umask ($mode)"
else
  fail "relative unix bind: '$out' (exit $rc), socket '$mode', want 'srwxr-x--- $(id -u)': $err"
fi
finish
