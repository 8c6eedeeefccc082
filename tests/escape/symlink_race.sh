#!/usr/bin/env bash

# host process of the user) swaps paths beneath the grant while cage starts.
#  A. $work/rw/x swaps between a real directory (marker "inside") and a symlink to $work/outside
#     (marker "outside") with renameat2(RENAME_EXCHANGE); cage runs --rw $work/rw --ro $work/rw/x.
#     Expected: each run refuses (125) or reads "inside"; never "outside". Today: compile's realpath()
#     and lstat() of the grant are two looks; when the path is a link for the first and a dir for
#     the second, $work/outside is granted (bind_ro at its real path) without the "would change the
#     host" refusal a static planted link gets, and the live --rw bind then shows it through x.
#  B. $work/rw/a swaps between a directory holding b and a symlink to $victim (outside /tmp, not
#     granted, without b); cage runs --rw $work/rw --ro $work/rw/a/b. Expected: $victim stays empty.
#     Today: mount.cc ensure_mount_point()/make_parents() lstat and mkdir the staged target path,
#     following symlinks in its components (only open_target uses RESOLVE_NO_SYMLINKS), so cage
#     creates $victim/b on the host (as root: anywhere, e.g. an empty /etc/nologin for a file grant).
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir -p "$work/rw/x" "$work/outside" "$work/rw/a/b"
echo outside >"$work/outside/marker"
echo inside >"$work/rw/x/marker"
flip() {  # A B SECONDS: swap A and B atomically in a loop, in the background ($flipper)
  "$py" -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, end = sys.argv[1].encode(), sys.argv[2].encode(), time.time() + float(sys.argv[3])
while time.time() < end:
    libc.renameat2(-100, a, -100, b, 2)  # RENAME_EXCHANGE: the path is always a dir or a link
    os.sched_yield()  # swap as often as the machine allows, without starving the runs under test
' "$@" &
  flipper=$!
  at_exit "kill $flipper"
}
ln -s "$work/outside" "$work/rw/x.alt"
flip "$work/rw/x" "$work/rw/x.alt" 60
inside=0 refused=0 other=0 shown=0
# Each part stops after 45 s of runs even if its count is not reached: on two loaded cores the
# suite's 120 s limit would otherwise kill the script before it cleans up.
budget_end=$((SECONDS + 45))
for _ in $(seq 80); do
  [ $SECONDS -lt $budget_end ] || break
  cage_run --rw "$work/rw" --ro "$work/rw/x" -- cat "$work/rw/x/marker"
  case "$rc:$out" in
    0:inside) inside=$((inside + 1)) ;;
    125:*) refused=$((refused + 1)) ;;
    *:*outside*) shown=$((shown + 1)) ;;
    *) other=$((other + 1)) ;;
  esac
done
kill "$flipper" 2>/dev/null; wait "$flipper" 2>/dev/null
[ "$shown" -eq 0 ] && pass "A: never outside ($inside inside, $refused refused, $other vanished)" ||
  fail "A: the outside target was shown at the granted path in $shown runs"
# Landlock-only: --ro x beneath --rw is the nested-ro loss, not accepted here: every run must refuse,
# also when x was a link for one of cage's looks at it and a directory for another.
if landlock_only && [ "$inside" -ne 0 ]; then
  fail "A: Landlock-only: a --ro beneath --rw ran (still writable) without --allow-degraded=nested-ro in $inside runs"
fi

victim=$(mktemp -d /var/tmp/cage-escape-victim.XXXXXX) && at_exit "rm -rf '$victim'"
ln -s "$victim" "$work/rw/a.alt"
flip "$work/rw/a" "$work/rw/a.alt" 60
budget_end=$((SECONDS + 45))
for _ in $(seq 150); do
  [ $SECONDS -lt $budget_end ] || break
  cage_run --rw "$work/rw" --ro "$work/rw/a/b" -- true
done
kill "$flipper" 2>/dev/null; wait "$flipper" 2>/dev/null
[ -z "$(ls -A "$victim")" ] && pass "B: nothing created outside the grants" ||
  fail "B: cage created $(ls -A "$victim") in the ungranted $victim on the host"
finish
