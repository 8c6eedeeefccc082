#!/usr/bin/env bash
# Attack: symlinks planted in a --rw directory (by an earlier sandbox run, or by a process racing
# cage's start) pointing outside the grants.
#  1. $work/rw/link -> $work/outside/secret: reading it inside must fail (the target is not in view).
#  2. --ro $work/rw/link-to-dir, a planted symlink to $work/outside: cage refuses (it would have to
#     create a symlink on the host beneath the --rw grant) or shows nothing of $work/outside.
# The race variants (the symlink swapped while cage starts) are in pending/symlink_race.sh.
# Twin: a symlink inside --rw to a file inside --rw reads.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir -p "$work/rw/x" "$work/outside"
echo secret-outside >"$work/outside/secret"
echo outside >"$work/outside/marker"
echo inside >"$work/rw/x/marker"
echo own >"$work/rw/own"
ln -s "$work/rw/own" "$work/rw/ownlink"
ln -s "$work/outside/secret" "$work/rw/link"
ln -s "$work/outside" "$work/rw/dirlink"

cage_run --rw "$work/rw" -- cat "$work/rw/ownlink"
expect_rc 0 "twin: symlink within --rw reads"
cage_run --rw "$work/rw" -- cat "$work/rw/link"
[ "$rc" -ne 0 ] && ! grep -q secret-outside <<<"$out" && pass "planted symlink to outside does not read" ||
  fail "read through a planted symlink: $out"
cage_run --rw "$work/rw" --ro "$work/rw/dirlink" -- cat "$work/rw/dirlink/secret"
if [ "$rc" -eq 125 ]; then pass "--ro through a planted symlink beneath --rw: refused ($err)"
elif grep -q secret-outside <<<"$out"; then fail "--ro of a planted symlink showed the outside target"
else pass "--ro through a planted symlink shows nothing (exit $rc)"; fi

finish
