#!/usr/bin/env bash
# --scratch NAME (issue 22, point 7): a per-user directory kept across runs, created 0700 beneath the
# state directory ($XDG_STATE_HOME here, a private one), read-write at /scratch/NAME inside and
# nowhere without the flag; a link planted at the scratch path or a directory open to others is
# refused (exit 125, the link's target untouched) next to the accepted twin; --scratch-list names it,
# --scratch-remove deletes it without following a link inside. Landlock alone: granted at its host
# path, named by $CAGE_SCRATCH in both mechanisms.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
export XDG_STATE_HOME="$work/state"
mkdir -m 700 "$XDG_STATE_HOME"
root="$XDG_STATE_HOME/cage/scratch"

cage_run --scratch cache -- sh -c 'echo one > /scratch/cache/f; echo "$CAGE_SCRATCH"'
expect_rc 0 "first run writes into its scratch"
[ "$out" = /scratch/cache ] && pass "\$CAGE_SCRATCH is /scratch/cache" || fail "CAGE_SCRATCH: $out"
for d in "$XDG_STATE_HOME/cage" "$root" "$root/cache"; do
  [ "$(stat -c '%a %u' "$d")" = "700 $(id -u)" ] && pass "$d is 0700 and ours" || fail "$d: $(stat -c '%a %u' "$d")"
done
cage_run --scratch cache -- cat /scratch/cache/f
[ "$rc" -eq 0 ] && [ "$out" = one ] && pass "the second run sees the first run's file" || fail "second run: $rc $out $err"
cage_run -- sh -c 'ls /scratch; cat "$0/cache/f"' "$root"
[ "$rc" -ne 0 ] && [ -z "$out" ] && pass "without --scratch neither /scratch nor the host directory is there" ||
  fail "without the flag: $rc $out"

# A link planted where a scratch directory goes is refused, never followed.
mkdir "$work/target"
ln -s "$work/target" "$root/evil"
cage_run --scratch evil -- sh -c 'touch /scratch/evil/planted'
if [ "$rc" -eq 125 ] && grep -q "symbolic link or not a directory" <<<"$err" && [ -z "$(ls -A "$work/target")" ]; then
  pass "a planted link is refused: $err"
else fail "planted link: exit $rc, target holds '$(ls -A "$work/target")': $err"; fi
cage_run --scratch good -- touch /scratch/good/made
expect_rc 0 "its twin, a fresh name, works"
[ -e "$root/good/made" ] || fail "the twin's file is missing"
chmod 770 "$root/good"
cage_run --scratch good -- touch /scratch/good/again
[ "$rc" -eq 125 ] && grep -q "writable by its group" <<<"$err" && [ ! -e "$root/good/again" ] &&
  pass "a group-writable scratch directory is refused" || fail "group-writable: $rc $err"
chmod 700 "$root/good"
cage_run --scratch ../x -- true
[ "$rc" -eq 125 ] && grep -q "not a scratch name" <<<"$err" && pass "a name with '/' is refused" || fail "../x: $rc $err"

cage_run --scratch-list
grep -qx "cache	$root/cache" <<<"$out" && grep -q "^evil	.*symbolic link" <<<"$out" && pass "--scratch-list" ||
  fail "--scratch-list: $out $err"
ln -s "$work/target" "$root/cache/link"
touch "$work/target/keep"
cage_run --scratch-remove cache
[ "$rc" -eq 0 ] && [ ! -e "$root/cache" ] && [ -e "$work/target/keep" ] &&
  pass "--scratch-remove deletes it, not what a link inside points to" || fail "remove: $rc $err"
cage_run --scratch-remove evil
[ "$rc" -eq 0 ] && [ ! -L "$root/evil" ] && [ -e "$work/target/keep" ] && pass "--scratch-remove unlinks a planted link" ||
  fail "remove link: $rc $err"
cage_run --scratch-remove cache
[ "$rc" -eq 127 ] && pass "removing it again: not found" || fail "remove twice: $rc $err"

if landlock_mechanism; then
  cage_run --mechanism landlock --allow-degraded pid --scratch ll -- sh -c 'echo two > "$CAGE_SCRATCH/f"; echo "$CAGE_SCRATCH"'
  [ "$rc" -eq 0 ] && [ "$out" = "$root/ll" ] && [ "$(cat "$root/ll/f")" = two ] &&
    pass "Landlock alone: granted at its host path" || fail "landlock scratch: $rc $out $err"
  cage_run --mechanism landlock --allow-degraded pid --scratch ll -- sh -c 'echo x > "$0/good/y"' "$root"
  [ "$rc" -ne 0 ] && [ ! -e "$root/good/y" ] && pass "Landlock alone: another scratch directory stays closed" ||
    fail "landlock other scratch: $rc"
else
  echo "note: Landlock-only half skipped (cage refuses that mechanism on this kernel)"
fi
finish
