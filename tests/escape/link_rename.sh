#!/usr/bin/env bash
# Attack: move or duplicate a read-only file into writable space, or remove it: hard link and rename
# from a --ro grant into a --rw grant, rename back, unlink in --ro, rename of a --ro mount point that
# sits inside a --rw grant, and a symlink in --rw pointing at a --ro file, written through.
# Policy: --rw $work/rw --ro $work/rw/sub --ro $work/ro. Expected: link/rename across grants fail
# (EXDEV: different mounts), unlink/rename of --ro entries fail (EROFS/EBUSY), writes through the
# symlink fail (EROFS); host files unchanged. Twin: link and rename inside --rw work.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir -p "$work/rw/sub" "$work/ro"
echo ro-content >"$work/ro/file"
echo sub-content >"$work/rw/sub/file"
echo rw-content >"$work/rw/own"
pol=(--rw "$work/rw" --ro "$work/rw/sub" --ro "$work/ro")
if landlock_only; then  # Landlock cannot keep a --ro beneath a --rw read-only: refused by name, and the rest
  cage_run "${pol[@]}" -- true  # of the attacks run against --rw $work/rw --ro $work/ro alone
  [ "$rc" -eq 125 ] && grep -q nested-ro <<<"$err" && pass "nested --ro beneath --rw refused" || fail "nested --ro: $rc $err"
  pol=(--rw "$work/rw" --ro "$work/ro")
fi
py_try() {  # NAME PYTHON-STATEMENT: the statement must raise OSError inside cage
  cage_run "${pol[@]}" -- "$py" -c "import os,sys
try:
    $2
except OSError as e:
    print('denied', e.errno, e.strerror); sys.exit(1)
print('done')"
  if [ "$rc" -eq 1 ] && grep -q '^denied' <<<"$out"; then pass "$1: $out"; else fail "$1 succeeded inside cage: $out $err"; fi
}
cage_run "${pol[@]}" -- sh -c "ln '$work/rw/own' '$work/rw/own.link' && mv '$work/rw/own.link' '$work/rw/own.moved'"
expect_rc 0 "twin: link and rename inside --rw"
[ "$(cat "$work/rw/own.moved" 2>/dev/null)" = rw-content ] || fail "twin: renamed link not on the host"

py_try "hard link --ro -> --rw" "os.link('$work/ro/file', '$work/rw/stolen')"
landlock_only || py_try "hard link nested --ro -> --rw parent" "os.link('$work/rw/sub/file', '$work/rw/stolen2')"
py_try "rename --ro -> --rw" "os.rename('$work/ro/file', '$work/rw/stolen3')"
py_try "rename --rw -> --ro" "os.rename('$work/rw/own', '$work/ro/planted')"
landlock_only || py_try "rename over a --ro file" "os.rename('$work/rw/own', '$work/rw/sub/file')"
landlock_only && py_try "rename over a --ro file" "os.rename('$work/rw/own', '$work/ro/file')"
py_try "unlink in --ro" "os.unlink('$work/ro/file')"
landlock_only || py_try "unlink in nested --ro" "os.unlink('$work/rw/sub/file')"
landlock_only || py_try "rename the nested --ro mount point" "os.rename('$work/rw/sub', '$work/rw/sub2')"
landlock_only || py_try "rmdir the nested --ro mount point" "os.rmdir('$work/rw/sub')"
py_try "write through a symlink in --rw to a --ro file" \
  "os.symlink('$work/ro/file', '$work/rw/l'); open('$work/rw/l', 'w').write('pwned')"
py_try "copy_file_range into --ro" \
  "os.copy_file_range(os.open('$work/rw/own', os.O_RDONLY), os.open('$work/ro/file', os.O_WRONLY), 5)"
[ "$(cat "$work/ro/file")" = ro-content ] || fail "--ro file changed on the host"
landlock_only || [ "$(cat "$work/rw/sub/file")" = sub-content ] || fail "nested --ro file changed on the host"
for f in stolen stolen2 stolen3; do [ -e "$work/rw/$f" ] && fail "$work/rw/$f exists on the host"; done
[ -e "$work/ro/planted" ] && fail "a file was planted in --ro on the host"
landlock_only || [ -d "$work/rw/sub" ] || fail "the nested --ro directory was moved on the host"
finish
