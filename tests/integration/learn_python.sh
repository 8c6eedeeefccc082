#!/usr/bin/env bash
# --learn on a Python test run (python3 -m unittest, stdlib modules, a data file outside the
# project): the profile reruns it with --profile alone; without the data file's line it fails.
set -u
. "$(dirname "$0")/learn_lib.bash" python3
mkdir "$d/data"
echo '{"answer": 42}' > "$d/data/input.json"
cat > "$d/proj/test_answer.py" <<PY
import json, unittest, pathlib
class Answer(unittest.TestCase):
    def test_answer(self):
        self.assertEqual(json.loads(pathlib.Path("$d/data/input.json").read_text())["answer"], 42)
PY
chmod -R a+rX "$d"
cd "$d/proj" || fail "cd"

"$CAGE" --learn cage.toml --result "$d/r.json" -- /usr/bin/python3 -m unittest -q test_answer 2>"$d/err" ||
  fail "learning failed: $(cat "$d/err")"
python3 "$CAGE_SOURCE_DIR/tests/integration/limits_schema.py" "$CAGE_SOURCE_DIR/docs/schema/result.schema.json" \
  "$d/r.json" || fail "the result does not match its schema"
python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["learn"]; sys.exit(l != {"file": sys.argv[2], "written": True})' \
  "$d/r.json" "$P" || fail "the result does not record the profile: $(cat "$d/r.json")"
has "  \"$d/proj\","
has "  \"$d/data/input.json\","

rm -rf __pycache__
"$CAGE" --profile "$P" -- /usr/bin/python3 -m unittest -q test_answer 2>"$d/err" ||
  fail "the learned profile did not rerun: $(cat "$d/err")"
without "input.json"
if "$CAGE" --profile "$d/less.toml" -- /usr/bin/python3 -m unittest -q test_answer 2>"$d/err"; then
  fail "the test passed without the data file's grant"
fi
grep -q "No such file or directory: '$d/data/input.json'" "$d/err" || fail "the denial is not the data file's: $(cat "$d/err")"
# A call the seccomp profile refuses with an error is named in the header, never granted.
"$CAGE" --learn "$d/ptrace.toml" -- /usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).ptrace(0, 0, 0, 0)' \
  2>"$d/err" || fail "learning the ptrace call failed: $(cat "$d/err")"
grep -qxF "# seccomp: the profile refused ptrace with an error, as it will on every run (--explain names the profile \
that allows them)" "$d/ptrace.toml" || fail "the refused call is not named: $(cat "$d/ptrace.toml")"
grep -q "^\[seccomp\]" "$d/ptrace.toml" && fail "the learned profile changed the seccomp profile"
exit 0
