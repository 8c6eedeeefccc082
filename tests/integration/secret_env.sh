#!/usr/bin/env bash
# --secret NAME=@FILE|fd:N|env:VAR (issue 22, point 3): the value reaches the command's environment
# and nothing else: not cage's command line (ps shows argv to every local user), not --dry-run (summary,
# --verbose, --json), --print-profile, the audit log or the result, and not cage's own environment
# block once read (/proc/PID/environ, read here while the command runs). A source that cannot be read,
# or a value on the command line, is refused (125) naming the flag, and the command never starts.
# Under both mechanisms where the Landlock-only one starts.
. "$(dirname "$0")/../escape/lib.bash"
value="s3cr3t-$$-$RANDOM"
printf '%s\n' "$value" >"$work/token" && chmod 600 "$work/token"
mechs=(namespaces)
landlock_mechanism && mechs+=(landlock)
for m in "${mechs[@]}"; do
  opts=(--mechanism "$m"); [ "$m" = landlock ] && opts+=(--allow-degraded pid)
  cage_run "${opts[@]}" --secret API_TOKEN=@"$work/token" -- sh -c 'printf "%s" "$API_TOKEN"'
  [ "$rc" -eq 0 ] && [ "$out" = "$value" ] && pass "$m: @FILE reaches the command (one trailing newline dropped)" ||
    fail "$m: @FILE: exit $rc, '$out' $err"
  rc=0; out=$("$CAGE" "${opts[@]}" --secret T=fd:3 -- sh -c 'printf "%s" "$T"' 3<"$work/token" 2>"$work/err") || rc=$?
  [ "$rc" -eq 0 ] && [ "$out" = "$value" ] && pass "$m: fd:3 reaches the command" || fail "$m: fd:3: exit $rc, '$out' $(cat "$work/err")"
  rc=0; out=$(MY_TOKEN=$value "$CAGE" "${opts[@]}" --secret T=env:MY_TOKEN -- sh -c 'printf "%s|%s" "$T" "${MY_TOKEN-unset}"' 2>"$work/err") || rc=$?
  [ "$rc" -eq 0 ] && [ "$out" = "$value|unset" ] && pass "$m: env:VAR reaches the command as NAME only" ||
    fail "$m: env:VAR: exit $rc, '$out' $(cat "$work/err")"
  # cage's own environment block, while the command runs: the value was wiped once read.
  MY_TOKEN=$value "$CAGE" "${opts[@]}" --secret T=env:MY_TOKEN --rw "$work" -- sh -c ': > "$1/started"; sleep 30' sh "$work" \
    </dev/null >/dev/null 2>&1 &
  cpid=$!
  at_exit "kill $cpid"
  while [ ! -e "$work/started" ] && kill -0 "$cpid" 2>/dev/null; do sleep 0.05; done
  if [ -e "$work/started" ]; then
    if tr '\0' '\n' <"/proc/$cpid/environ" | grep -qF "$value"; then fail "$m: the value stays in cage's /proc/PID/environ"
    else pass "$m: cage's own environment block no longer holds the value"; fi
    tr '\0' ' ' <"/proc/$cpid/cmdline" | grep -qF "$value" && fail "$m: the value is on cage's command line"
  else
    fail "$m: the long run did not start"
  fi
  kill "$cpid"; wait "$cpid" 2>/dev/null; rm -f "$work/started"
done
# Nothing that describes the run holds the value; each names the variable and its source.
cage_run --dry-run --secret API_TOKEN=@"$work/token" -- env
! grep -qF "$value" <<<"$out" && grep -q 'API_TOKEN' <<<"$out" && pass "--dry-run names it, without the value" || fail "--dry-run: $out"
cage_run --dry-run --verbose --secret API_TOKEN=@"$work/token" -- env
! grep -qF "$value" <<<"$out" && grep -qF "API_TOKEN=<secret from @$work/token>" <<<"$out" &&
  pass "--dry-run --verbose: API_TOKEN=<secret from @FILE>" || fail "--dry-run --verbose: $out"
cage_run --dry-run --json --secret API_TOKEN=@"$work/token" -- env
! grep -qF "$value" <<<"$out" && pass "--dry-run --json has no value" || fail "--dry-run --json holds the value"
cage_run --print-profile --secret API_TOKEN=@"$work/token" -- env
! grep -qF "$value" <<<"$out" && grep -q '^\[env.secret\]' <<<"$out" && pass "--print-profile: [env.secret] with the source" ||
  fail "--print-profile: $out"
printf '%s' "$out" >"$work/p.toml"
cage_run --profile "$work/p.toml" -- sh -c 'printf "%s" "$API_TOKEN"'
[ "$out" = "$value" ] && pass "the printed profile's [env.secret] loads and reads the file" || fail "printed profile: '$out' $err"
cage_run --audit "$work/a.log" --result "$work/r.json" --secret API_TOKEN=@"$work/token" -- true
! grep -qF "$value" "$work/a.log" "$work/r.json" && grep -q 'API_TOKEN from @' "$work/a.log" &&
  pass "audit and result: the name and source, never the value" || fail "audit/result: $(cat "$work/a.log")"
# Refusals: nothing starts.
for bad in "T=@$work/missing" "T=plain-value" "T=fd:7" "T=env:CAGE_TEST_UNSET_VAR" "1T=@$work/token"; do
  cage_run --secret "$bad" -- touch "$work/started"
  [ "$rc" -eq 125 ] && [ ! -e "$work/started" ] && grep -qF -- "--secret ${bad%%=*}=" <<<"$err" &&
    pass "refused: --secret $bad: $err" || fail "--secret $bad: exit $rc, $err"
done
finish
