#!/usr/bin/env bash
# What people type from other tools (issue 20, point 6), against the real binary: a bwrap, firejail
# or docker-run flag is answered with cage's way of doing the same, a typo of one of cage's options
# with "did you mean", a missing value without the parser's jargon; --json-errors is one line; sizes
# and durations take the usual forms; --help fits 100 columns. Each refusal exits 125 and never
# starts the command; each accepted form is shown in the plan.
. "$(dirname "$0")/../escape/lib.bash"
mkdir "$work/dir"
refused() {  # NEEDLE ARGS...: cage ARGS... -- touch started exits 125 naming NEEDLE in one line
  local needle=$1; shift
  cage_run "$@" -- touch "$work/dir/started"
  if [ "$rc" -ne 125 ]; then fail "$*: exit $rc, want 125 ($err)"
  elif [ -e "$work/dir/started" ]; then fail "$*: the command ran"
  elif [ "$(wc -l <<<"$err")" -ne 1 ] || ! grep -qF -- "$needle" <<<"$err"; then fail "$*: want one line with '$needle': $err"
  else pass "$*: $err"; fi
}
refused "--ro-bind: unknown option (remedy: cage grants a path at the same path inside: --ro PATH" --ro-bind /usr /usr
refused "--bind: unknown option (remedy: cage grants a path" --bind "$work/dir" "$work/dir"
refused "--unshare-net: unknown option (remedy: not needed: the sandbox has no network by default" --unshare-net
refused "--unshare-all: unknown option (remedy: not needed: cage unshares every namespace" --unshare-all
refused "--private: unknown option (remedy: not needed: the home directory is private" "--private=$work/dir"
refused "--blacklist: unknown option (remedy: --hide PATH)" "--blacklist=$HOME/.ssh"
refused "--volume: unknown option (remedy: cage grants a path" --volume "$work/dir:$work/dir"
refused "--timout: unknown option (remedy: did you mean --timeout?)" --timout 5
refused "--net-mod: unknown option (remedy: did you mean --net-mode?)" --net-mod proxy
refused "--frobnicate: unknown option (remedy: see cage --help)" --frobnicate
# The same without "--": the first word that is not an option starts the command, an unknown one is refused.
cage_run --ro-bind /usr /usr touch "$work/dir/started"
[ "$rc" -eq 125 ] && [ ! -e "$work/dir/started" ] && grep -qF -- "--ro-bind: unknown option (remedy: cage grants" <<<"$err" &&
  pass "without --: --ro-bind refused the same way" || fail "without --: $rc $err"
# Without "--" (point 1): option parsing ends at the first word that is not cage's; everything after it
# reaches the command byte for byte, its own options and a "--" included.
cage_run "$py" -c 'print(1)'
[ "$rc" -eq 0 ] && [ "$out" = 1 ] && pass "cage python3 -c 'print(1)' prints 1" || fail "python3 -c: $rc $out $err"
cage_run echo --timeout 5 --version hello
[ "$out" = "--timeout 5 --version hello" ] && pass "cage echo --timeout 5 --version hello: the command's own words" ||
  fail "echo: $rc $out $err"
cage_run sh -c 'printf "[%s]" "$@"' x a -- 'b  c'
[ "$out" = "[a][--][b  c]" ] && pass "a -- after the command is the command's: $out" || fail "sh -c with --: $rc $out $err"
# A missing value: the flag and what it needs, no parser jargon.
cage_run --rw
[ "$rc" -eq 125 ] && [ "$err" = "cage: usage_error: --rw: needs a value (PATH) (remedy: give it as --rw PATH)" ] &&
  pass "missing value: $err" || fail "missing value: $rc $err"
cage_run --memory -- true
grep -q "ArgumentMismatch\|required" <<<"$err" && fail "parser jargon: $err" || pass "no parser jargon: $err"
# --json-errors: one line, one object.
cage_run --json-errors --ro-bind /usr /usr -- true
[ "$rc" -eq 125 ] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
  "$py" -c 'import json,sys; e=json.loads(sys.argv[1])["error"]; assert e["input"]=="--ro-bind" and e["class"]=="usage_error", e' "$err" &&
  pass "--json-errors: one line: $err" || fail "--json-errors: $rc $err"
# Sizes and durations in the usual forms reach the plan; a malformed one is refused naming it.
cage_run --dry-run --json --memory 2GiB --timeout 1m30s -- true
"$py" -c 'import json,sys; l=json.load(sys.stdin)["limits"]; assert l["memory_bytes"]==2147483648 and l["timeout_ms"]==90000, l' <<<"$out" &&
  pass "--memory 2GiB --timeout 1m30s: 2147483648 bytes, 90000 ms in the plan" || fail "sizes/durations: $rc $err"
refused "--timeout 1m30: not a duration" --timeout 1m30
refused "--memory 2GiBB: not a size" --memory 2GiBB
# --help fits 100 columns and still lists every flag it did.
"$CAGE" --help >"$work/help"
long=$(awk 'length > 100' "$work/help")
[ -z "$long" ] && grep -q -- "--allow-degraded" "$work/help" && pass "--help fits 100 columns" || fail "--help lines over 100: $long"
[ "$(grep -c '^Usage:' "$work/help")" -eq 1 ] && pass "--help has one usage line" || fail "usage lines: $(grep '^Usage:' "$work/help")"
# A shebang wrapper run by a confined program: one line saying where it is, not the list of what
# Landlock alone could not enforce; the wrapper itself runs outside cage (the twin). The marker is
# in the workload's environment and --unsetenv drops it.
printf '#!/usr/bin/env -S %s --script -- sh\necho wrapped\n' "$CAGE" >"$work/dir/wrap.sh"
chmod +x "$work/dir/wrap.sh"
[ "$("$work/dir/wrap.sh" 2>&1)" = wrapped ] && pass "twin: the wrapper runs from outside cage" || fail "wrapper outside"
cage_run --ro "$(dirname "$CAGE")" --ro "$work/dir" -- "$work/dir/wrap.sh"
if [ "$rc" -eq 125 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF "spawn_sandbox_unavailable: already inside cage:" <<<"$err" &&
  ! grep -q wrapped <<<"$out"; then pass "wrapper inside cage: $err"; else fail "wrapper inside cage: $rc $out $err"; fi
cage_run -- sh -c 'echo "marker=$CAGE_SANDBOX"'
[ "$out" = "marker=1" ] && pass "CAGE_SANDBOX=1 inside" || fail "marker: $out $err"
cage_run --unsetenv CAGE_SANDBOX -- sh -c 'echo "marker=${CAGE_SANDBOX-unset}"'
[ "$out" = "marker=unset" ] && pass "--unsetenv CAGE_SANDBOX drops it" || fail "marker unset: $out $err"
finish
