#!/usr/bin/env bash
# README recipe "Your shell setup and tool managers, read-only": the README's line (the built-in
# `shell` profile) in a home made for the test (HOME points at it): bash reads ~/.bashrc (an alias
# and a PATH entry for ~/.local/bin), a tool in ~/.local/bin and a pyenv-style shim in ~/.pyenv run,
# their variable passes; ~/.ssh stays out of view and the start-up file cannot be changed. The twin
# without the profile has none of it. Where the caller has a real ~/.pyenv (root on the CI image),
# its python3 runs through the shim as well.
. "$(dirname "$0")/recipe_lib.bash"
line=$(readme_line 'cage --profile shell --rw . -- bash')
require_sandbox
real_home=$HOME
export HOME=$work/home PYENV_ROOT=$work/home/.pyenv
mkdir -p "$HOME/.local/bin" "$HOME/.ssh" "$PYENV_ROOT/shims" "$work/proj"
printf 'alias greet="echo hello-from-bashrc"\nexport PATH="$HOME/.local/bin:$PYENV_ROOT/shims:$PATH"\n' >"$HOME/.bashrc"
printf '#!/bin/sh\necho tool-ran\n' >"$HOME/.local/bin/hello-tool"
printf '#!/bin/sh\necho "shim-ran root=$PYENV_ROOT"\n' >"$PYENV_ROOT/shims/fakepy"
echo "PRIVATE KEY" >"$HOME/.ssh/id_test"
chmod +x "$HOME/.local/bin/hello-tool" "$PYENV_ROOT/shims/fakepy"
script='greet; hello-tool; fakepy; cat ~/.ssh/id_test; echo x >> ~/.bashrc && echo WROTE-BASHRC'
run_shell() {  # LINE: in the project directory, the script on bash's stdin; sets rc, out, err
  rc=0
  (cd "$work/proj" && eval "$(as_cage "$1")") <<<"$script" >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out"); err=$(cat "$work/.err")
}
run_shell "$line -i"
grep -q '^hello-from-bashrc$' <<<"$out" && pass "~/.bashrc read: the alias works" || fail "no alias: $out $err"
grep -q '^tool-ran$' <<<"$out" && pass "~/.local/bin on PATH runs" || fail "no ~/.local/bin tool: $out $err"
grep -q "^shim-ran root=$PYENV_ROOT\$" <<<"$out" && pass "~/.pyenv shim runs, PYENV_ROOT passed" || fail "no shim: $out $err"
! grep -q 'PRIVATE KEY' <<<"$out" && pass "~/.ssh stays out of view" || fail "~/.ssh readable"
! grep -q 'WROTE-BASHRC' <<<"$out" && [ "$(wc -l <"$HOME/.bashrc")" -eq 2 ] && pass "~/.bashrc is read-only" ||
  fail "~/.bashrc written"
run_shell "${line/--profile shell /} -i"
! grep -q 'hello-from-bashrc\|tool-ran\|shim-ran' <<<"$out" && pass "twin: without the profile none of it" ||
  fail "twin without profile: $out"
if [ -x "$real_home/.pyenv/shims/python3" ]; then
  out=$(cd "$work/proj" && HOME=$real_home PYENV_ROOT=$real_home/.pyenv PATH="$real_home/.pyenv/shims:$PATH" \
    "$CAGE" --profile shell -- python3 -c 'import sys; print(sys.prefix)' 2>&1)
  [[ $out == "$real_home/.pyenv/"* ]] && pass "real pyenv: python3 through the shim: $out" || fail "real pyenv: $out"
fi
finish
