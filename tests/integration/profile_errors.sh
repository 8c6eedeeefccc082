#!/usr/bin/env bash
# An invalid profile stops cage before anything runs: exit 125, the class, and file:line:col plus the
# key in the message. Each error has a valid twin that does run.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" || fail "cd"
expect() {  # expect NAME CLASS PATTERN  (the profile is $d/NAME.toml; the command must not run)
  local name=$1 cls=$2 pat=$3 rc=0
  "$CAGE" --profile "$d/$name.toml" -- sh -c "touch $d/ran-$name" 2>"$d/err" || rc=$?
  [ "$rc" = 125 ] || fail "$name: exit $rc, want 125: $(cat "$d/err")"
  grep -q "$cls" "$d/err" || fail "$name: class $cls missing: $(cat "$d/err")"
  grep -qF "$pat" "$d/err" || fail "$name: '$pat' missing: $(cat "$d/err")"
  [ ! -e "$d/ran-$name" ] || fail "$name: the command ran despite the invalid profile"
}
printf '[fs]\nrox = ["."]\n' >typo.toml;               expect typo invalid_policy "typo.toml:2:1 fs.rox"
printf '[fs]\nro = "."\n' >type.toml;                  expect type invalid_policy "type.toml:2:6 fs.ro"
printf '[fs]\nro = [".",\n' >syntax.toml;              expect syntax invalid_policy "syntax.toml:2:"
printf 'version = 7\n' >version.toml;                  expect version invalid_policy "version.toml:1:11 version"
printf '[fs]\nro = ["${CAGE_TEST_UNSET_VAR}"]\n' >var.toml; expect var invalid_policy "var.toml:2:7 fs.ro"
printf 'include = ["b.toml"]\n' >a.toml; printf 'include = ["a.toml"]\n' >b.toml
expect a invalid_policy "include cycle"
printf '[limits]\ntimeout = "soon"\n' >value.toml;     expect value invalid_policy "value.toml:2:11 limits.timeout soon"
printf 'x = """\\\n\xc2\xa7"""\n' >upstream190.toml;   expect upstream190 invalid_policy "upstream190.toml:1:1 x"
rc=0; "$CAGE" --profile ./nosuch.toml -- true 2>"$d/err" || rc=$?
[ "$rc" = 125 ] && grep -q usage_error "$d/err" || fail "missing profile file: $rc $(cat "$d/err")"
rc=0; "$CAGE" --profile no-such-name -- true 2>"$d/err" || rc=$?
[ "$rc" = 125 ] && grep -q "no profile named" "$d/err" || fail "unknown profile name: $rc $(cat "$d/err")"
rc=0; "$CAGE" --json-errors --profile "$d/typo.toml" -- true 2>"$d/err" || rc=$?
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["class"]=="invalid_policy" and "fs.rox" in e["input"], e' \
  "$d/err" || fail "--json-errors: $(cat "$d/err")"
# The valid twins run.
printf '[fs]\nro = ["."]\n' >good.toml
"$CAGE" --profile "$d/good.toml" -- true 2>"$d/err" || fail "valid profile refused: $(cat "$d/err")"
CAGE_TEST_SET_VAR="$d" "$CAGE" --profile "$d/good.toml" --print-profile >/dev/null || fail "print of a valid profile"
printf '[fs]\nrw = ["${CAGE_TEST_SET_VAR}"]\n' >var2.toml
CAGE_TEST_SET_VAR="$d" "$CAGE" --profile "$d/var2.toml" -- sh -c "touch $d/ran-var2" 2>"$d/err" || fail "var: $(cat "$d/err")"
[ -e "$d/ran-var2" ] || fail "\${VAR} grant did not allow the write"
echo "ok: invalid profiles stop cage with file:line:col; valid twins run"
