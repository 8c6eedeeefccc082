#!/usr/bin/env bash
# A grant named by a link inside the read-only current directory (--rw build, where ./build links to a
# scratch disk) runs: the directory's bind shows the host's link already, and it leads to the grant
# (compile.cc, check_mount_points). It was refused ("would change .../build on the host"), so
# `cage --ro . --rw ./build -- make` failed in every project whose build directory is a link.
# Twins: the grant by its real path; a link whose text does not lead to the grant the same way inside
# (through a second link) is still refused. And one path named twice through a link, --rw by one name
# and --ro by the other, is refused like the same name given twice, instead of one mount winning.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no mounts under the Landlock-only mechanism"; exit 77; }
proj="$work/cwd" disk="$work/disk"
mkdir -p "$disk/build" "$proj/src"
ln -s "$disk/build" "$proj/build"          # absolute link
ln -s ../disk/build "$proj/relbuild"       # relative link
ln -s "$work/disk" "$work/disklink"
ln -s ../disklink/build "$proj/viabuild"   # resolves through a second link, not shown inside

cage_run --rw "$disk/build" -- sh -c "echo a > '$disk/build/real' && echo OK"
[ "$rc" -eq 0 ] && [ "$out" = OK ] && [ -f "$disk/build/real" ] && pass "--rw by the real path: written on the host" ||
  fail "--rw $disk/build: exit $rc; stdout: $out; stderr: $err"

for name in build ./build relbuild; do
  rm -f "$disk/build/f"
  cage_run --rw "$name" -- sh -c "echo b > $name/f && cat $name/f"
  [ "$rc" -eq 0 ] && [ "$out" = b ] && [ "$(cat "$disk/build/f" 2>/dev/null)" = b ] &&
    pass "--rw $name (a link in the read-only cwd): written through the link, on the host" ||
    fail "--rw $name: exit $rc; stdout: $out; stderr: $err"
done

# Allowed twin's denial: the cwd around the link stays read-only.
cage_run --rw build -- sh -c 'echo c > src/g'
[ "$rc" -ne 0 ] && [ ! -e "$proj/src/g" ] && grep -q 'Read-only file system' <<<"$err" &&
  pass "--rw build: the rest of the cwd stays read-only" || fail "cwd write: exit $rc; stderr: $err"

cage_run --rw viabuild -- true
[ "$rc" -eq 125 ] && grep -q 'would change' <<<"$err" && pass "a link through another link is still refused" ||
  fail "--rw viabuild: exit $rc; stderr: $err"

for pair in "--rw $work/disklink/build --ro $disk/build" "--rw build --ro $disk/build" "--ro relbuild --rw $disk/build" "--rw $disk/build --hide build"; do
  # shellcheck disable=SC2086
  cage_run $pair -- touch "$disk/build/h"
  [ "$rc" -eq 125 ] && grep -q 'names the same path as' <<<"$err" && [ ! -e "$disk/build/h" ] &&
    pass "$pair: one path two ways is refused" || fail "$pair: exit $rc; stderr: $err"
done
cage_run --ro build --ro "$disk/build" -- cat "$disk/build/real"
[ "$rc" -eq 0 ] && [ "$out" = a ] && pass "--ro by both names: runs" || fail "--ro twice: exit $rc; stderr: $err"
finish
