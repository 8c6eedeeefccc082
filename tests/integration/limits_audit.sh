#!/usr/bin/env bash
# --audit: JSON lines with schema, time and run id, to a file or fd:N; spawn carries the full policy
# and its hash (equal to the result's), the escape hatches, and each --net decision is an event.
# A destination that cannot be written is a warning, and with --audit-required a refusal (125).
set -u
. "$(dirname "$0")/limits_lib.bash"
run() { timeout 60 "$CAGE" "$@"; }

run --audit "$work/a.log" --result "$work/r.json" --seccomp none --setenv TOKEN=s3cret -- true || fail "audited run failed"
valid_audit "$work/a.log"; valid_result "$work/r.json"
types=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$work/a.log")
[ "$types" = "spawn exit" ] || fail "events were: $types"
[ "$(json "$work/a.log" 'd["policy_hash"]')" = "$(json "$work/r.json" 'd["policy_hash"]')" ] || fail "hashes differ"
json "$work/a.log" 'd["mechanisms"]["escape_hatches"]' | grep -q -- '--seccomp none' || fail "escape hatch not audited"
if grep -q s3cret "$work/a.log"; then fail "a --setenv value leaked into the audit log"; fi
# The same policy gives the same hash; another policy another.
run --result "$work/r2.json" --seccomp none --setenv TOKEN=s3cret -- true
[ "$(json "$work/r.json" 'd["policy_hash"]')" = "$(json "$work/r2.json" 'd["policy_hash"]')" ] || fail "hash not stable"
run --result "$work/r3.json" -- true
[ "$(json "$work/r.json" 'd["policy_hash"]')" != "$(json "$work/r3.json" 'd["policy_hash"]')" ] || fail "hash ignores policy"
# The mechanism actually used is recorded and hashed: a Landlock-only run names no namespace, lists
# each accepted loss, and never shares a full run's hash (the workload there sees host processes).
run --audit "$work/ns.log" --result "$work/ns.json" -- true || fail "namespaces run failed"
if run --mechanism landlock --allow-degraded=pid --audit "$work/ll.log" --result "$work/ll.json" -- \
     sh -c 'ls /proc | grep -c "^[0-9]"' >"$work/ll.pids" 2>"$work/err"; then
  valid_audit "$work/ns.log"; valid_audit "$work/ll.log"; valid_result "$work/ns.json"; valid_result "$work/ll.json"
  [ "$(json "$work/ns.log" 'd["mechanisms"]["mechanism"]')" = namespaces ] || fail "full run not recorded as namespaces"
  [ "$(json "$work/ns.log" '"pid" in d["mechanisms"]["namespaces"] and d["mechanisms"]["degraded"] == []')" = true ] ||
    fail "full run: $(json "$work/ns.log" 'd["mechanisms"]')"
  [ "$(json "$work/ll.log" 'd["mechanisms"]["mechanism"]')" = landlock ] || fail "Landlock-only run recorded as $(json "$work/ll.log" 'd["mechanisms"]')"
  [ "$(json "$work/ll.log" 'd["mechanisms"]["namespaces"]')" = "[]" ] || fail "Landlock-only run claims namespaces"
  [ "$(json "$work/ll.log" 'd["mechanisms"]["degraded"]')" = '["pid"]' ] || fail "accepted loss not recorded"
  [ "$(json "$work/ll.log" 'd["policy"]["enforced"]')" = '{"degraded": ["pid"], "mechanism": "landlock"}' ] ||
    fail "policy.enforced: $(json "$work/ll.log" 'd["policy"]')"
  [ "$(json "$work/ll.json" 'd["mechanism"]')" = landlock ] && [ "$(json "$work/ll.json" 'd["degraded"]')" = '["pid"]' ] ||
    fail "result: $(cat "$work/ll.json")"
  [ "$(json "$work/ns.json" 'd["mechanism"]')" = namespaces ] || fail "result of the full run: $(cat "$work/ns.json")"
  [ "$(cat "$work/ll.pids")" -gt 4 ] || fail "the Landlock-only workload did not see host processes (test premise)"
  [ "$(json "$work/ll.log" 'd["policy_hash"]')" = "$(json "$work/ll.json" 'd["policy_hash"]')" ] || fail "hashes differ"
  [ "$(json "$work/ns.json" 'd["policy_hash"]')" != "$(json "$work/ll.json" 'd["policy_hash"]')" ] ||
    fail "a degraded run has the full run's hash"
  # The same request, enforced by namespaces (auto on this host): another hash than the degraded run.
  run --allow-degraded=pid --result "$work/auto.json" -- true || fail "auto run failed"
  [ "$(json "$work/auto.json" 'd["mechanism"]')" = namespaces ] && [ "$(json "$work/auto.json" 'd["degraded"]')" = "[]" ] ||
    fail "auto run: $(cat "$work/auto.json")"
elif grep -q spawn_sandbox_unavailable "$work/err"; then
  echo "note: the Landlock-only mechanism is unavailable here: $(cat "$work/err")"
else
  fail "Landlock-only run failed: $(cat "$work/err")"
