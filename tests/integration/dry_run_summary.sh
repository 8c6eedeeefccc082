#!/usr/bin/env bash
# --dry-run is a summary a person reads at a glance: the user's grants first, each with the flag or
# profile line that gave it, then what is private or hidden, network, environment, limits and the
# layers in force; --verbose prints the whole plan (every mount, rule and variable). --dry-run --json
# is the whole plan without file contents: a copied /etc file is named by size and SHA-256, which
# match the host file's. (#20 point 5)
source "$(dirname "$0")/../escape/lib.bash"

mkdir -p out src && touch src/.env
printf '[fs]\nro = ["src"]\n' >p.toml

cage_run --dry-run --rw ./out --hide ./src/.env --profile ./p.toml -- true
expect_rc 0 "--dry-run"
summary=$out
lines=$(wc -l <<<"$summary")
[ "$lines" -le 40 ] && pass "summary is $lines lines" || fail "summary is $lines lines: $summary"
# Grants within the first screen, in their sections, each with its source.
head -12 <<<"$summary" | grep -A1 '^read-write:$' | grep -q "^  $work/cwd/out  *# --rw ./out$" ||
  fail "the --rw grant is not listed first with its flag: $summary"
grep -q "^  $work/cwd/src  *# $work/cwd/p.toml:2:7 fs.ro src$" <<<"$summary" ||
  fail "the profile's grant does not name its file and line: $summary"
grep -A3 '^hidden:$' <<<"$summary" | grep -q "^  $work/cwd/src/.env  *# --hide ./src/.env$" ||
  fail "the hidden path is not listed with its flag: $summary"
for want in '^network: ' '^environment: [0-9]* variables: .*PATH' '^limits: ' '^layers in force:$' \
  '^  seccomp: default$' '--verbose'; do
  grep -q -- "$want" <<<"$summary" || fail "summary lacks '$want': $summary"
done
# The default view is counted, not listed; the whole plan lists it.
! grep -q '/etc/passwd' <<<"$summary" || fail "summary lists /etc entries"
cage_run --dry-run --verbose --rw ./out --hide ./src/.env --profile ./p.toml -- true
expect_rc 0 "--dry-run --verbose"
grep -q '/etc/passwd' <<<"$out" && grep -q "^  bind_rw  $work/cwd/out  *# --rw ./out$" <<<"$out" &&
  grep -q '^environment:$' <<<"$out" || fail "--verbose is not the whole plan: $out"
[ "$(wc -l <<<"$out")" -gt "$lines" ] || fail "--verbose is no longer than the summary"
# -v is --verbose; --verbose means nothing without --dry-run (a usage error, nothing runs).
cage_run --dry-run -v --rw ./out -- true
grep -q '/etc/passwd' <<<"$out" || fail "-v is not --verbose: $out"
cage_run --verbose -- sh -c 'echo ran'
expect_rc 125 "--verbose without --dry-run"
grep -q 'usage_error: --verbose: --verbose only applies to --dry-run' <<<"$err" && [ -z "$out" ] ||
  fail "--verbose without --dry-run: '$err' '$out'"

# JSON: no file contents; a copied file's digest is the host file's.
cage_run --dry-run --json --rw ./out -- true
expect_rc 0 "--dry-run --json"
printf '%s' "$out" >plan.json
"$py" - plan.json <<'PY' || fail "JSON plan carries contents or wrong digests"
import hashlib, json, sys
plan = json.load(open(sys.argv[1]))
files = [m for m in plan["mounts"] if m["kind"] == "file"]
assert files, "no copied files"
checked = 0
for m in files:
    assert "content" not in m, m["target"]
    assert len(m["sha256"]) == 64 and m["bytes"] >= 0, m
    if m["target"] == "/etc/hosts":
        data = open("/etc/hosts", "rb").read()
        assert m["sha256"] == hashlib.sha256(data).hexdigest() and m["bytes"] == len(data), m
        checked += 1
granted = [m["target"] for m in plan["mounts"] if m.get("granted")]
assert any(t.endswith("/cwd/out") for t in granted), granted
print("ok: %d files by digest, /etc/hosts checked %d time(s); granted: %s" % (len(files), checked, granted))
PY
size=$(wc -c <plan.json)
grep -q 'nobody:x:65534' plan.json && fail "passwd lines in the JSON plan"
[ "$size" -lt 65536 ] && pass "JSON plan is $size bytes" || fail "JSON plan is $size bytes"
# The network line says how the allowed hosts are reached in each --net-mode (it said "proxy" for a
# transparent-only run, and nothing of transparent egress in the default mode).
if ! landlock_only; then
  for mode_line in "both|and transparent egress" "proxy|--net-mode proxy: direct connects fail" \
                   "transparent|via transparent egress only"; do
    cage_run --dry-run --net-mode "${mode_line%%|*}" --net 127.0.0.1:8080 -- true
    grep '^network:' <<<"$out" | grep -qF -- "${mode_line#*|}" && pass "--net-mode ${mode_line%%|*}: network line" ||
      fail "--net-mode ${mode_line%%|*}: $(grep '^network:' <<<"$out")"
  done
fi
cage_run --dry-run -- true
grep -q '^network: none (own loopback only)$' <<<"$out" && pass "no --net: network none" || landlock_only ||
  fail "no --net: $(grep '^network:' <<<"$out")"
finish
