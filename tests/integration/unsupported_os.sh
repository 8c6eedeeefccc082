#!/usr/bin/env bash
# A build for an OS cage has no sandbox for (issue 22, point 11): it builds, parses and validates as
# everywhere, and refuses every run, --check, --self-test and its own --dry-run as
# spawn_sandbox_unavailable (exit 125), with the command never started. `--dry-run --target macos`
# still prints that OS's plan. The binary under test is cage_unsupported: main.cc with
# src/backend/unsupported.cc, built on Linux for an OS named "plan9".
. "$(dirname "$0")/../escape/lib.bash"
u=${CAGE_UNSUPPORTED:?cage_unsupported not built}
rc=0; "$u" -- touch "$work/ran" 2>"$work/err" || rc=$?
[ "$rc" -eq 125 ] && grep -q 'spawn_sandbox_unavailable' "$work/err" && grep -q 'plan9' "$work/err" &&
  pass "a run is refused: 125 spawn_sandbox_unavailable naming the OS" || fail "run: exit $rc $(cat "$work/err")"
[ ! -e "$work/ran" ] && pass "the command never started" || fail "the command ran unconfined"
rc=0; "$u" --json-errors -- true 2>"$work/err" || rc=$?
[ "$rc" -eq 125 ] && python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); e=e["error"]; assert e["class"]=="spawn_sandbox_unavailable", e' "$work/err" &&
  pass "--json-errors: the refusal as JSON" || fail "--json-errors: exit $rc $(cat "$work/err")"
for flag in --check --self-test --dry-run; do
  rc=0; "$u" $flag -- true 2>"$work/err" >/dev/null || rc=$?
  [ "$rc" -eq 125 ] && grep -q 'spawn_sandbox_unavailable' "$work/err" && pass "$flag refused (125)" ||
    fail "$flag: exit $rc $(cat "$work/err")"
done
# The allowed twins: the portable front still works.
rc=0; "$u" --dry-run --target macos --ro "$work" -- true >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 0 ] && grep -q 'sandbox-exec' "$work/out" && pass "--dry-run --target macos prints the macOS plan" ||
  fail "--target macos: exit $rc $(cat "$work/err" "$work/out")"
rc=0; "$u" --memory lots -- true 2>"$work/err" || rc=$?
[ "$rc" -eq 125 ] && grep -q -- '--memory' "$work/err" && ! grep -q spawn_sandbox_unavailable "$work/err" &&
  pass "a bad input is still named before the refusal" || fail "bad input: exit $rc $(cat "$work/err")"
finish
