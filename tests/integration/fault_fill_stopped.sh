#!/usr/bin/env bash
# --timeout holds while the supervisor waits for init to hand over the curated /etc (plan_fill,
# Launch::fill_view). Since the supervisor fills /etc itself it waited for init's descriptor in a
# blocking recvmsg before its supervise loop (the deadline, the signals) ran: an init stopped or stuck
# before the hand-over (kill -STOP, a --ro source on a hung FUSE or NFS mount: init opens the bind
# sources first) held `cage --timeout 1` forever, where a stop after the hand-over ends with 124.
# strace stops init (SIGSTOP injected) at fsopen, the hand-over's first call, which only init makes;
# twin: the same stop at pivot_root, after the fill; and the run without a fault. The run's command
# line names the work directory, so that the root and user variants (run at once) see their own.
# Needs strace; the namespaces mechanism only (Landlock alone builds no view, there is no fill).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no view of cage's own under Landlock alone" >&2; exit 77; }
command -v strace >/dev/null || { echo "skip: no strace" >&2; exit 77; }
scale=${CAGE_TEST_TIME_SCALE:-1}
limit=$((30 * scale))

cage_run --timeout 5 -- sh -c 'echo RAN'
expect_rc 0 "no fault: the run ends on its own within --timeout"

# stopped_at SYSCALL: runs `cage --timeout 1` with init stopped at SYSCALL; sets st, secs.
stopped_at() {
  local t0=$SECONDS
  st=0
  timeout -s KILL "$limit" strace -f -qq -o /dev/null -e trace="$1" -e inject="$1":signal=STOP \
    "$CAGE" --timeout 1 -- sh -c 'echo RAN' "$work" </dev/null >"$work/out" 2>"$work/err" || st=$?
  secs=$((SECONDS - t0))
}
for sc in pivot_root fsopen; do
  stopped_at "$sc"
  if [ "$sc" = fsopen ] && [ "$st" -eq 0 ] && grep -q RAN "$work/out"; then
    echo "skip: no fsopen here (this host's /etc gives the supervisor nothing to fill)" >&2
    continue
  fi
  if [ "$st" -eq 124 ] && ! grep -q RAN "$work/out"; then
    pass "init stopped at $sc: --timeout 1 ends the run (exit 124 after ${secs}s), nothing ran"
  else
    fail "init stopped at $sc: exit $st after ${secs}s (137: killed by the test's ${limit}s limit, the run hung); stdout: $(cat "$work/out"); stderr: $(head -c 300 "$work/err")"
  fi
  sleep 0.3
  pgrep -f "$CAGE --timeout 1 -- sh -c echo RAN $work" >/dev/null && fail "a process of the run is left" || pass "nothing left"
done
finish
