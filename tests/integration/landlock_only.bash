# Shared by the landlock_only_*.sh scripts: hosts that block user namespaces (issue #10), where cage
# confines with Landlock + seccomp alone. Each script proves one behaviour of that mechanism; this
# file gives them the scratch tree, the cage prefix L (forced with --mechanism landlock), the check
# that nothing is left in /tmp, and the structured skip below Landlock ABI 6.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d)
bg=()  # background processes of the script: each ends with it, also when a check fails half-way
cleanup() {
  [ "$BASHPID" = "$$" ] || return 0  # a forked child of the script (see escape/lib.bash) cleans nothing
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$d"
}
trap cleanup EXIT
mkdir "$d/ro" "$d/rw" "$d/out"
echo data > "$d/ro/f"
echo secret > "$d/secret"
probe_dir=$(dirname "$CAGE_PROBE")
L=("$CAGE" --mechanism landlock --no-cwd)
A=("${L[@]}" --allow-degraded pid --ro "$probe_dir" --ro "$d/ro" --rw "$d/rw")

# This user's private dirs whose supervisor is gone: other runs (the root and user variants, the
# escape suite) may hold live ones in /tmp at the same time, which are not this test's leftovers.
orphans() {
  local p pid
  for p in /tmp/cage-private.*; do
    [ -O "$p" ] || continue
    pid=${p#/tmp/cage-private.}
    pid=${pid%%.*}
    # Only the Landlock-only mechanism's own (cage-private.PID.XXXXXX): the macOS executor's unit
    # tests, run here at the same time, make cage-private.XXXXXX of their own (found by the five-run series).
    case $pid in '' | *[!0-9]*) continue ;; esac
    [ -d "/proc/$pid" ] || echo "$p"
  done | sort
}
orphans_before=$(orphans)
# Every script ends with this: the runs it made left no private directory behind.
nothing_left() {
  local left
  left=$(comm -13 <(echo "$orphans_before") <(orphans))
  [ -z "$left" ] || fail "private directories left behind in /tmp: $left"
}

# Below Landlock ABI 6 the mechanism is refused as a whole (cage(1), MECHANISMS): that refusal is
# structured (125, spawn_sandbox_unavailable, names the ABI) and the script has nothing to run.
"${L[@]}" --allow-degraded pid -- true 2>"$d/err"; rc=$?
if grep -q "needs Landlock ABI" "$d/err"; then
  [ $rc -eq 125 ] && grep -q "^cage: spawn_sandbox_unavailable: --mechanism landlock" "$d/err" ||
    fail "refusal below ABI 6 is not structured ($rc): $(cat "$d/err")"
  echo "skip: the Landlock-only mechanism is refused on this kernel: $(cat "$d/err")"
  exit 77
fi
