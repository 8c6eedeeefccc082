#!/usr/bin/env bash
# Attack: rewrite cage's own record of the run: with the --audit log (or the --result file) inside a
# --rw grant, the workload truncates it (erasing the spawn event and any denials) and appends a
# forged event. Policy: --rw $work/rw --audit|--result $work/rw/FILE.
# Expected: refused before the command runs (125, invalid_policy naming the flag and the grant).
# Twin: the same run with the log outside the grants keeps cage's own events, spawn to exit.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw"
forge="cat /dev/null >'$work/rw/log.jsonl'; echo '{\"type\":\"forged\"}' >>'$work/rw/log.jsonl'; echo RAN"
cage_run --rw "$work/rw" --audit "$work/rw/log.jsonl" -- sh -c "$forge"
expect_rc 125 "--audit inside --rw refused"
grep -q "invalid_policy" <<<"$err" && grep -q -- "--audit" <<<"$err" && grep -q -- "--rw" <<<"$err" ||
  fail "refusal does not name the flag and the grant: $err"
[ "$out" != RAN ] || fail "the command ran with its own audit log writable"
grep -q '"type":"forged"' "$work/rw/log.jsonl" 2>/dev/null && fail "a forged event is in the audit log"
cage_run --rw "$work/rw" --result "$work/rw/result.json" -- sh -c "echo '{}' >'$work/rw/result.json'; echo RAN"
expect_rc 125 "--result inside --rw refused"
[ "$out" != RAN ] || fail "the command ran with its own result file writable"
# Twin: outside the grants the log is cage's alone.
cage_run --rw "$work/rw" --audit "$work/log.jsonl" -- sh -c "echo '{\"type\":\"forged\"}' >>'$work/log.jsonl' 2>/dev/null; echo RAN"
expect_rc 0 "twin: --audit outside the grants"
[ "$out" = RAN ] || fail "twin: the command did not run: $err"
grep -q '"type":"spawn"' "$work/log.jsonl" && grep -q '"type":"exit"' "$work/log.jsonl" &&
  ! grep -q '"type":"forged"' "$work/log.jsonl" && pass "twin: spawn and exit recorded, nothing forged" ||
  fail "twin: audit log: $(cat "$work/log.jsonl")"
finish
