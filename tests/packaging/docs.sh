#!/usr/bin/env bash
# The documentation agrees with the binary: every option of `cage --help` has an entry in the
# OPTIONS section of man/cage.1 and in each completion (bash, zsh, fish, PowerShell), and none of
# them lists an option the binary lacks; the committed man/cage.1 is what man/build.sh makes; mandoc
# -Tlint has nothing to say; the completions load in real bash, zsh and fish and complete options,
# paths, profile and seccomp names.
set -euo pipefail
: "${CAGE:?}" "${CAGE_SOURCE_DIR:?}"
src=$CAGE_SOURCE_DIR
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
for tool in mandoc bash zsh fish col; do
  command -v $tool >/dev/null || { echo "skip: $tool not installed (packaging/setup-debian.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# -- the options of the binary, from --help ("  -V,--version", "  --ro PATH ...")
"$CAGE" --help > "$tmp/help"
grep -oE '^  (-[A-Za-z],)?--[a-z][a-z0-9-]*' "$tmp/help" | sed 's/^ *//; s/,/\n/' | sort -u > "$tmp/help.opts"
[ "$(wc -l < "$tmp/help.opts")" -ge 20 ] || bad "cage --help lists only $(wc -l < "$tmp/help.opts") options"

# -- man page: up to date, lint clean, every option a tag in OPTIONS and nothing extra
"$src/man/build.sh" --check || bad "man/cage.1 is not what man/build.sh generates"
lint=$(mandoc -Tlint -Wall "$src/man/cage.1" 2>&1 || true)
[ -z "$lint" ] || bad "mandoc -Tlint man/cage.1: $lint"
if command -v groff >/dev/null; then  # what man(1) and lintian render with
  gw=$(groff -man -Tutf8 -ww "$src/man/cage.1" 2>&1 >/dev/null || true)
  [ -z "$gw" ] || bad "groff warnings on man/cage.1: $(head -n5 <<< "$gw")"
fi
MANWIDTH=200 mandoc -Tascii -Owidth=200 "$src/man/cage.1" | col -bx > "$tmp/man.txt"
sed -n '/^OPTIONS$/,/^[A-Z]/p' "$tmp/man.txt" | grep -E '^ {7}-' | sed 's/^ *//' |
  grep -oE '^(-[A-Za-z], )?--?[A-Za-z][a-z0-9-]*' | sed 's/, /\n/' | sort -u > "$tmp/man.opts"
comm -23 "$tmp/help.opts" "$tmp/man.opts" | sed 's/^/man\/cage.1 OPTIONS lacks /' > "$tmp/d1"
comm -13 "$tmp/help.opts" "$tmp/man.opts" | sed 's/^/man\/cage.1 OPTIONS documents an option cage lacks: /' >> "$tmp/d1"
while read -r l; do bad "$l"; done < "$tmp/d1"

# -- completions: the option list of each file
sed -n '/local opts="/,/"$/p' "$src/completions/cage.bash" | grep -oE '(^|[ "])--?[A-Za-z][a-z0-9-]*' |
  sed 's/^[ "]//' | sort -u > "$tmp/bash.opts"
grep -oE "^ +'(\\(- \\*\\)'\\{)?[^[]*\\[" "$src/completions/_cage" | grep -oE -- '--?[A-Za-z][a-z0-9-]*' |
  sort -u > "$tmp/zsh.opts"
grep '^complete -c cage ' "$src/completions/cage.fish" > "$tmp/fish.lines"
{ grep -oE -- ' -l [a-z][a-z0-9-]*' "$tmp/fish.lines" | sed 's/ -l /--/'
  grep -oE -- ' -s [A-Za-z]' "$tmp/fish.lines" | sed 's/ -s /-/'; } | sort -u > "$tmp/fish.opts"
sed -n '/CageOptions = \[ordered\]@{/,/^}/p' "$src/completions/cage.ps1" | grep -oE "^ +'-[^']+'" |
  tr -d " '" | sort -u > "$tmp/ps1.opts"
for sh in bash zsh fish ps1; do
  while read -r o; do bad "completion ($sh) lacks $o"; done < <(comm -23 "$tmp/help.opts" "$tmp/$sh.opts")
  while read -r o; do bad "completion ($sh) offers $o, which cage lacks"; done < <(comm -13 "$tmp/help.opts" "$tmp/$sh.opts")
done

# -- bash: source the file and call the completion function as readline would
cd "$src"
bash_complete() {
  bash --norc --noprofile -c 'source completions/cage.bash
    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
    _cage cage "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' bash "$@"
}
# The completion's output is captured whole, then searched. Piped into `grep -q` it raced: grep
# exits at its first match and closes the pipe, bash's printf writes each line with its own write(2),
# so a line after the match (`build` after `git-https`) met a closed pipe, the completing shell died
# of SIGPIPE (141), pipefail made that the pipeline's status and set -e ended the test without a word.
run_completion() {  # run_completion WHAT COMMAND...: its output in $out; a failing run is a FAIL
  out=$("${@:2}") || { bad "$1: the completion exited $?"; out=""; }
}
expect() {  # expect WHAT NEEDLE COMMAND...: COMMAND prints NEEDLE as a whole line
  local out; run_completion "$1" "${@:3}"
  grep -qxF -- "$2" <<< "$out" || bad "$1: expected '$2'"
}
refuse() {  # refuse WHAT NEEDLE COMMAND...: COMMAND does not print NEEDLE as a whole line
  local out; run_completion "$1" "${@:3}"
  if grep -qxF -- "$2" <<< "$out"; then bad "$1: offered '$2'"; fi
}
expect "bash: cage --r" --ro bash_complete cage --r
expect "bash: cage --r" --rw bash_complete cage --r
expect "bash: --seccomp r" relaxed bash_complete cage --seccomp r
expect "bash: --target" windows bash_complete cage --target ""
expect "bash: --profile" git-https bash_complete cage --profile ""
expect "bash: --ro man/bu" man/build.sh bash_complete cage --ro man/bu
expect "bash: --chdir compl" completions bash_complete cage --chdir compl
expect "bash: -- bas" bash bash_complete cage --ro . -- bas
[ -z "$(bash_complete cage --ro . -- ls --r)" ] || [ -n "$(bash_complete cage --ro . -- ls --r | grep -vx -- --ro)" ] ||
  bad "bash: after -- the command's words must not complete cage's options"

# -- zsh: the file parses, and compinit picks it up from fpath as the completion for cage
zsh -n "$src/completions/_cage" || bad "zsh -n completions/_cage"
got=$(zsh -fc "fpath=('$src/completions' \$fpath); autoload -U compinit; compinit -u -d '$tmp/zcompdump'; print -r -- \${_comps[cage]}")
[ "$got" = "_cage" ] || bad "zsh: compinit did not register _cage for cage (got '$got')"

# -- fish: load it and ask for completions
fish_complete() { fish --no-config -c "source completions/cage.fish; complete -C '$1'" | cut -f1; }
expect "fish: cage --r" --ro fish_complete "cage --r"
expect "fish: cage --r" --rlimit fish_complete "cage --r"
expect "fish: --seccomp" none fish_complete "cage --seccomp "
expect "fish: --target m" macos fish_complete "cage --target m"
expect "fish: --ro man/bu" man/build.sh fish_complete "cage --ro man/bu"
expect "fish: -- bas" bash fish_complete "cage --ro . -- bas"
refuse "fish: cage options after --" --rw fish_complete "cage --ro . -- ls --r"

[ $fail -eq 0 ] && echo "ok: $(wc -l < "$tmp/help.opts") options documented in man/cage.1 and 4 completions"
exit $fail
