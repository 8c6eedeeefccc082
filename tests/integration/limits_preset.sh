#!/usr/bin/env bash
# --limits default (issue 22, point 9): the preset fills each limit the caller did not give with its
# ceiling (memory 4G, pids 1024, timeout 30m, 16M of output per stream, 1G per private tmpfs), so the
# plan is the plan of those flags written out; a flag or profile key given beside it wins; the
# profile key [limits] preset loads and --print-profile writes it back; an unknown preset is refused
# naming the input. A real run shows one ceiling enforced (the output cap) next to its twin without.
. "$(dirname "$0")/../escape/lib.bash"
plan_limits() { "$CAGE" --dry-run --json "$@" -- true | python3 -c '
import json, sys
d = json.load(sys.stdin)
l = d["limits"]; l.pop("cgroup", None)
sizes = sorted({m.get("size_bytes") for m in d["mounts"] if m.get("size_bytes")})
print(json.dumps(l, sort_keys=True), sizes)'; }
a=$(plan_limits --limits default) || fail "--limits default: no plan"
b=$(plan_limits --memory 4G --pids 1024 --timeout 30m --max-output 16M --tmpfs-size 1G) || fail "flags: no plan"
[ -n "$a" ] && [ "$a" = "$b" ] && pass "--limits default plans exactly its five flags: $a" || fail "preset '$a' != flags '$b'"
c=$(plan_limits --limits default --memory 1G --timeout 5m)
grep -q '"memory_bytes": 1073741824' <<<"$c" && grep -q '"timeout_ms": 300000' <<<"$c" && grep -q '"pids": 1024' <<<"$c" &&
  pass "flags given beside the preset win, the rest come from it" || fail "override: $c"
printf '[limits]\npreset = "default"\npids = 64\n' >"$work/p.toml"
c=$(plan_limits --profile "$work/p.toml")
grep -q '"pids": 64' <<<"$c" && grep -q '"memory_bytes": 4294967296' <<<"$c" &&
  pass "profile: [limits] preset with a key of its own" || fail "profile: $c"
"$CAGE" --profile "$work/p.toml" --print-profile -- true >"$work/printed.toml" 2>"$work/err" &&
  grep -q "^preset = 'default'" "$work/printed.toml" && [ "$(plan_limits --profile "$work/printed.toml")" = "$c" ] &&
  pass "--print-profile writes the preset back and it loads to the same plan" || fail "round trip: $(cat "$work/printed.toml" "$work/err")"
cage_run --limits unbounded -- true
expect_rc 125 "an unknown preset is refused"
grep -q "invalid_policy: --limits unbounded: unknown limits preset" <<<"$err" || fail "refusal names the input: $err"
cage_run --limits default -- sh -c 'head -c 17M /dev/zero | tr "\0" x'
[ "$rc" -eq 0 ] && [ "$(head -c 16777216 <<<"$out" | tr -d x | wc -c)" -eq 0 ] &&
  grep -q 'cage: stdout truncated: 1048576 bytes dropped past the 16M cap' <<<"$out" &&
  pass "a real run: 16M of stdout passed, the rest dropped and counted" || fail "capped run: exit $rc $(tail -c 200 <<<"$out") $err"
cage_run -- sh -c 'head -c 17M /dev/zero | tr "\0" x'
[ "$rc" -eq 0 ] && [ "${#out}" -eq $((17 * 1048576)) ] && pass "twin: without the preset all 17M pass" ||
  fail "twin: exit $rc, ${#out} bytes"
finish
