#!/usr/bin/env bash
# Bad input about the command and where it starts: each refusal gives the real reason, beside its
# allowed twin. A directory or a file without an execute bit is said to be one (126), granted or not;
# "not visible" (127) only for a program that would run if granted; a script whose #! interpreter is
# missing or not granted names the interpreter (127), apart from the script itself missing. Also:
# --dry-run shows --timeout in the units it was given; a deleted current directory does not stop a run
# with an absolute --chdir, and is named when it does.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/bin" "$work/hidden" "$work/interp"
cp /bin/true "$work/bin/tool" && cp /bin/true "$work/hidden/tool" && cp /bin/sh "$work/interp/sh"
printf '#!/bin/sh\necho script-ran\n' >"$work/bin/ok.sh"
printf '#!/usr/bin/nonexistent-%s-python9\necho hi\n' "$$" >"$work/bin/gone.sh"
printf '#!/nonexistent-%s/python9\necho hi\n' "$$" >"$work/bin/elsewhere.sh"
printf '#!%s/interp/sh\necho interp-ran\n' "$work" >"$work/bin/other.sh"
printf '#!/bin/sh\necho hi\n' >"$work/hidden/s.sh"
chmod 755 "$work/bin"/* "$work/hidden"/* "$work/interp/sh"
said() {  # WANT_RC WHAT NEEDLE [UNWANTED]: the last cage_run exited WANT_RC, its stderr has NEEDLE and not UNWANTED
  if [ "$rc" -ne "$1" ]; then fail "$2: exit $rc, want $1: $err"
  elif ! grep -qF -- "$3" <<<"$err"; then fail "$2: stderr lacks '$3': $err"
  elif [ -n "${4:-}" ] && grep -qF -- "$4" <<<"$err"; then fail "$2: stderr says '$4': $err"
  else pass "$2: $1, $(head -1 <<<"$err" | head -c 140)"; fi
}

# A directory and a non-executable file as the command: what execve would say (EACCES, "Is a
# directory"), not that they are invisible; the same granted.
cage_run -- /tmp
said 126 "a directory as the command" "exec_failed: COMMAND /tmp: is a directory" "not visible"
cage_run --ro "$work/bin" -- "$work/bin"
said 126 "a granted directory as the command" "is a directory" "not visible"
cage_run -- /etc/passwd
said 126 "a file without an execute bit" "exec_failed: COMMAND /etc/passwd: not executable" "not visible"
cage_run --ro "$work/bin" -- "$work/bin/ok.sh.nox"
said 127 "a missing path" "no such file or directory ($work/bin/ok.sh.nox)" "not visible"
# "not visible" only for a program that would run: the twin granted runs.
cage_run -- "$work/hidden/tool"
said 127 "a program not granted" "not visible inside the sandbox (found on the host at $work/hidden/tool)"
cage_run --ro "$work/hidden" -- "$work/hidden/tool"
expect_rc 0 "the same program granted runs"

# A script's #! interpreter: missing, not granted, granted; the script itself not granted.
cage_run --ro "$work/bin" -- "$work/bin/gone.sh"
said 127 "missing #! interpreter" "the interpreter /usr/bin/nonexistent-$$-python9 named on the #! line of $work/bin/gone.sh does not exist" \
  "grant its directory"
# An interpreter outside the view is not looked up on the host (a hung mount would hang cage).
cage_run --ro "$work/bin" -- "$work/bin/elsewhere.sh"
said 127 "#! interpreter outside the view" "the interpreter /nonexistent-$$/python9 named on the #! line of $work/bin/elsewhere.sh is not visible inside the sandbox (cage does not look it up on the host)"
cage_run --ro "$work/bin" -- "$work/bin/other.sh"
said 127 "#! interpreter not granted" "the interpreter $work/interp/sh named on the #! line of $work/bin/other.sh is not visible inside"
cage_run --ro "$work/bin" --ro "$work/interp" -- "$work/bin/other.sh"
[ "$rc" -eq 0 ] && [ "$out" = interp-ran ] && pass "#! interpreter granted: the script runs" ||
  fail "#! interpreter granted: exit $rc, out '$out': $err"
cage_run --ro "$work/bin" -- "$work/bin/ok.sh"
[ "$rc" -eq 0 ] && [ "$out" = script-ran ] && pass "script with /bin/sh runs" || fail "ok.sh: exit $rc: $err"
cage_run -- "$work/hidden/s.sh"
said 127 "a script not granted" "not visible inside the sandbox (found on the host at $work/hidden/s.sh)" "interpreter"

# --timeout in --dry-run: as a duration, not milliseconds; --json keeps the number.
cage_run --dry-run --timeout 5m -- true
grep -qE '^limits: +timeout 5m$' <<<"$out" && ! grep -q '300000' <<<"$out" && pass "--dry-run: limits: timeout 5m" ||
  fail "--dry-run --timeout 5m: $(grep timeout <<<"$out")"
cage_run --dry-run --verbose --timeout 1m30s -- true
grep -qx 'timeout: 1m30s' <<<"$out" && ! grep -q '90000' <<<"$out" && pass "--dry-run --verbose: timeout: 1m30s" ||
  fail "--dry-run --verbose --timeout 1m30s: $(grep timeout <<<"$out")"
cage_run --dry-run --json --timeout 5m -- true
"$py" -c 'import json,sys; assert json.load(sys.stdin)["limits"]["timeout_ms"] == 300000' <<<"$out" &&
  pass "--dry-run --json: timeout_ms 300000" || fail "--dry-run --json timeout: $out"

# A deleted current directory: an absolute --chdir runs (there, with its implicit grant); without
# one, with a relative --chdir or a relative path in a flag, refused naming cwd or the flag.
mkdir "$work/gone" && cd "$work/gone" && rmdir "$work/gone"
cage_run --chdir "$work/bin" -- sh -c 'pwd; ls'
[ "$rc" -eq 0 ] && [ "$(head -1 <<<"$out")" = "$work/bin" ] && grep -qx ok.sh <<<"$out" &&
  pass "deleted cwd, absolute --chdir: runs in it, shown read-only" || fail "deleted cwd with --chdir: exit $rc: $out $err"
cage_run -- true
said 125 "deleted cwd, no --chdir" "invalid_policy: cwd: the current directory is gone"
cage_run --chdir sub -- true
said 125 "deleted cwd, relative --chdir" "--chdir sub: a relative path, and the current directory it is relative to is gone"
cage_run --chdir "$work/bin" --rw ./out -- true
said 125 "deleted cwd, relative --rw" "--rw ./out: a relative path"
cd "$work/cwd" || exit 1
finish
