#!/usr/bin/env bash
# A relative HOME (".", "..", "x") counts as unknown, as an unset one does: HOME=/ inside and no private
# home mount (policy::home_of). HOME=. was resolved against the current directory, and the
# private empty home tmpfs was mounted over the project: it looked empty, and writes there vanished.
# Twin: an absolute HOME gets its private empty tmpfs as before.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no private home mount under the Landlock-only mechanism"; exit 77; }
echo data >"$work/cwd/file"
mkdir "$work/home" && echo secret >"$work/home/.token"
for h in . .. relative; do
  out=$(cd "$work/cwd" && env -i HOME="$h" PATH=/usr/bin:/bin "$CAGE" -- sh -c 'echo "$HOME $(cat file)"' 2>"$work/.err")
  rc=$?
  [ "$rc" -eq 0 ] && [ "$out" = "/ data" ] && pass "HOME=$h: HOME=/ inside, the project shown" ||
    fail "HOME=$h: exit $rc, stdout '$out', stderr $(cat "$work/.err")"
done
out=$(cd "$work/cwd" && env -i HOME="$work/home" PATH=/usr/bin:/bin "$CAGE" -- sh -c 'echo "$HOME $(ls -A "$HOME" | wc -l) $(cat file)"' 2>"$work/.err")
rc=$?
[ "$rc" -eq 0 ] && [ "$out" = "$work/home 0 data" ] && pass "HOME=$work/home: a private empty home" ||
  fail "absolute HOME: exit $rc, stdout '$out', stderr $(cat "$work/.err")"
finish
