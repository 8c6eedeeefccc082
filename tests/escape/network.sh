#!/usr/bin/env bash
# Attack: reach the host's network from a sandbox started without --net: a TCP listener on the host's
# 127.0.0.1, an abstract unix socket and a path unix socket (in an ungranted directory) the host
# listens on, a host datagram socket there (like /dev/log) sent to from a socketpair, raw and packet
# sockets, DNS.
# Policy: default view (own network namespace, loopback only). Expected: all fail. Twins: loopback
# inside the sandbox works; with --share-net (the audited escape hatch) the same host listener is
# reachable, so the denial is the namespace's doing.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/hidden"
# The listener lives until the test ends (at_exit): no timeout of its own, which under emulation
# expired before the last twin connected to it.
"$py" -c '
import socket, sys, time
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind(("127.0.0.1", 0)); t.listen(16)
a = socket.socket(socket.AF_UNIX); a.bind(sys.argv[1].replace("@", "\0", 1)); a.listen(16)
p = socket.socket(socket.AF_UNIX); p.bind(sys.argv[2]); p.listen(16)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind(sys.argv[3])
print(t.getsockname()[1], flush=True)
open(sys.argv[4], "wb").write(d.recv(100))' "@cage-escape-$$" "$work/hidden/sock" "$work/hidden/dgram" "$work/got" >"$work/port" &
listener=$!
at_exit "kill $listener"
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
[ -n "$port" ] || { fail "host listener did not start"; finish; }
connect() {  # ADDRESS: python inside cage; prints CONNECTED or the error
  cat <<PY
import socket, sys
a = sys.argv[1]
if a.startswith("tcp:"):
    s = socket.socket(); s.settimeout(3); addr = ("127.0.0.1", int(a[4:]))
else:
    s = socket.socket(socket.AF_UNIX); addr = a.replace("@", "\0", 1)
try:
    s.connect(addr); print("CONNECTED")
except OSError as e:
    print("denied", e)
PY
}
cage_run --share-net -- "$py" -c "$(connect)" "tcp:$port"
[ "$out" = CONNECTED ] && pass "twin: --share-net reaches the host listener" || fail "twin: --share-net: $out $err"
cage_run -- "$py" -c "$(connect)" "tcp:$port"
grep -q CONNECTED <<<"$out" && fail "host 127.0.0.1:$port reachable without --net" || pass "host TCP unreachable ($out)"
cage_run -- "$py" -c "$(connect)" "@cage-escape-$$"
grep -q CONNECTED <<<"$out" && fail "host abstract socket reachable" || pass "host abstract socket unreachable ($out)"
cage_run -- "$py" -c "$(connect)" "$work/hidden/sock"
grep -q CONNECTED <<<"$out" && fail "host path socket in an ungranted dir reachable" || pass "host path socket unreachable ($out)"
# --share-net gives the host network, not the host's unix sockets (session bus, docker.sock, agents).
cage_run --share-net -- "$py" -c "$(connect)" "$work/hidden/sock"
grep -q CONNECTED <<<"$out" && fail "--share-net: host path socket in an ungranted dir reachable" ||
  pass "--share-net: host path socket unreachable ($out)"
# A socketpair needs no socket(AF_UNIX): a datagram pair may name any destination in sendto/sendmsg.
cage_run -- "$py" -c '
import socket, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
a.send(b"x"); assert b.recv(1) == b"x"
print("stream pair ok")
for typ in (socket.SOCK_DGRAM, socket.SOCK_RAW):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, typ); a.sendto(b"from-the-sandbox", sys.argv[1]); print("SENT")
    except OSError as e:
        print("denied", e.errno)' "$work/hidden/dgram"
sleep 0.2
[ -s "$work/got" ] && fail "a datagram reached the host socket in an ungranted dir: $(cat "$work/got")" ||
  pass "host datagram socket unreachable from a socketpair ($(echo $out))"
