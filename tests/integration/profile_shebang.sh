#!/usr/bin/env bash
# Scripts that carry their sandbox, executed directly (./script): the options form
# (#!/usr/bin/env -S cage --script --profile ./p.toml -- bash, and #!/path/to/cage --script ... where the
# kernel passes the line as one word) and the inline form (#!/usr/bin/env -S cage --script with a
# '# /// cage' block), in bash, python3 and node ('//' comments). --script alone says "a script": the
# script is granted read-only by itself, relative paths after --script resolve against the script's
# directory (not the caller's), without --script they are the caller's whatever the file says, and
# writes outside the granted out/ directory never reach the host (under /tmp they land in the
# sandbox's private /tmp, so the check is on the host side).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkdir -p "$d/bin" "$d/s/out" "$d/elsewhere"
ln -s "$CAGE" "$d/bin/cage"
export PATH="$d/bin:/usr/local/bin:/usr/bin:/bin"
command -v python3 >/dev/null || { echo "skip: no python3 in /usr/bin"; exit 77; }
cd "$d/elsewhere" || fail "cd"

# --profile form, bash. p.toml sits next to the script; "out" in it means $d/s/out.
printf '[fs]\nrw = ["out"]\n' >"$d/s/p.toml"
cat >"$d/s/prof.sh" <<'S'
#!/usr/bin/env -S cage --script --profile ./p.toml -- bash
echo "bash $1" > "$(dirname "$0")/out/bash"
echo "not allowed" > "$(dirname "$0")/outside" 2>/dev/null
exit 0
S
chmod +x "$d/s/prof.sh"
../s/prof.sh one 2>"$d/err" || fail "profile-form bash script failed: $(cat "$d/err")"
[ "$(cat "$d/s/out/bash")" = "bash one" ] || fail "allowed write lost: $(cat "$d/err")"
[ ! -e "$d/s/outside" ] || fail "write beside the script reached the host"

# --profile form, python3, run by its absolute path from another directory.
cat >"$d/s/prof.py" <<'S'
#!/usr/bin/env -S cage --script --profile ./p.toml -- python3
import os, sys
here = os.path.dirname(sys.argv[0])
open(os.path.join(here, "out", "py"), "w").write("py " + sys.argv[1])
try:
    open(os.path.join(here, "outside-py"), "w").write("x")
except OSError:
    pass
S
chmod +x "$d/s/prof.py"
"$d/s/prof.py" two 2>"$d/err" || fail "profile-form python script failed ($?): $(cat "$d/err")"
[ "$(cat "$d/s/out/py")" = "py two" ] && [ ! -e "$d/s/outside-py" ] || fail "python profile form: $(cat "$d/err")"

# The kernel's own form: #!CAGE --script ... reaches cage as one argument, split by cage.
printf '#!%s --script --rw out -- bash\necho "direct $1" > "$(dirname "$0")/out/direct"\n' "$CAGE" >"$d/s/direct.sh"
chmod +x "$d/s/direct.sh"
../s/direct.sh three 2>"$d/err" || fail "direct #!cage --script failed: $(cat "$d/err")"
[ "$(cat "$d/s/out/direct")" = "direct three" ] || fail "direct form: $(cat "$d/err")"

# Without --script the same words are the caller's: ./p.toml is looked up in the current directory
# (there is none: exit 125 before anything runs), whatever the script's first line says.
cat >"$d/s/old.sh" <<S
#!/usr/bin/env -S cage --profile ./p.toml -- bash
touch $d/ran-old
S
chmod +x "$d/s/old.sh"
rc=0; ../s/old.sh 2>"$d/err" || rc=$?
[ "$rc" = 125 ] && grep -qF -- "--profile ./p.toml" "$d/err" && [ ! -e "$d/ran-old" ] || fail "no --script: $rc $(cat "$d/err")"

# Inline form, python3 and bash: the block's run = [...] is the interpreter.
cat >"$d/s/inline.py" <<'S'
#!/usr/bin/env -S cage --script
# /// cage
# version = 1
# run = ["python3"]
# [fs]
# rw = ["out"]
# ///
import os, sys
here = os.path.dirname(sys.argv[0])
open(os.path.join(here, "out", "inline-py"), "w").write(" ".join(sys.argv[1:]))
try:
    open(os.path.join(here, "outside-inline"), "w").write("x")
except OSError:
    pass
S
chmod +x "$d/s/inline.py"
../s/inline.py a --help 2>"$d/err" || fail "inline python script failed ($?): $(cat "$d/err")"
[ "$(cat "$d/s/out/inline-py")" = "a --help" ] && [ ! -e "$d/s/outside-inline" ] || fail "inline python: $(cat "$d/err")"
cat >"$d/s/inline.sh" <<'S'
#!/usr/bin/env -S cage --script
# /// cage
# run = ["bash"]
# [fs]
# rw = ["out"]
# ///
echo "inline $*" > "$(dirname "$0")/out/inline-sh"
S
chmod +x "$d/s/inline.sh"
../s/inline.sh x y 2>"$d/err" || fail "inline bash script failed: $(cat "$d/err")"
[ "$(cat "$d/s/out/inline-sh")" = "inline x y" ] || fail "inline bash: $(cat "$d/err")"

# '//' comments (node), when node is installed.
if [ -x /usr/bin/node ]; then
  cat >"$d/s/inline.js" <<'S'
#!/usr/bin/env -S cage --script
// /// cage
// run = ["node"]
// [fs]
// rw = ["out"]
// ///
require("fs").writeFileSync(require("path").join(__dirname, "out", "js"), "js " + process.argv[2]);
S
  chmod +x "$d/s/inline.js"
  ../s/inline.js z 2>"$d/err" || fail "inline node script failed: $(cat "$d/err")"
  [ "$(cat "$d/s/out/js")" = "js z" ] || fail "inline node: $(cat "$d/err")"
else
  echo "note: /usr/bin/node missing, '//' form checked by the unit tests only"
fi

# A script without a block, and a block with an error, stop before running (exit 125, file:line:col).
printf '#!/usr/bin/env -S cage --script\ntouch %s/ran\n' "$d" >"$d/s/noblock.sh"; chmod +x "$d/s/noblock.sh"
rc=0; "$d/s/noblock.sh" 2>"$d/err" || rc=$?
[ "$rc" = 125 ] && grep -q "no '# /// cage' block" "$d/err" && [ ! -e "$d/ran" ] || fail "no block: $rc $(cat "$d/err")"
printf '#!/usr/bin/env -S cage --script\n# /// cage\n# run = ["bash"]\n# [fs]\n# rw = "out"\n# ///\ntouch %s/ran\n' "$d" \
  >"$d/s/badblock.sh"; chmod +x "$d/s/badblock.sh"
rc=0; "$d/s/badblock.sh" 2>"$d/err" || rc=$?
[ "$rc" = 125 ] && grep -qF "badblock.sh:5:8 fs.rw" "$d/err" && [ ! -e "$d/ran" ] || fail "bad block: $rc $(cat "$d/err")"
echo "ok: shebang scripts (profile and inline forms; bash, python3, node)"
