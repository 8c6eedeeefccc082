#!/usr/bin/env bash
# Found by review (a tester's real-workload run). Attack: a hostile checkout plants links where the
# user will grant (build -> ~, docs -> ~/.ssh, cache -> ~/.cache/x, etc -> /etc); the user runs the
# project's usual `cage --rw ./build -- make` from the project. cage resolved the grant and bound its
# target, and the check that refuses a relative --rw of $HOME judged only the name: all of $HOME was
# writable (~/.bashrc), or ~/.ssh readable. Policy: grants named in the project through links that
# leave it for $HOME (or an ancestor), a system directory, a credential store or elsewhere in $HOME.
# Expected: each refused (125) naming the link's target, nothing written outside.
# Twins: a link inside the project, and one to a place outside $HOME, are followed; the same target
# named by its real path is granted (the caller's explicit choice); a link the caller keeps outside
# the project (a dotfile manager's) is followed.
. "$(dirname "$0")/lib.bash"
require_sandbox
home=$work/home
proj=$home/proj
mkdir -p "$proj/sub" "$home/.ssh" "$home/.cache/x" "$home/dotfiles/nvim" "$home/.config" "$work/elsewhere"
echo key >"$home/.ssh/id_ed25519"
echo rc >"$home/.bashrc"
ln -s "$home" "$proj/build"
ln -s ../.ssh "$proj/docs"
ln -s "$home/.cache/x" "$proj/cache"
ln -s /etc "$proj/etc"
ln -s sub "$proj/inproj"
ln -s "$work/elsewhere" "$proj/out"
ln -s "$home/dotfiles/nvim" "$home/.config/nvim"
chmod -R a+rwX "$work"
cd "$proj" || exit 1
run() { HOME=$home cage_run "$@"; }
refused() {  # $1: the grant's flag, $2: its path, $3: the target named in the refusal, $4: what
  run "$1" "$2" -- sh -c "echo planted > $2/planted; cat $2/id_ed25519 2>/dev/null; true"
  if [ "$rc" -eq 125 ] && grep -q "resolves through a symbolic link to .*$3" <<<"$err"; then pass "$4: refused"
  else fail "$4: exit $rc, want 125 naming $3: $out $err"; fi
  grep -q key <<<"$out" && fail "$4: the key was read: $out"
}
refused --rw ./build "$home" "link to \$HOME"
refused --ro ./docs "$home/.ssh" "link to a credential store"
refused --rw ./cache "$home/.cache/x" "link to \$HOME outside the project"
refused --ro ./etc /etc "link to a system directory"
[ -e "$home/planted" ] || [ -e "$home/.cache/x/planted" ] && fail "a write landed outside the project"
[ "$(cat "$home/.bashrc")" = rc ] || fail ".bashrc changed"

run --rw ./inproj -- sh -c 'echo ok > ./inproj/w'
[ "$rc" -eq 0 ] && [ "$(cat "$proj/sub/w" 2>/dev/null)" = ok ] && pass "twin: a link inside the project is followed" ||
  fail "twin: link inside the project: exit $rc: $err"
run --rw ./out -- sh -c 'echo ok > ./out/w'
[ "$rc" -eq 0 ] && [ "$(cat "$work/elsewhere/w" 2>/dev/null)" = ok ] && pass "twin: a link out of \$HOME is followed" ||
  fail "twin: link out of \$HOME: exit $rc: $err"
run --rw "$home/.cache/x" -- sh -c "echo ok > $home/.cache/x/w"
[ "$rc" -eq 0 ] && [ "$(cat "$home/.cache/x/w" 2>/dev/null)" = ok ] && pass "twin: the same target named by its real path" ||
  fail "twin: real path: exit $rc: $err"
run --ro "$home/.config/nvim" -- true
expect_rc 0 "twin: a link the caller keeps outside the project"
finish
