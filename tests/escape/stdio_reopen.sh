#!/usr/bin/env bash
# The workload's stdio files (`cage ... > build.log`, a file outside every grant) can be opened again
# by their /proc/self/fd names, as scripts do with /dev/stdout and `tee /dev/stderr`, with the access
# their descriptors already give and no more (LandlockPlan::stdio_files): write-only stdout is not
# readable by its name, a read-only stdin not writable, and no other file of their directory opens.
. "$(dirname "$0")/lib.bash"
require_sandbox
printf 'input\n' >"$work/in.txt"
printf 'keep\n' >"$work/sibling"
chmod 666 "$work/sibling"

# Allowed: the reopen of each stdio file, for what its descriptor is open for.
cage_run -- sh -c 'echo via-stdout >/dev/stdout'
expect_rc 0 "echo > /dev/stdout with stdout a file outside every grant"
[ "$out" = via-stdout ] || fail "stdout reopened: got '$out'"
cage_run -- sh -c 'echo teed | tee /dev/stderr >/dev/null'
expect_rc 0 "tee /dev/stderr with stderr a file outside every grant"
grep -qx teed <<<"$err" || fail "stderr reopened by tee: got '$err'"
rc=0
o=$("$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'cat /dev/stdin' <"$work/in.txt" 2>"$work/.err") || rc=$?
[ "$rc" = 0 ] && [ "$o" = input ] && pass "cat /dev/stdin with stdin a file" ||
  fail "cat /dev/stdin: exit $rc, got '$o': $(cat "$work/.err")"

# Refused: more than the descriptor gives, or another file of the same directory.
cage_run -- sh -c 'cat /dev/stdout >&2'
[ "$rc" -ne 0 ] && grep -q 'Permission denied' <<<"$err" && pass "write-only stdout not readable by its name" ||
  fail "stdout read back by its name: exit $rc; stderr: $err"
rc=0
"$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'echo overwritten >/dev/stdin' <"$work/in.txt" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] && [ "$(cat "$work/in.txt")" = input ] && pass "read-only stdin not writable by its name" ||
  fail "stdin written through its name: exit $rc, now '$(cat "$work/in.txt")'"
# (Under namespaces the name lands in the sandbox's own /tmp; under Landlock only it is refused.)
cage_run -- sh -c "echo x >/dev/stdout; echo overwritten >$work/sibling"
[ "$(cat "$work/sibling")" = keep ] && pass "the stdio file's sibling stays out of reach" ||
  fail "sibling of the stdout file: exit $rc, now '$(cat "$work/sibling")'; stdout: $out"
finish
