#!/usr/bin/env bash
# Sockets under the Landlock-only mechanism: no TCP to a host loopback service, no UDP, no unix
# sockets, none of the ways around Landlock's TCP hooks (Fast Open, listen without bind, other stream
# protocols and families, io_uring); --share-net is the host network on purpose.
. "$(dirname "$0")/landlock_only.bash"
. "$(dirname "$0")/net_lib.bash"
# Network: no TCP to a host loopback service, no UDP, no unix sockets.
start_loopback_server listen; bg+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's listener did not start"
"$CAGE_PROBE" connect 127.0.0.1 "$port" >/dev/null 2>&1 || fail "twin: host service unreachable without cage"
if "${A[@]}" -- "$CAGE_PROBE" connect 127.0.0.1 "$port" >/dev/null 2>&1; then fail "reached a host TCP service"; fi
if "${A[@]}" -- python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>/dev/null; then fail "UDP socket allowed"; fi
if "${A[@]}" -- python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>/dev/null; then fail "unix socket allowed"; fi
# Ways around Landlock's TCP hooks are closed: Fast Open, listen() without bind, non-TCP stream
# protocols, other address families. The plain TCP socket (the twin) is still allowed.
out=$("${A[@]}" -- python3 -c "
import socket
for name, f in [('tfo', lambda: socket.socket().sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', $port))),
                ('listen', lambda: socket.socket().listen(1)),
                ('sctp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)),
                ('mptcp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)),
                ('dccp', lambda: socket.socket(socket.AF_INET, 6, 0)),
                ('vsock', lambda: socket.socket(40, socket.SOCK_STREAM)),
                ('tcp', lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 6))]:
    try:
        f(); print(name, 'ALLOWED')
    except OSError as e:
        print(name, 'denied')" 2>&1)
[ "$(echo $out)" = "tfo denied listen denied sctp denied mptcp denied dccp denied vsock denied tcp ALLOWED" ] ||
  fail "TCP side doors: $(echo $out)"
# io_uring (its connect bypasses the connect() check) is refused even with --seccomp none.
# The probe calls io_uring_setup(0, NULL): a kernel that lets the call in fails copying the NULL
# parameters with EFAULT, so EFAULT shows the call reached io_uring, EPERM that something refused it.
out=$("${A[@]}" --seccomp none -- "$CAGE_PROBE" syscall io_uring_setup 2>&1)
grep -q EPERM <<<"$out" || fail "io_uring under --seccomp none: $out"
# With namespaces too: io_uring is in the seccomp floor, under every profile (its requests pass no filter).
out=$("$CAGE" --mechanism namespaces --no-cwd --ro "$probe_dir" --seccomp none -- "$CAGE_PROBE" syscall io_uring_setup 2>&1)
grep -q EPERM <<<"$out" || fail "io_uring with namespaces and --seccomp none: $out"
# --share-net is the host network on purpose: UDP works there.
"${L[@]}" --allow-degraded pid --share-net -- python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" ||
  fail "--share-net: UDP refused"
nothing_left
echo "landlock_only_sockets: ok"
