#!/usr/bin/env bash
# README recipe "An AI agent's tool call": the README's own line, run with a workspace and a
# command. The tool's output and exit status are its own, its write lands in the workspace and
# nowhere else, result.json (fd 3) says completed with the exit code; the timeout twin ends as
# timed_out (124) with nothing of cage's own on stderr but a limit's warning (--quiet); a missing workspace is one JSON
# line on stderr (125) and a result of class invalid_policy.
. "$(dirname "$0")/recipe_lib.bash"
line=$(readme_line '--result fd:3 -- sh -c "$CMD" </dev/null 3>result.json')
run_line() {  # LINE: runs it in $work with WS and CMD; sets rc, out, err
  rc=0
  (cd "$work" && eval "$(as_cage "$1")") >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out"); err=$(cat "$work/.err")
}
field() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/result.json" "$1"; }
export WS=$work/ws CMD
mkdir "$WS"
CMD="echo made > out.txt; echo tool-output; echo tool-error >&2; echo escaped > $work/outside.txt; [ -t 0 ] && echo TTY; exit 3"
run_line "$line"
[ "$rc" -eq 3 ] && pass "exit status is the tool's (3)" || fail "exit $rc, want 3: $err"
[ "$out" = tool-output ] && pass "stdout is the tool's" || fail "stdout: $out"
grep -q '^tool-error$' <<<"$err" && pass "stderr carries the tool's" || fail "stderr: $err"
[ "$(cat "$WS/out.txt" 2>/dev/null)" = made ] && pass "the write reached the workspace" || fail "no out.txt in the workspace"
[ ! -e "$work/outside.txt" ] && pass "a write beside the workspace did not reach the host" || fail "outside.txt written"
[ "$(field exit_code)" = 3 ] && [ "$(field class)" = completed ] &&
  pass "result.json: completed, exit_code 3" || fail "result.json: $(cat "$work/result.json")"
# The timeout twin: the same line with a short limit.
CMD="sleep 600"
run_line "${line/--timeout 5m/--timeout 1s}"
# --quiet leaves only warnings: a limit of --limits default this host cannot enforce by a cgroup
# (an unprivileged user without a delegated cgroup), each also in result.json's limits.not_enforced.
own=$(grep -v '^cage: warning: .* is not enforced by a cgroup: ' <<<"$err" || true)
[ "$rc" -eq 124 ] && [ -z "$own" ] && pass "timeout: 124, nothing else of cage's own on stderr (--quiet)" ||
  fail "timeout: exit $rc, stderr: $err"
warned=$(grep -c '^cage: warning: ' <<<"$err" || true)
listed=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["limits"]["not_enforced"]))' "$work/result.json")
[ "$warned" = "$listed" ] && pass "each warning ($warned) is in result.json too" || fail "warnings $warned, listed $listed"
[ "$(field class)" = timed_out ] &&
  pass "result.json: timed_out" || fail "timeout result: $(cat "$work/result.json")"
# cage's own refusal: one JSON line, and the result says so.
WS=$work/missing CMD=true
run_line "$line"
if [ "$rc" -eq 125 ] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
  "$py" -c 'import json,sys; e=json.loads(sys.argv[1])["error"]; assert e["input"].startswith("--rw "), e' "$err"; then
  pass "missing workspace: one JSON error line: $err"
else
  fail "missing workspace: exit $rc: $err"
fi
[ "$(field class)" = invalid_policy ] &&
  pass "result.json: invalid_policy" || fail "refusal result: $(cat "$work/result.json")"
finish
