#!/usr/bin/env bash
# Fault: a storm of signals at cage during start-up and the run (EINTR everywhere). SIGWINCH (ignored
# by default) must not disturb the run at all; SIGUSR1 is forwarded, so the workload either handles
# it or dies of it (138) - never a hang, a 125, or debris.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
storm() {  # SIGNAL PID: send SIGNAL to PID until it exits
  # Not before PID is cage: until bash's forked child has exec'd, a signal would hit bash itself
  # (which then runs this script's EXIT trap and removes the work directory).
  local exe i
  exe=$(readlink -f "$CAGE")
  for i in $(seq 2000); do [ "$(readlink "/proc/$2/exe" 2>/dev/null)" = "$exe" ] && break; done
  while kill -s "$1" "$2" 2>/dev/null; do :; done
}
for i in $(seq 5); do
  "$CAGE" -- sh -c 'sleep 0.5; echo done' >"$work/out" 2>&1 &
  pid=$!
  storm WINCH "$pid" &
  st=0; wait "$pid" || st=$?
  wait
  [ "$st" -eq 0 ] && [ "$(cat "$work/out")" = done ] || fail "SIGWINCH storm run $i: exit $st, $(cat "$work/out")"
done
pass "5 runs under a SIGWINCH storm completed"
for i in $(seq 5); do
  "$CAGE" -- sh -c 'trap "" USR1; sleep 0.5; echo done' >"$work/out" 2>&1 &
  pid=$!
  storm USR1 "$pid" &
  st=0; wait "$pid" || st=$?
  wait
  case $st in
    0 | 138) ;;
    *) fail "SIGUSR1 storm run $i: exit $st, $(cat "$work/out")" ;;
  esac
done
pass "5 runs under a SIGUSR1 storm ended with 0 or 138"
finish
