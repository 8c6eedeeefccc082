# Shared by tests/integration/seccomp_*.sh (sourced; not a test itself: no .sh suffix).
# run_probe PROFILE ARGS...: runs cage-probe ARGS inside cage with --seccomp PROFILE, sets $rc.
# expect WANT PROFILE ARGS...: fails the test unless the probe exits WANT (159 = killed by SIGSYS).
: "${CAGE:?CAGE must point at the cage binary}" "${CAGE_PROBE:?CAGE_PROBE must point at cage-probe}"
probe_dir=$(dirname "$CAGE_PROBE")
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
run_probe() {
  local profile=$1; shift
  rc=0
  "$CAGE" --seccomp "$profile" --ro "$probe_dir" -- "$CAGE_PROBE" "$@" >"$work/out" 2>"$work/err" || rc=$?
}
expect() {
  local want=$1 profile=$2; shift 2
  run_probe "$profile" "$@"
  if [ "$rc" -eq 121 ]; then echo "note: '$*' does not exist on this architecture" >&2; return; fi
  [ "$rc" -eq "$want" ] || fail "--seccomp $profile: cage-probe $* exited $rc, want $want: $(cat "$work/err")"
}
expect_not() {
  local not=$1 profile=$2; shift 2
  run_probe "$profile" "$@"
  [ "$rc" -ne "$not" ] || fail "--seccomp $profile: cage-probe $* exited $rc, which it must not: $(cat "$work/err")"
}
# The sandbox must work at all before a denial means anything.
require_sandbox() {
  run_probe "${1:-default}" syscall getpid
  if [ "$rc" -ne 0 ]; then
    if grep -q spawn_sandbox_unavailable "$work/err"; then echo "skip: $(cat "$work/err")" >&2; exit 77; fi
    echo "FAIL: cage-probe getpid inside cage exited $rc: $(cat "$work/err")" >&2
    exit 1
  fi
}
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
  echo "ok"
}
