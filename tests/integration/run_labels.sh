#!/usr/bin/env bash
# --label and --run-id (issue 22, point 6): the caller's labels and the run id are in every audit
# event, in the --result record and in --json-errors; the workload sees $CAGE_RUN_ID; a supplied run
# id is used as given, a malformed one or a bad label is refused (exit 125, nothing started) next to
# its accepted twin; --dry-run shows them and --print-profile carries the labels, never the run id.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
json() { "$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
lines() { "$py" -c 'import json, sys; [print(eval(sys.argv[2], {}, {"d": json.loads(l)})) for l in open(sys.argv[1])]' "$@"; }

cage_run --label team=infra --label "ticket=OPS 7" --audit "$work/a.log" --result "$work/r.json" -- \
  sh -c 'echo "$CAGE_RUN_ID"'
expect_rc 0 "a labelled run"
id=$(json "$work/r.json" 'd["run_id"]')
[[ "$id" =~ ^[0-9a-f]{32}$ ]] && pass "generated run id $id" || fail "generated run id: '$id'"
[ "$out" = "$id" ] && pass "\$CAGE_RUN_ID inside is the run id" || fail "CAGE_RUN_ID inside: '$out', want $id"
[ "$(json "$work/r.json" 'd["labels"]')" = "{'team': 'infra', 'ticket': 'OPS 7'}" ] &&
  pass "labels in the result" || fail "result labels: $(json "$work/r.json" 'd.get("labels")')"
n=$(wc -l <"$work/a.log")
[ "$n" -ge 2 ] && [ "$(lines "$work/a.log" '(d["run_id"], d.get("labels"))' | sort -u)" = "('$id', {'team': 'infra', 'ticket': 'OPS 7'})" ] &&
  pass "run id and labels in each of the $n audit events" || fail "audit events: $(cat "$work/a.log")"

schema() {  # SCHEMA FILE [--lines]
  "$py" "$CAGE_SOURCE_DIR/tests/integration/limits_schema.py" "$CAGE_SOURCE_DIR/docs/schema/$1.schema.json" "${@:2}" ||
    fail "$2 does not match $1.schema.json"
}
schema result "$work/r.json"
schema audit-event "$work/a.log" --lines

cage_run --run-id build-42.x --audit "$work/b.log" --result "$work/s.json" -- sh -c 'echo "$CAGE_RUN_ID"'
expect_rc 0 "a run with --run-id"
[ "$out" = build-42.x ] && [ "$(json "$work/s.json" 'd["run_id"]')" = build-42.x ] &&
  [ "$(lines "$work/b.log" 'd["run_id"]' | sort -u)" = build-42.x ] && pass "the supplied run id is used everywhere" ||
  fail "supplied run id: inside '$out', result $(cat "$work/s.json")"
schema result "$work/s.json"
schema audit-event "$work/b.log" --lines
[ "$(json "$work/s.json" '"labels" in d')" = False ] && pass "no labels: no labels field" || fail "labels without --label"

# --json-errors: the error names the run and its labels.
cage_run --json-errors --run-id r-err --label team=infra --result "$work/e.json" --rw "$work/missing" -- touch "$work/started"
expect_rc 125 "an invalid run"
[ "$(wc -l <<<"$err")" -eq 1 ] && [ "$("$py" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["run_id"], d["labels"], d["error"]["input"])' "$err")" = "r-err {'team': 'infra'} --rw $work/missing" ] &&
  pass "--json-errors carries run_id and labels" || fail "json error: $err"
[ "$(json "$work/e.json" '(d["run_id"], d["labels"])')" = "('r-err', {'team': 'infra'})" ] &&
  pass "the failed run's result carries them too" || fail "failed result: $(cat "$work/e.json")"

mkdir "$work/out"
refused() {  # NEEDLE ARGS...
  local needle=$1; shift
  cage_run --rw "$work/out" "$@" -- touch "$work/out/started"
  if [ "$rc" -eq 125 ] && [ ! -e "$work/out/started" ] && grep -qF -- "$needle" <<<"$err"; then pass "refused: $*"
  else fail "$*: exit $rc, want 125 naming '$needle': $err"; fi
}
refused "usage_error: --run-id a/b: not a run id" --run-id a/b
refused "invalid_policy: --label a=2: label 'a' is given twice" --label a=1 --label a=2
refused "invalid_policy: --label b c=1: 'b c' is not a label key" --label "b c=1"
refused "invalid_policy: --label" --label "$(printf 'a=x\033[2J')"
cage_run --rw "$work/out" --run-id a.b_c-1 --label a=1 --label b=1 -- touch "$work/out/started"
expect_rc 0 "the accepted twins start"
[ -e "$work/out/started" ] || fail "the accepted twin did not run"

cage_run --label team=infra --run-id r1 --dry-run -- true
grep -qx "run:         id r1, team=infra" <<<"$out" && pass "--dry-run shows them" || fail "dry-run: $out"
cage_run --label team=infra --run-id r1 --print-profile -- true
grep -qx '\[audit.labels\]' <<<"$out" && grep -qx "team = 'infra'" <<<"$out" && ! grep -q r1 <<<"$out" &&
  pass "--print-profile keeps the labels, not the run id" || fail "print-profile: $out"
printf '%s\n' "$out" >"$work/p.toml"
cage_run --profile "$work/p.toml" --result "$work/p.json" -- true
[ "$(json "$work/p.json" 'd["labels"]')" = "{'team': 'infra'}" ] && pass "the printed profile labels the run" ||
  fail "profile labels: $(cat "$work/p.json")"
# The run id in the host name, if asked: {run_id} is its first 12 characters; twice is refused.
cage_run --run-id build42x --hostname 'ci-{run_id}' -- sh -c 'hostname; printf "%s\n" "$CAGE_RUN_ID"'
[ "$rc" -eq 0 ] && [ "$out" = "ci-build42x"$'\n'"build42x" ] && pass "--hostname 'ci-{run_id}' names the run inside" ||
  fail "hostname placeholder: exit $rc '$out' $err"
cage_run --hostname 'a-{run_id}-{run_id}' -- true
expect_rc 125 "{run_id} twice in --hostname is refused"
grep -q 'invalid_policy: --hostname a-{run_id}-{run_id}: not a host name' <<<"$err" || fail "refusal: $err"
finish
