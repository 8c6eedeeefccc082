#!/usr/bin/env bash
# A command line becomes a file: `cage --print-profile FLAGS -- CMD` printed as TOML and loaded back
# with --profile gives the same --dry-run --json plan (compared without the "why" notes, which name
# each value's origin: "--rw" on one side, "p.toml:7:7 fs.rw" on the other). Also: a profile plus
# flags merges as documented, a real run under a printed profile writes only where granted, and
# [audit] file writes the audit log beside the profile.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkdir -p "$d/proj/out" "$d/proj/src" "$d/data"
cd "$d/proj" || fail "cd"
plan_eq() {  # plan_eq A.json B.json
  python3 - "$1" "$2" <<'PY'
import json, sys
# Nor the stdio files' paths (landlock.stdio): the two plans are written to a.json and b.json.
def strip(o, key=None):
    if isinstance(o, dict):
        return {k: strip(v, k) for k, v in o.items() if k != "why" and not (key == "stdio" and k == "path")}
    if isinstance(o, list): return [strip(x, key) for x in o]
    return o
a, b = (strip(json.load(open(f))) for f in sys.argv[1:3])
sys.exit(0 if a == b else 1)
PY
}
flags=(--ro "$d/data" --rw ./out --hide ./src --tmpfs "$d/scratch" --setenv 'GREETING=hi $USER ${X}' --env 'LC_*'
       --unsetenv TERM --timeout 30s --rlimit nofile=256 --rlimit core=0:0 --seccomp relaxed --hostname box
       --net '*.example.org:443' --net 127.0.0.1:8080)
"$CAGE" --dry-run --json "${flags[@]}" -- sh -c 'echo "$GREETING"' >"$d/a.json" 2>"$d/err" || fail "dry-run: $(cat "$d/err")"
# Kept in the directory it was printed from: its relative paths are that directory's, as the flags' were.
"$CAGE" --print-profile "${flags[@]}" -- sh -c 'echo "$GREETING"' >"$d/proj/p.toml" 2>"$d/err" || fail "print: $(cat "$d/err")"
grep -q '^version = 1' "$d/proj/p.toml" || fail "no version in printed profile"
grep -q "^rw = \[ '\./out' \]" "$d/proj/p.toml" && ! grep -q "$d/proj" "$d/proj/p.toml" ||
  fail "relative path not kept as written: $(cat "$d/proj/p.toml")"
"$CAGE" --dry-run --json --profile ./p.toml >"$d/b.json" 2>"$d/err" || fail "profile dry-run: $(cat "$d/err")"
plan_eq "$d/a.json" "$d/b.json" || { diff "$d/a.json" "$d/b.json" | head -20; fail "round trip changed the plan"; }
grep -q 'p.toml:' "$d/b.json" || fail "profile values do not name their file:line"
# The twin: a different plan must compare unequal (the comparison is not vacuous).
"$CAGE" --dry-run --json --profile ./p.toml --rw ./src >"$d/c.json" 2>/dev/null || fail "profile + --rw ./src"
if plan_eq "$d/a.json" "$d/c.json"; then fail "a changed plan compared equal"; fi
# Printing the loaded profile again prints the same profile (a fixed point).
"$CAGE" --print-profile --profile ./p.toml >"$d/p2.toml" || fail "print of a profile"
diff -u "$d/proj/p.toml" "$d/p2.toml" || fail "print -> load -> print is not stable"

# Another user, another checkout: a profile printed from a project's cage.toml (relative, optional,
# ${HOME} and ~ entries) and flags loads in a copy of the project, under another home, to the plan
# the original gives there. Printed where an optional path is absent, it is kept for where it exists.
mkdir -p "$d/a/proj/out" "$d/a/proj/src" "$d/home-a/.config/tool" "$d/home-b/.config/tool"
cat >"$d/a/proj/cage.toml" <<'T'
[fs]
rw = ["out", { path = "cache", optional = true }, { path = "~/.cache/tool", optional = true }]
ro = ["${HOME}/.config/tool"]
[env]
set = { TOOL_HOME = "${HOME}/.config/tool" }
T
(cd "$d/a/proj" && HOME="$d/home-a" "$CAGE" --print-profile --profile ./cage.toml --ro ./src -- true \
  >"$d/printed.toml" 2>"$d/err") || fail "print in checkout a: $(cat "$d/err")"
grep -q "optional = true, path = 'cache'" "$d/printed.toml" && grep -q "path = '~/.cache/tool'" "$d/printed.toml" &&
  grep -q "'\${HOME}/.config/tool'" "$d/printed.toml" || fail "optional or \${HOME} entries lost: $(cat "$d/printed.toml")"