fi
# The log appends: a second run adds its own lines under its own id.
run --audit "$work/a.log" -- true
[ "$(python3 -c 'import json,sys; print(len({json.loads(l)["run_id"] for l in open(sys.argv[1])}))' "$work/a.log")" = 2 ] ||
  fail "second run did not append with a new run id"

# fd:N, and the workload does not inherit it.
run --audit fd:3 -- sh -c 'ls -l /proc/$$/fd/' 3>"$work/fd.log" >"$work/fds" || fail "--audit fd:3 failed"
valid_audit "$work/fd.log"
if grep -q "fd.log" "$work/fds"; then fail "the workload inherited the audit fd"; fi
# A closed fd: a warning and audit.ok=false in the result; --audit-required: refusal, nothing runs.
run --audit fd:9 --result "$work/closed.json" -- true 2>"$work/err" || fail "unwritable audit log stopped a normal run"
grep -q "cage: warning: the audit log cannot be written" "$work/err" || fail "no warning: $(cat "$work/err")"
[ "$(json "$work/closed.json" 'd["audit"]["ok"]')" = false ] || fail "result does not say the audit log failed"
run --audit fd:9 --audit-required -- touch "$work/ran" 2>"$work/err"; rc=$?
[ "$rc" -eq 125 ] && [ ! -e "$work/ran" ] || fail "--audit-required ran without a log (rc $rc)"
grep -q "fd:9" "$work/err" || fail "refusal does not name the destination: $(cat "$work/err")"
# --audit-required: the spawn event is on disk before the workload starts: the workload (granted the
# log read-only) finds it there, and strace shows cage's fsync of the log before the workload's exec.
: >"$work/req.log"
run --audit "$work/req.log" --audit-required --ro "$work/req.log" -- cat "$work/req.log" >"$work/req.seen" 2>"$work/err" ||
  fail "--audit-required run failed: $(cat "$work/err")"
grep -q '"type":"spawn"' "$work/req.seen" || fail "the workload started before the spawn event was written"
if command -v strace >/dev/null; then
  strace -f -qq -e trace=fsync,execve -o "$work/req.trace" "$CAGE" --audit "$work/req2.log" --audit-required -- /bin/true 2>"$work/err" ||
    fail "--audit-required under strace: $(cat "$work/err")"
  # The last execve is the workload's (as a user strace cannot read its arguments in the sandbox).
  awk '/fsync\(/ && !f {f=NR} /execve\(/ {e=NR} END {exit !(f && e > f)}' "$work/req.trace" ||
    fail "no fsync of the audit log before the workload's exec: $(grep -E 'fsync|true' "$work/req.trace" | head -5)"
fi
# A log that breaks during the run (reader gone) under --audit-required kills the sandbox.
if [ -w /dev/full ]; then
  run --audit /dev/full --audit-required --result "$work/full.json" -- sleep 20 2>"$work/err"; rc=$?
  [ "$rc" -eq 125 ] || fail "--audit-required with a full disk: exit $rc"
  [ "$(json "$work/full.json" 'd["class"]')" = sandbox_unavailable ] || fail "full disk not sandbox_unavailable"
  [ "$(json "$work/full.json" 'd["wall_ms"] < 10000')" = true ] || fail "sandbox not killed promptly"
  run --audit /dev/full -- true 2>"$work/err" || fail "a full audit disk stopped a normal run"
  grep -q "audit log incomplete: write: No space left on device" "$work/err" || fail "disk full not reported: $(cat "$work/err")"
fi

# net events: one per proxy decision, allowed and denied, with totals in the result.
if command -v curl >/dev/null; then
  . "$(dirname "$0")/net_lib.bash"
  mkdir "$work/www"; echo hello > "$work/www/f"
  start_loopback_server http "$work/www"; srv=$server_pid
  trap 'kill $srv 2>/dev/null; rm -rf "$work"' EXIT
  port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
  curl -s -o /dev/null "http://127.0.0.1:$port/f" || fail "twin: the test's web server is unreachable from the host"
  run --net "127.0.0.1:$port" --audit "$work/n.log" --result "$work/n.json" -- sh -c \
    "curl -s -x http://127.0.0.1:3128 http://127.0.0.1:$port/f; curl -s -o /dev/null -x http://127.0.0.1:3128 http://127.0.0.1:$(other_port "$port")/" \
    >"$work/out" 2>"$work/err"
  valid_audit "$work/n.log"; valid_result "$work/n.json"
  [ "$(cat "$work/out")" = hello ] || fail "allowed request failed under --audit"
  events "$work/n.log" net | grep -q '"decision":"allowed"' || fail "no allowed net event"
  events "$work/n.log" net | grep -q '"decision":"denied"' || fail "no denied net event"
  [ "$(json "$work/n.json" 'd["network"]["allowed"]')" = 1 ] && [ "$(json "$work/n.json" 'd["network"]["denied"]')" = 1 ] ||
    fail "net totals wrong: $(json "$work/n.json" 'd["network"]')"
  grep -q "cage: net: denied" "$work/err" || fail "denial no longer printed with --audit"
else
  echo "note: curl missing, net events not checked"
fi
echo PASS
