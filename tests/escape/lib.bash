# Shared by tests/escape/*.sh and tests/integration/{fault,badinput}_*.sh (sourced; no .sh suffix, so
# not a test itself). Gives each script a private work directory (usable by the unprivileged user),
# an empty start directory (so the implicit read-only cwd grant shows nothing), and helpers:
#   cage_run ARGS...     runs "$CAGE" ARGS with stdin from /dev/null; sets $rc, $out, $err
#   expect_rc WANT WHAT  fails unless the last cage_run exited WANT
#   fail MSG / pass MSG  record a failure / print progress;  finish  exits 1 on any failure
#   at_exit CMD          runs CMD (a string) when the script ends, before the work dir is removed
: "${CAGE:?CAGE must point at the cage binary}" "${CAGE_PROBE:?CAGE_PROBE must point at cage-probe}"
set -u
probe_dir=$(dirname "$CAGE_PROBE")
escape_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3
failures=0
_exit_hooks=()
work=$(mktemp -d /tmp/cage-escape.XXXXXX) || exit 1
chmod 755 "$work"
_cleanup() {
  # Only the script's own shell cleans up. A forked child of it (a background job before its exec)
  # that a test signals runs this trap too: bash's handler for a fatal signal runs the EXIT trap, and
  # the child then removed the work directory under the script (fault_term_startup, found by running
  # the suite five times in a row).
  [ "$BASHPID" = "$$" ] || return 0
  local h
  for h in "${_exit_hooks[@]}"; do eval "$h" 2>/dev/null; done
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap _cleanup EXIT
at_exit() { _exit_hooks+=("$1"); }
mkdir "$work/cwd" && cd "$work/cwd" || exit 1

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# CAGE_LANDLOCK_ONLY=1 (the escape.landlock_only.* variants): every run uses the Landlock-only mechanism, as on
# hosts that block user namespaces, accepting only the documented loss of pid isolation.
mech=()
[ "${CAGE_LANDLOCK_ONLY:-0}" = 1 ] && mech=(--mechanism landlock --allow-degraded pid)
landlock_only() { [ ${#mech[@]} -gt 0 ]; }
cage_run() {
  rc=0
  "$CAGE" ${mech[@]+"${mech[@]}"} "$@" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(tr -d '\0' <"$work/.out")
  err=$(tr -d '\0' <"$work/.err")
}
expect_rc() {
  if [ "$rc" -eq "$1" ]; then pass "$2 (exit $rc)"; else fail "$2: exit $rc, want $1; stdout: $out; stderr: $err"; fi
}
# The sandbox must work at all before a denial means anything.
require_sandbox() {
  cage_run --ro "$probe_dir" -- "$CAGE_PROBE" syscall getpid
  if [ "$rc" -ne 0 ]; then
    if grep -q spawn_sandbox_unavailable <<<"$err"; then echo "skip: $err" >&2; exit 77; fi
    echo "FAIL: cage-probe getpid inside cage exited $rc: $err" >&2
    exit 1
  fi
}
is_root() { [ "$(id -u)" -eq 0 ]; }
# The egress hand-off's Python-driven tests: skipped where no hand-off is made (Landlock only, a kernel
# before 5.14 without SO_NETNS_COOKIE) or python3 is missing.
require_handoff() {
  landlock_only && { echo "skip: egress hand-off is the namespace mechanism's (transparent --net)"; exit 77; }
  require_sandbox
  [ -x "$py" ] || { echo "skip: no $py"; exit 77; }
  grep -q '"handoff"' < <("$CAGE" --dry-run --json --net 127.0.0.1:1 -- true 2>/dev/null) ||
    { echo "skip: no hand-off on this kernel (SO_NETNS_COOKIE needs Linux 5.14)"; exit 77; }
}
. "$escape_dir/mechanism.bash"  # landlock_mechanism
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
  echo "all ok"
  exit 0
}
# pty_run ARGS... -- CMD...: tests/escape/pty_run.py (CMD on a fresh pty as its controlling terminal);
# sets $res to its JSON report. jget EXPR: a Python expression over that report (rc, output, inq, ...).
pty_run() { res=$("$py" "$escape_dir/pty_run.py" "$@"); }
jget() { "$py" -c 'import json, sys; print(eval(sys.argv[2], {}, json.loads(sys.argv[1])))' "$res" "$1"; }
