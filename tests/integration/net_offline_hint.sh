#!/usr/bin/env bash
# A run without --net that looked names up ends with one line saying the network is off and the
# --net flags that would allow them (issue 19 item 9); a run that looked nothing up, a run with -q
# and a run with --net say nothing of the kind. Inside, every name is NXDOMAIN at once. Runs as
# root and as an unprivileged user.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin getent
run() { timeout 60 "$CAGE" "$@"; }
if run -- getent hosts registry.example.org 2>"$d/err" >"$d/out"; then fail "a name resolved without --net"; fi
[ ! -s "$d/out" ] || fail "a lookup without --net answered: $(cat "$d/out")"
grep -q '^cage: note: the network is off (no --net) and the run looked up registry.example.org; .*--net registry.example.org:443$' "$d/err" ||
  fail "no offline hint: $(cat "$d/err")"
[ "$(grep -c 'network is off' "$d/err")" = 1 ] || fail "the hint is not one line"
# Two names, each looked up twice (A and AAAA): each named once.
run -- sh -c 'getent ahosts a.example.org; getent ahosts b.example.org; getent ahosts a.example.org; :' 2>"$d/err" >/dev/null
grep -q 'looked up a.example.org, b.example.org; .*--net a.example.org:443 --net b.example.org:443$' "$d/err" ||
  fail "two names: $(cat "$d/err")"
# The twins: nothing looked up, -q, and a run with --net.
run -- true 2>"$d/err" || fail "a run without lookups failed"
grep -q 'network is off' "$d/err" && fail "a run that looked nothing up got the hint"
run -q -- sh -c 'getent hosts quiet.example.org; :' 2>"$d/err"
grep -q 'network is off' "$d/err" && fail "-q did not silence the hint"
run --net allowed.example:443 -- sh -c 'getent hosts other.example.org; :' 2>"$d/err"
grep -q 'network is off' "$d/err" && fail "a run with --net got the offline hint"
# The audit log has the names too.
run --audit "$d/audit.jsonl" -- sh -c 'getent hosts audited.example.org; :' 2>/dev/null
grep '"type":"offline_lookups"' "$d/audit.jsonl" | grep -q '"names":\["audited.example.org"\]' || fail "the audit log lacks the lookups: $(cat "$d/audit.jsonl")"
echo "ok: offline lookups are answered NXDOMAIN and named once at the end"
