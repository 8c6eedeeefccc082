#!/usr/bin/env bash
# --install-windows-network / --uninstall-windows-network belong to the Windows build (they change
# Windows' loopback-exemption list; tests/cross/wine_smoke.sh runs them there). Here, on the Linux
# build and on a build for an OS without a backend, each is a usage_error (exit 125) naming the flag
# and the build, and nothing runs; misuse (with a command, or both at once) is named as such.
. "$(dirname "$0")/../escape/lib.bash"
u=${CAGE_UNSUPPORTED:?cage_unsupported not built}
for flag in --install-windows-network --uninstall-windows-network; do
  rc=0; "$CAGE" $flag 2>"$work/err" >"$work/out" || rc=$?
  [ "$rc" -eq 125 ] && grep -q "usage_error: $flag: only the Windows build of cage has this" "$work/err" &&
    grep -q 'this is a linux build' "$work/err" && [ ! -s "$work/out" ] &&
    pass "linux build: $flag is a usage_error naming the build" || fail "linux $flag: exit $rc $(cat "$work/err")"
  rc=0; "$u" --json-errors $flag 2>"$work/err" || rc=$?
  [ "$rc" -eq 125 ] && python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]
assert e["class"]=="usage_error" and e["input"]==sys.argv[2] and "plan9" in e["reason"], e' "$work/err" "$flag" &&
    pass "unsupported-OS build: $flag refused as JSON" || fail "plan9 $flag: exit $rc $(cat "$work/err")"
done
rc=0; "$CAGE" --install-windows-network -- touch "$work/ran" 2>"$work/err" || rc=$?
[ "$rc" -eq 125 ] && grep -q 'takes no command' "$work/err" && [ ! -e "$work/ran" ] &&
  pass "with a command: usage_error, the command not run" || fail "with a command: exit $rc $(cat "$work/err")"
rc=0; "$CAGE" --install-windows-network --uninstall-windows-network 2>"$work/err" || rc=$?
[ "$rc" -eq 125 ] && grep -q 'exclude each other' "$work/err" && pass "both at once: usage_error" ||
  fail "both: exit $rc $(cat "$work/err")"
# The allowed twin: --help lists both, marked as Windows'.
"$CAGE" --help >"$work/help" && grep -q -- '--install-windows-network *Windows, elevated' "$work/help" &&
  grep -q -- '--uninstall-windows-network *Windows, elevated' "$work/help" && pass "--help lists both" ||
  fail "--help lacks the flags"
finish
