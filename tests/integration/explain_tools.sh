#!/usr/bin/env bash
# --explain on two real tools (root and unprivileged, under namespaces): npm install of a local
# file: dependency, with and without the ~/.npmrc whose setting it must honour, and python3 -m venv beneath a read-only grant. Each refusal's line is
# exact and the run with its remedy applied does what the refusal prevented (issue 21's test list;
# git status, make, curl and date -s are in explain_lib.bash).
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin npm /usr/bin/python3
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || /usr/bin/python3 -c 'import venv' ||
  { echo "skip: python3's venv module missing"; exit 77; }
chmod 755 "$d"
# `line REGEX`: stderr of the last run has exactly one line matching it, whole.
line() { [ "$(grep -cE "^$1\$" "$d/err")" = 1 ] || fail "want one line '$1'; stderr: $(cat "$d/err")"; }

# Namespaces only: under Landlock only cage gives the workload a private $HOME, so the test's rc is
# not the one npm looks for (explain_lib.bash covers that mechanism's verdicts).
C=("$CAGE" --no-cwd); NOT=hidden mech=namespaces
rm -rf "$d/home" "$d/dep" "$d/proj" "$d/v"
mkdir -p "$d/home" "$d/dep" "$d/proj" "$d/v"
# package-lock=false is the rc's setting: honoured, npm writes no package-lock.json. The rc also
# keeps npm from asking the network whether it is out of date (the run has no network).
printf 'package-lock=false\nupdate-notifier=false\n' > "$d/home/.npmrc"
echo '{"name":"dep","version":"1.0.0"}' > "$d/dep/package.json"
echo '{"name":"proj","version":"1.0.0","dependencies":{"dep":"file:../dep"}}' > "$d/proj/package.json"
chmod -R a+rwX "$d/home" "$d/dep" "$d/proj" "$d/v"
npm=(--rw "$d/proj" --ro "$d/dep" -- sh -c "cd $d/proj && npm install --offline --no-audit --no-fund")

# Without the rc: npm installs, but with its defaults (a lock file), and the rc is named.
HOME="$d/home" "${C[@]}" --explain "${npm[@]}" >/dev/null 2>"$d/err" ||
  fail "$mech: npm install failed: $(cat "$d/err")"
[ -L "$d/proj/node_modules/dep" ] || fail "$mech: npm did not install the file: dependency"
[ -e "$d/proj/package-lock.json" ] || fail "$mech: npm honoured an rc it could not read"
line "cage: explain: read $d/home/.npmrc: $NOT \(1x, first npm[^[]*\[[0-9]+\]\); allow with --ro $d/home/.npmrc"
# The remedy applied: the rc's setting is honoured (no lock file) and nothing about it is listed.
rm -rf "$d/proj/node_modules" "$d/proj/package-lock.json"
HOME="$d/home" "${C[@]}" --explain --ro "$d/home/.npmrc" "${npm[@]}" >/dev/null 2>"$d/err" ||
  fail "$mech: npm install with the rc granted failed: $(cat "$d/err")"
[ -L "$d/proj/node_modules/dep" ] || fail "$mech: npm did not install the file: dependency (rc granted)"
[ -e "$d/proj/package-lock.json" ] && fail "$mech: npm ignored the granted rc's package-lock=false"
grep -q "\.npmrc" "$d/err" && fail "$mech: the granted rc was listed: $(cat "$d/err")"

# python3 -m venv beneath a read-only grant: the directory it creates is named with --rw of its
# parent; applied, the environment is made on the host and its interpreter runs.
venv=(-- /usr/bin/python3 -m venv --without-pip "$d/v/env")
"${C[@]}" --explain --ro "$d/v" "${venv[@]}" >/dev/null 2>"$d/err" && fail "$mech: venv written beneath --ro"
[ -e "$d/v/env" ] && fail "$mech: the refused venv reached the host"
line "cage: explain: create $d/v/env: read_only \(1x, first python3\[[0-9]+\]\); allow with --rw $d/v"
"${C[@]}" --explain --rw "$d/v" "${venv[@]}" >/dev/null 2>"$d/err" ||
  fail "$mech: venv with the suggested --rw failed: $(cat "$d/err")"
[ -x "$d/v/env/bin/python" ] && [ -f "$d/v/env/pyvenv.cfg" ] || fail "$mech: the venv did not reach the host"
grep -q "explain: create $d/v" "$d/err" && fail "$mech: an allowed create was listed: $(cat "$d/err")"
[ "$("$d/v/env/bin/python" -c 'import sys; print(sys.prefix)')" = "$d/v/env" ] ||
  fail "$mech: the venv's interpreter does not run in it"
echo ok
