#!/usr/bin/env bash
# Deaths with a word (issue 20, point 4): a run killed by the seccomp filter (159), stopped by
# --timeout (124) or OOM-killed under --memory (137) ends with exactly one line on stderr naming what
# killed it and the remedy; --quiet drops the line but not the exit status. Each next to its twin:
# the same run that ends normally (or of another cause) prints no such line.
set -u
: "${CAGE:?}" "${CAGE_PROBE:?}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
probe_dir=$(dirname "$CAGE_PROBE")
# run ARGS...: cage ARGS, stderr in $err, exit status in $rc
run() { rc=0; "$CAGE" "$@" >"$work/out" 2>"$work/err" || rc=$?; err=$(cat "$work/err"); }
notes() { grep -c '^cage: the command was' <<<"$err"; }

run --ro "$probe_dir" -- "$CAGE_PROBE" syscall getpid
if [ "$rc" -ne 0 ]; then
  grep -q spawn_sandbox_unavailable <<<"$err" && { echo "skip: $err"; exit 77; }
  echo "FAIL: the sandbox does not start: $err" >&2; exit 1
fi

# seccomp: settimeofday is killed under the default profile, refused (not killed) under relaxed
run --ro "$probe_dir" -- "$CAGE_PROBE" syscall settimeofday
[ "$rc" -eq 159 ] || fail "settimeofday under default: exit $rc, want 159"
[ "$(wc -l <"$work/err")" -eq 1 ] && [ "$(notes)" -eq 1 ] || fail "seccomp kill: not one line: $err"
grep -q 'seccomp filter (SIGSYS' <<<"$err" && grep -q 'settimeofday' <<<"$err" && grep -q -- '--seccomp relaxed' <<<"$err" ||
  fail "seccomp note lacks the cause, the call or the remedy: $err"
run --quiet --ro "$probe_dir" -- "$CAGE_PROBE" syscall settimeofday
[ "$rc" -eq 159 ] && [ -z "$err" ] || fail "--quiet: exit $rc, stderr '$err'"
run --seccomp relaxed --ro "$probe_dir" -- "$CAGE_PROBE" syscall settimeofday
[ "$rc" -ne 159 ] && [ "$(notes)" -eq 0 ] || fail "relaxed twin: exit $rc, stderr '$err'"

# --timeout: the run that outlives it gets the note, the run that ends in time does not
run --timeout 300ms -- sleep 60
[ "$rc" -eq 124 ] || fail "timeout: exit $rc, want 124"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q 'stopped by --timeout 300ms' <<<"$err" && grep -q 'give it longer with --timeout' <<<"$err" ||
  fail "timeout note: $err"
run -q --timeout 300ms -- sleep 60
[ "$rc" -eq 124 ] && [ -z "$err" ] || fail "--quiet timeout: exit $rc, stderr '$err'"
run --timeout 60s -- true
[ "$rc" -eq 0 ] && [ -z "$err" ] || fail "timeout twin: exit $rc, stderr '$err'"

# A death by a signal cage did not send is the command's own business: no note.
run -- sh -c 'kill -KILL $$'
[ "$rc" -eq 137 ] && [ "$(notes)" -eq 0 ] || fail "SIGKILL from the command itself: exit $rc, stderr '$err'"

# OOM: only where a cgroup enforces --memory (elsewhere RLIMIT_AS makes allocations fail instead)
hog='x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done'
if "$CAGE" --memory 32M --dry-run --json -- true 2>/dev/null |
  python3 -c 'import json,sys; p=json.load(sys.stdin); sys.exit(0 if p["limits"]["cgroup"]["version"] and not p["limits"]["cgroup"]["not_enforced"] else 1)'; then
  run --memory 32M -- sh -c "$hog"
  [ "$rc" -eq 137 ] || fail "memory hog: exit $rc, want 137"
  grep -q "OOM killer: the sandbox reached --memory 32M" <<<"$err" && grep -q 'raise --memory' <<<"$err" &&
    [ "$(notes)" -eq 1 ] || fail "OOM note: $err"
  run --memory 32M -- sh -c 'echo small'
  [ "$rc" -eq 0 ] && [ -z "$err" ] || fail "OOM twin: exit $rc, stderr '$err'"
else
  echo "note: no cgroup enforces --memory here (as $(id -un)): the OOM note is not reached" >&2
fi

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
echo ok