grep -q "stream pair ok" <<<"$out" && pass "twin: a stream socketpair works" || fail "twin: stream socketpair: $out $err"
cage_run -- "$py" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); print("loopback ok")'
if landlock_only; then  # no private loopback without a network namespace: listening is refused too
  [ "$out" != "loopback ok" ] && pass "Landlock-only: no loopback server can be opened" || fail "listened on the host's loopback"
else
  [ "$out" = "loopback ok" ] && pass "twin: loopback inside the sandbox works" || fail "twin: loopback inside: $out $err"
fi
cage_run -- "$py" -c '
import socket
for fam, typ, proto in ((socket.AF_INET, socket.SOCK_RAW, 1), (socket.AF_INET6, socket.SOCK_RAW, 58),
                        (socket.AF_PACKET, socket.SOCK_RAW, 0), (socket.AF_INET, socket.SOCK_PACKET, 0)):
    try:
        socket.socket(fam, typ, proto); print("OPENED", fam, typ)
    except OSError as e:
        print("denied", e.errno)'
grep -q OPENED <<<"$out" && fail "raw socket opened: $out" || pass "raw and packet sockets fail"
cage_run -- "$py" -c '
import socket
try:
    print("RESOLVED", socket.getaddrinfo("debian.org", 443))
except OSError as e:
    print("denied", e)'
grep -q RESOLVED <<<"$out" && fail "DNS resolves without --net: $out" || pass "no resolver reachable ($out)"
cage_run -- sh -c 'ls /sys/class/net 2>/dev/null || cat /proc/net/dev'
if landlock_only; then
  pass "Landlock-only: the host's interfaces are visible in /proc/net (documented), none is usable"
else
  grep -q -e eth -e ens -e enp -e wl <<<"$out" && fail "host interfaces visible: $out" || pass "only lo in the sandbox"
fi
# The --net shim shares the workload's namespaces: taken over, it must hold nothing to use. Its twin,
# the proxy path through it, must still work (a request reaches the host listener's port).
if ! landlock_only; then
  cage_run --net "127.0.0.1:$port" -- sh -c '
    for p in /proc/[0-9]*; do
      [ "${p#/proc/}" = 1 ] && continue
      [ "$(sed -n "s/^Name:[[:space:]]*//p" "$p/status")" = cage ] || continue
      echo "shim $(sed -n -e "s/^CapEff:[[:space:]]*//p" -e "s/^CapPrm:[[:space:]]*//p" -e "s/^NoNewPrivs:[[:space:]]*//p" "$p/status" | tr "\n" " ")"
      echo "shim fds $(ls "$p/fd" 2>/dev/null | sort -n | tr "\n" " ")"
    done'
  # With the egress hand-off, the performer (src/linux/performer.h) is a fork of init as well: the
  # same holds for it.
  caps=$(grep '^shim [0-9]' <<<"$out")
  if [ -n "$caps" ] && ! grep -qv '^shim 0000000000000000 0000000000000000 1 $' <<<"$caps"; then
    pass "the --net shim (and the performer) hold no capability, no_new_privs"
  else
    fail "the --net shim: $out $err"
  fi
  # A fork of init, it keeps only its listener and its channel: not init's error and status pipes,
  # not the caller's stdio; the performer only its channel. (Listed where the workload may list
  # another process's fds: as root.)
  fds=$(sed -n 's/^shim fds //p' <<<"$out" | sort | tr '\n' '|')
  case "$fds" in
    "|" | "||") pass "the shim's descriptors are not listable here" ;;
    "3 4 |") pass "the --net shim holds only its listener and channel (fds 3 4)" ;;
    "3 |3 4 |") pass "the --net shim holds only its listener and channel (fds 3 4), the performer its channel (3)" ;;
    *) fail "the --net shim holds fds: $fds" ;;
  esac
  cage_run --net "127.0.0.1:$port" -- "$py" -c '
import os, socket
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT 127.0.0.1:'"$port"' HTTP/1.1\r\nHost: x\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode())'
  grep -q '^HTTP/1.1 200' <<<"$out" && pass "twin: the confined shim still carries a CONNECT to the allowed port" ||
    fail "CONNECT through the shim: $out $err"
fi
finish
