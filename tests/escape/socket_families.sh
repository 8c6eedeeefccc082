#!/usr/bin/env bash
# Attack: leave the network namespace through a socket family it does not contain. AF_VSOCK keys its
# sockets by (cid, port) alone: a workload in its own network namespace bound and reached the host's
# vsock ports under --seccomp relaxed and none (found by the attack review). Also AF_QIPCRTR (a global
# router) and a family number no kernel has yet (50).
# Policy: default grants (own network namespace; Landlock-only: no namespace), --seccomp default,
# relaxed and none. Expected: socket() fails with EPERM under every profile (seccomp/floor.txt).
# Twins: unix, inet, inet6 and netlink-route sockets work under every profile; relaxed still lets
# AF_ALG (kernel crypto, not a network) reach the kernel.
. "$(dirname "$0")/lib.bash"
require_sandbox
probe='import socket, sys
def make(fam, typ, proto=0):
    try:
        s = socket.socket(fam, typ, proto)
        if fam == 40:
            s.bind((socket.VMADDR_CID_ANY, 45678))
        return "ok"
    except OSError as e:
        return str(e.errno)
print("vsock", make(40, socket.SOCK_STREAM), "qipcrtr", make(42, socket.SOCK_DGRAM), "future", make(50, socket.SOCK_STREAM))
print("unix", make(1, socket.SOCK_STREAM), "inet", make(2, socket.SOCK_STREAM), "inet6", make(10, socket.SOCK_DGRAM),
      "route", make(16, socket.SOCK_RAW, 0), "alg", make(38, socket.SOCK_SEQPACKET))'
for prof in default relaxed none; do
  cage_run --seccomp "$prof" -- "$py" -c "$probe"
  [[ "$out" == *"vsock 1 qipcrtr 1 future 1"* ]] && pass "--seccomp $prof: vsock, qipcrtr and unknown families refused (EPERM)" ||
    fail "--seccomp $prof: a family outside the network namespace: exit $rc, $out $err"
  if landlock_only; then
    # Landlock-only: the mechanism's own supplement allows internet sockets alone.
    [[ "$out" == *"inet ok"* ]] && pass "twin --seccomp $prof: inet works (Landlock-only)" || fail "twin: $out $err"
  else
    [[ "$out" == *"unix ok inet ok inet6 ok route ok"* ]] && pass "twin --seccomp $prof: unix, inet, inet6, netlink route work" ||
      fail "twin --seccomp $prof: $out $err"
    [ "$prof" != relaxed ] || [[ "$out" != *"alg 1"* ]] && pass "twin: AF_ALG under $prof as the profile says" ||
      fail "relaxed refused AF_ALG: $out"
  fi
done
finish
