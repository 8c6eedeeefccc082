#!/usr/bin/env bash
# --check with the flags of the run one means (runs as root and as an unprivileged user): it plans
# that run as the run would, names the layers in force (the Landlock line for this kernel's ABI,
# the same line --dry-run, --result and the audit's spawn event carry), and exits 125 only when
# that run cannot start; each refusal next to its accepted twin.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
CAGE=${CAGE:?}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
chmod 755 "$d"

"$CAGE" --check >"$d/check" 2>&1 || fail "--check of a plain run failed: $(cat "$d/check")"
grep -q "^the run (mechanism namespaces) would have in force:" "$d/check" || fail "no layers listed: $(cat "$d/check")"
layer=$(grep -E "^  landlock( ABI [0-9]+)?:" "$d/check" | sed 's/^  //')
[ -n "$layer" ] || fail "no Landlock layer named: $(cat "$d/check")"
abi=$(sed -n 's/^landlock ABI \([0-9]*\):.*/\1/p' <<<"$layer"); abi=${abi:-0}

# The headline command's flags: planned, with the network boundary named.
"$CAGE" --check --ro "$d" --net api.github.com:443 >"$d/check" 2>&1 || fail "--check --net refused: $(cat "$d/check")"
grep -q "network: empty network namespace" "$d/check" || fail "--check --net: no network layer: $(cat "$d/check")"
"$CAGE" --check --json --net api.github.com:443 >"$d/json" || fail "--check --json --net failed"
python3 - "$d/json" "$layer" <<'PY' || fail "--check --json: $(cat "$d/json")"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["full_confinement"] is True and t["mechanism"] == "namespaces", t
assert sys.argv[2] in t["layers"], t["layers"]
assert t["mechanisms"]["landlock"]["required"] is False, t["mechanisms"]["landlock"]
PY

# --dry-run, --result and the audit name the same Landlock layer.
"$CAGE" --dry-run -- true >"$d/dry" || fail "--dry-run failed"
grep -qF "  $layer" "$d/dry" || fail "--dry-run does not name '$layer': $(cat "$d/dry")"
"$CAGE" --result "$d/result.json" --audit "$d/audit.log" -- true || fail "a plain run failed"
python3 - "$d/result.json" "$d/audit.log" "$layer" "$abi" <<'PY' || fail "--result / --audit do not name the layer"
import json, sys
r = json.load(open(sys.argv[1]))
assert sys.argv[3] in r["layers"], r
spawn = [json.loads(l) for l in open(sys.argv[2]) if '"spawn"' in l][0]
m = spawn["mechanisms"]
assert m["landlock"] == sys.argv[3] and sys.argv[3] in m["layers"], m
assert m["landlock_abi"] == (int(sys.argv[4]) if int(sys.argv[4]) >= 2 else 0), m
PY

# A run that cannot start fails the check (125) and says why; its twin passes.
missing="$d/not-there"
"$CAGE" --check --ro "$missing" >"$d/check" 2>&1; rc=$?
[ "$rc" = 125 ] || fail "--check with a missing grant exited $rc"
grep -q "^refused: cage: invalid_policy: --ro $missing" "$d/check" || fail "refusal not named: $(cat "$d/check")"
"$CAGE" --check --mechanism landlock >"$d/check" 2>&1; rc=$?
[ "$rc" = 125 ] || fail "--check --mechanism landlock without --allow-degraded=pid exited $rc"
# Below ABI 6 the too-low ABI is refused first (no --allow-degraded can accept it); from 6 the pid loss.
want="allow-degraded=pid"; [ "$abi" -ge 6 ] || want="needs Landlock ABI 6"
grep -q "^refused: .*$want" "$d/check" || fail "landlock refusal unclear (want '$want'): $(cat "$d/check")"
"$CAGE" --check --mechanism landlock --allow-degraded pid >"$d/check" 2>&1; rc=$?
if [ "$abi" -ge 6 ]; then
  [ "$rc" = 0 ] || fail "--check --mechanism landlock --allow-degraded pid exited $rc on ABI $abi: $(cat "$d/check")"
  grep -q "^the run (mechanism landlock)" "$d/check" || fail "the Landlock-only mechanism not named: $(cat "$d/check")"
  grep -q "^ok      landlock" "$d/check" || fail "landlock probe not ok: $(cat "$d/check")"
else
  [ "$rc" = 125 ] || fail "--check --mechanism landlock on ABI $abi exited $rc"
  grep -q "needs Landlock ABI 6" "$d/check" || fail "ABI refusal unclear: $(cat "$d/check")"
fi
echo ok
