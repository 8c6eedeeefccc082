#!/usr/bin/env bash
# --learn refuses, before the command runs, where it would hand more than meant or learn nothing:
# an existing FILE, a working directory that is $HOME, --explain, --share-net, and the Landlock-only
# mechanism (no way to hide the credential stores beneath a readable host). Each the refusal's
# class and input, exit status 125, and the command not run; the allowed twin is learn_c_build.sh.
set -u
. "$(dirname "$0")/learn_lib.bash"
cd "$d/proj" || fail "cd"
# refused ARGS...: cage --learn ... refuses with exit 125 and the line (grep -E) in $want.
refused() {
  "$CAGE" "$@" -- touch "$d/ran" 2>"$d/err"; local rc=$?
  [ $rc = 125 ] || fail "$* : want exit 125, got $rc: $(cat "$d/err")"
  grep -qE -- "$want" "$d/err" || fail "$* : want '$want', got: $(cat "$d/err")"
  [ -e "$d/ran" ] && fail "$* : the command ran"
  return 0
}
touch old.toml
want="^cage: invalid_policy: --learn old.toml: the file exists: --learn never replaces a file" refused --learn old.toml
want="^cage: invalid_policy: --learn $d/x.toml: the working directory $d/home is writable while learning" \
  refused --chdir "$d/home" --learn "$d/x.toml"
want="^cage: usage_error: --learn new.toml: --explain judges a run against its policy" refused --explain --learn new.toml
want="^cage: invalid_policy: --learn new.toml: with --share-net" refused --share-net --learn new.toml
want="^cage: spawn_sandbox_unavailable: --learn new.toml: learning needs the namespaces mechanism" \
  refused --mechanism landlock --allow-degraded pid,hide,tmpfs,hostname,nested-ro,metadata,exec-written --learn new.toml
[ -e new.toml ] && fail "a refused --learn wrote its file"
# --dry-run prints the learning view, the plan the run is carried out under.
"$CAGE" --dry-run -v --learn new.toml -- true >"$d/plan" 2>&1 || fail "dry run: $(cat "$d/plan")"
grep -qE "^  bind_ro +/ +# --learn \(learning view\): the host, read-only$" "$d/plan" || fail "no host view: $(cat "$d/plan")"
grep -qE "^  hide +$d/home/.ssh +# --learn \(learning view\): a credential store$" "$d/plan" ||
  fail "the credential store is not hidden: $(cat "$d/plan")"
[ -e new.toml ] && fail "a dry run wrote the profile"
exit 0
