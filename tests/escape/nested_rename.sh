#!/usr/bin/env bash
# Attack: set a nested grant aside by renaming one of its ancestors inside --rw, then put a new file
# at its old path on the host: `mv .git .git-old; mkdir -p .git/hooks; echo ... >.git/hooks/pre-commit`
# plants a hook the caller's git runs later; likewise for a --ro file (conf/app.toml), a --hide
# (config/.env), a --ro three levels down (deep/a/b/c), and by exchanging an ancestor with a
# prepared directory (renameat2 RENAME_EXCHANGE).
# Policy: --rw rw --ro rw/.git/hooks --ro rw/conf/app.toml --hide rw/config/.env --ro rw/deep/a/b/c.
# Expected: every rename or exchange of an ancestor fails (EBUSY: each directory between the --rw
# grant and a nested grant is a mount point inside); the host's files are unchanged and nothing is
# planted. Twins: writes in --rw and in those ancestors land, the nested --ro is readable, renames
# of unrelated directories and of entries inside the ancestors work. Landlock-only: a nested --ro
# and --hide beneath --rw are refused (nested-ro, hide), as documented.
. "$(dirname "$0")/lib.bash"
require_sandbox
rw=$work/rw
fresh_tree() {  # the project as the caller left it; each attack starts from it
  chmod -R u+w "$rw" 2>/dev/null
  rm -rf "$rw"
  mkdir -p "$rw/.git/hooks" "$rw/.git/objects" "$rw/conf" "$rw/config" "$rw/deep/a/b/c" "$rw/other" "$rw/evil/hooks"
  echo hook >"$rw/.git/hooks/pre-commit"
  echo app >"$rw/conf/app.toml"
  echo SECRET >"$rw/config/.env"
  echo deep >"$rw/deep/a/b/c/file"
  echo pwned >"$rw/evil/hooks/pre-commit"
}
host_unchanged() {  # WHAT: the nested grants' files are the caller's, at their paths, and nothing moved
  [ "$(cat "$rw/.git/hooks/pre-commit")" = hook ] || fail "$1: the host's pre-commit hook changed"
  [ "$(cat "$rw/conf/app.toml")" = app ] || fail "$1: the host's conf/app.toml changed"
  [ "$(cat "$rw/config/.env")" = SECRET ] || fail "$1: the host's config/.env changed"
  [ "$(cat "$rw/deep/a/b/c/file")" = deep ] || fail "$1: the host's deep/a/b/c/file changed"
  local d
  for d in .git-old conf-old config-old deep/a-old deep/a/b-old deep-old; do
    [ -e "$rw/$d" ] && fail "$1: $rw/$d exists on the host: an ancestor was moved"
  done
  [ "$(cat "$rw/evil/hooks/pre-commit")" = pwned ] || fail "$1: the prepared directory moved"
}
fresh_tree
pol=(--rw "$rw" --ro "$rw/.git/hooks" --ro "$rw/conf/app.toml" --hide "$rw/config/.env" --ro "$rw/deep/a/b/c")
if landlock_only; then
  cage_run --rw "$rw" --ro "$rw/.git/hooks" -- true
  [ "$rc" -eq 125 ] && grep -q nested-ro <<<"$err" && pass "nested --ro beneath --rw refused (Landlock-only)" ||
    fail "nested --ro beneath --rw: exit $rc: $err"
  cage_run --rw "$rw" --hide "$rw/config/.env" -- true
  [ "$rc" -eq 125 ] && grep -q hide <<<"$err" && pass "--hide beneath --rw refused (Landlock-only)" ||
    fail "--hide beneath --rw: exit $rc: $err"
  pol=(--rw "$rw")
fi
py_try() {  # NAME PYTHON-STATEMENTS: the first statement must raise OSError inside cage
  cage_run "${pol[@]}" -- "$py" -c "import os, sys, ctypes
os.chdir('$rw')
def exchange(a, b):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
try:
    $2
except OSError as e:
    print('denied', e.errno, e.strerror); sys.exit(1)
print('done')"
  if [ "$rc" -eq 1 ] && grep -q '^denied' <<<"$out"; then pass "$1: $out"; else fail "$1 succeeded inside cage: $out $err"; fi
  host_unchanged "$1"
  fresh_tree
}
if ! landlock_only; then
  py_try "rename .git aside and plant a hook" \
    "os.rename('.git', '.git-old'); os.makedirs('.git/hooks'); open('.git/hooks/pre-commit', 'w').write('pwned')"
  py_try "exchange .git with a prepared directory" "exchange('evil', '.git')"
  py_try "rename conf aside and plant app.toml" \
    "os.rename('conf', 'conf-old'); os.mkdir('conf'); open('conf/app.toml', 'w').write('pwned')"
  py_try "rename config aside and plant .env" \
    "os.rename('config', 'config-old'); os.mkdir('config'); open('config/.env', 'w').write('pwned')"
  py_try "rename deep/a aside" "os.rename('deep/a', 'deep/a-old'); os.makedirs('deep/a/b/c')"
  py_try "rename deep/a/b aside" "os.rename('deep/a/b', 'deep/a/b-old'); os.makedirs('deep/a/b/c')"
  py_try "rename deep aside" "os.rename('deep', 'deep-old')"
  py_try "replace the nested --ro file by rename" "open('x', 'w').write('pwned'); os.rename('x', 'conf/app.toml')"
  cage_run "${pol[@]}" -- sh -c "cat '$rw/.git/hooks/pre-commit' '$rw/deep/a/b/c/file'"
  [ "$rc" -eq 0 ] && [ "$out" = "hook
deep" ] && pass "twin: the nested --ro grants are readable" || fail "twin: nested --ro unreadable: $rc $out $err"
fi
cage_run "${pol[@]}" -- sh -c "cd '$rw' && echo new >new && echo obj >.git/objects/o && echo c >conf/other &&
  mv other other2 && mv .git/objects .git/objects2 && mv conf/other conf/other2"
expect_rc 0 "twin: writes in --rw and in the ancestors, renames of unrelated directories and entries"
[ "$(cat "$rw/new" "$rw/.git/objects2/o" "$rw/conf/other2" 2>/dev/null)" = "new
obj
c" ] || fail "twin: the writes and renames did not reach the host"
[ -d "$rw/other2" ] || fail "twin: the unrelated rename did not reach the host"
landlock_only || host_unchanged "after the twins"
finish
