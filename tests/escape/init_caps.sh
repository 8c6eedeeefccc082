#!/usr/bin/env bash
# Attack surface: cage's init (the workload's parent) is meant to drop every capability once the
# workload has started ("init keeps no privilege it does not need", init.cc), so that nothing in the
# sandbox holds one while the workload runs. Found (since the workload is started with
# CLONE_VM|CLONE_VFORK): the workload's process initialises libcap-ng's state in the memory it shares
# with init, caching its own pid; init's later capng_apply then calls capset(pid=<workload>) and gets
# EPERM, unchecked: init keeps all capabilities (as root caller with Landlock-only: the host's) and
# its bounding set for the whole run. Policy: default. Judged from the workload: init's
# /proc/PID/status. Twin: the workload's own capabilities are 0.
. "$(dirname "$0")/lib.bash"
# init drops them right after the workload's exec: the workload reads init's status up to 5000 times
# (no clock) until the effective set is empty, then reports what it saw last.
cage_run -- sh -c 'p=$PPID; i=0; while [ $i -lt 5000 ] && ! grep -q "^CapEff:[[:space:]]*0*\$" /proc/$p/status; do i=$((i+1)); done; grep -E "^Cap(Prm|Eff|Bnd):" /proc/$p/status | sed "s/^/init /"; grep -E "^Cap(Prm|Eff):" /proc/self/status | sed "s/^/self /"'
[ "$rc" -eq 0 ] || fail "exit $rc: $out $err"
grep -q '^self CapEff:[[:space:]]*0000000000000000' <<<"$out" && pass "twin: the workload holds no capability" ||
  fail "twin: workload caps: $out"
for f in CapPrm CapEff; do
  grep -q "^init $f:[[:space:]]*0000000000000000" <<<"$out" && pass "init's $f is empty" || fail "init keeps $f: $(grep "^init $f" <<<"$out")"
done
if is_root && ! landlock_only; then  # a root caller's init has CAP_SETPCAP, so it can and should empty its bounding set
  grep -q "^init CapBnd:[[:space:]]*0000000000000000" <<<"$out" && pass "init's bounding set is empty" ||
    fail "init keeps its bounding set: $(grep '^init CapBnd' <<<"$out")"
fi
finish