! grep -q "$d/a\|$d/home-a" "$d/printed.toml" || fail "the printed profile names checkout a or its home: $(cat "$d/printed.toml")"
cp -a "$d/a" "$d/b" && mv "$d/printed.toml" "$d/b/proj/printed.toml"
mkdir -p "$d/b/proj/cache" "$d/home-b/.cache/tool"  # the optional paths exist for user b
(cd "$d/b/proj" && HOME="$d/home-b" "$CAGE" --dry-run --json --profile ./cage.toml --ro ./src -- true >"$d/orig.json" &&
  HOME="$d/home-b" "$CAGE" --dry-run --json --profile ./printed.toml >"$d/printed.json") 2>"$d/err" ||
  fail "dry-run in checkout b: $(cat "$d/err")"
plan_eq "$d/orig.json" "$d/printed.json" || { diff "$d/orig.json" "$d/printed.json" | head -20; fail "printed profile plans differently"; }
python3 - "$d/printed.json" "$d" <<'PY' || fail "checkout b's plan does not grant b's paths: $(cat "$d/printed.json")"
import json, sys
p, d = json.load(open(sys.argv[1])), sys.argv[2]
rw = {m["target"] for m in p["mounts"] if m["kind"] == "bind_rw"}
want = {d + "/b/proj/out", d + "/b/proj/cache", d + "/home-b/.cache/tool"}
assert want <= rw, (want, rw)
assert "TOOL_HOME=" + d + "/home-b/.config/tool" in p["env"], p["env"]
PY
# The twin: printed before this change's way (absolute paths of checkout a), it plans differently.
sed "s|'out'|'$d/a/proj/out'|" "$d/b/proj/printed.toml" >"$d/b/proj/abs.toml"
(cd "$d/b/proj" && HOME="$d/home-b" "$CAGE" --dry-run --json --profile ./abs.toml >"$d/abs.json") 2>/dev/null ||
  fail "dry-run of the absolute twin"
if plan_eq "$d/orig.json" "$d/abs.json"; then fail "a profile naming checkout a planned as checkout b's"; fi

# Merge: the command line's scalar overrides the profile's, its list extends it, its --rw of a path
# the profile gives --ro wins, and its command replaces the profile's run.
cat >"$d/m.toml" <<T
run = ["false"]
hostname = "fromprofile"
[fs]
ro = ["proj/out"]
[limits]
timeout = "1m"
T
"$CAGE" --dry-run --json --profile "$d/m.toml" --hostname cli --timeout 2s --rw ./out -- true >"$d/m.json" 2>"$d/err" ||
  fail "merge dry-run: $(cat "$d/err")"
python3 - "$d/m.json" "$d/proj/out" <<'PY' || fail "merge rules not applied: $(cat "$d/m.json")"
import json, sys
p = json.load(open(sys.argv[1])); out = sys.argv[2]
assert p["hostname"] == "cli", p["hostname"]
assert p["argv"] == ["true"], p["argv"]
assert p["limits"]["timeout_ms"] == 2000, p["limits"]
kinds = [m["kind"] for m in p["mounts"] if m["target"] == out]
assert kinds == ["bind_rw"], kinds
PY
"$CAGE" --dry-run --json --profile "$d/m.toml" >"$d/m2.json" || fail "profile run without a command"
grep -q '"argv" : \[ *"false" *\]\|"argv":\["false"\]' "$d/m2.json" ||
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["argv"]==["false"]' "$d/m2.json" || fail "run not used"

# A real run under the printed profile: writes land in ./out, not in the hidden or read-only places.
printf 'run = ["sh", "-c", "echo ok > out/f; echo no > %s/data/g"]\n[fs]\nro = ["%s/data"]\nrw = ["%s/proj/out"]\n' \
  "$d" "$d" "$d" >"$d/r.toml"
"$CAGE" --profile "$d/r.toml" 2>"$d/err" && fail "write to the read-only grant succeeded"
[ "$(cat out/f 2>/dev/null)" = ok ] || fail "allowed write lost: $(cat "$d/err")"
[ ! -e "$d/data/g" ] || fail "read-only grant was written"
grep -q 'Read-only file system' "$d/err" || fail "denied write not denied as expected: $(cat "$d/err")"
# [audit] file is relative to the profile's directory and feeds --audit; without it nothing is written.
mkdir -p "$d/au"
printf '[audit]\nfile = "run.jsonl"\n' >"$d/au/a.toml"
"$CAGE" --profile "$d/au/a.toml" -- true 2>"$d/err" || fail "run with [audit]: $(cat "$d/err")"
grep -q '"cage_version"' "$d/au/run.jsonl" 2>/dev/null || fail "[audit] file not written next to the profile"
printf '[fs]\nro = ["."]\n' >"$d/au/b.toml"
"$CAGE" --profile "$d/au/b.toml" -- true || fail "run without [audit]"
[ "$(ls "$d/au" | grep -c jsonl)" = 1 ] || fail "an audit file appeared without [audit]"
echo "ok: profile round trip, merge rules and a real run"
