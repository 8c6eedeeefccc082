#!/usr/bin/env bash
# Fault: cage itself must never damage host data in --rw directories: --tmpfs and --hide beneath a
# --rw grant, a run that fails half-way (a bad grant after a good one), and a killed run leave every
# host file and directory as it was (no cleanup follows a path into a bind mount).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir -p "$work/rw/sub" "$work/rw/hidden"
echo keep1 >"$work/rw/file"; echo keep2 >"$work/rw/sub/file"; echo keep3 >"$work/rw/hidden/file"
echo keep4 >"$work/rw/secret"
snap() { (cd "$work/rw" && find . -printf '%p %y %m %s\n' | sort && cat file sub/file hidden/file secret); }
before=$(snap)
cage_run --rw "$work/rw" --tmpfs "$work/rw/sub" --hide "$work/rw/hidden" --hide "$work/rw/secret" -- \
  sh -c "ls $work/rw/sub; cat $work/rw/secret; echo x >$work/rw/sub/new"
[ "$rc" -eq 0 ] && ! grep -q keep <<<"$out" && pass "tmpfs and hide beneath --rw mask the host content" ||
  fail "masking beneath --rw: exit $rc, $out $err"
cage_run --rw "$work/rw" --ro "$work/no-such-dir-$$" -- true
expect_rc 125 "a bad grant after a good one refuses"
"$CAGE" --rw "$work/rw" --tmpfs "$work/rw/sub" -- sleep 30 &
sleep 0.5; kill -9 $!; wait $! 2>/dev/null
[ "$(snap)" = "$before" ] && pass "host data in --rw unchanged by cage" || fail "host data changed: $(diff <(echo "$before") <(snap))"
finish
