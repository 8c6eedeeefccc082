#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h) through x86_64's 32-bit entry point (int 0x80),
# which --seccomp relaxed and none admit (seccomp/floor.txt: %compat filter): i386 connect() and
# socketcall(SYS_CONNECT) with AF_UNSPEC then to another port, and i386 bind()+listen(), on the
# handed-off socket. The hand-off's filter (connect_notify.cc) notifies the native numbers only.
# Policy: --net 127.0.0.1:ALLOWED (transparent), --seccomp relaxed, then none.
# Expected: nothing reaches 127.0.0.1:FORBIDDEN on the host and no host socket listens, under both
# profiles (the default profile kills 32-bit calls: not this test's concern).
. "$(dirname "$0")/handoff.bash"
[ "$(uname -m)" = x86_64 ] || { echo "skip: int 0x80 is x86_64's"; exit 77; }
cc -O2 -o "$work/compat" "$escape_dir/handoff_compat.c" || { fail "cannot build handoff_compat.c"; finish; }
chmod 755 "$work/compat"
# Without cage: the same calls reach FORBIDDEN (the trick works; the kernel has IA32 emulation).
before=$(forbidden_count)
"$work/compat" $allowed $forbidden >/dev/null 2>&1
if [ "$(forbidden_count)" != "$before" ]; then pass "32-bit connect without cage reaches the forbidden listener"
else echo "skip: 32-bit calls do not work on this kernel (no IA32 emulation?)"; exit 77; fi
for profile in relaxed none; do
  before=$(forbidden_count)
  cage_run --seccomp "$profile" --ro "$work" --net 127.0.0.1:$allowed -- "$work/compat" $allowed $forbidden
  [ "$rc" -eq 0 ] || { fail "$profile: the helper exited $rc: $err"; continue; }
  n=$(awk '/^handoffs/ { print $2 }' <<<"$out") l=$(awk '/^listened/ { print $2 }' <<<"$out")
  got=$(($(forbidden_count) - before))
  [ "${l:-0}" -eq 0 ] || fail "$profile: a host socket was put in listen by i386 bind/listen: $out"
  if [ "$got" -ne 0 ]; then
    fail "$profile: the forbidden listener got $got connection(s) from the sandbox (32-bit connect): $out"
  elif [ "${n:-0}" -eq 0 ]; then
    pass "$profile: no socket handed off (the relay carries this profile's connections), nothing reached FORBIDDEN"
  else
    pass "$profile: $n hand-offs attacked with 32-bit calls, nothing reached 127.0.0.1:$forbidden"
  fi
done
finish
