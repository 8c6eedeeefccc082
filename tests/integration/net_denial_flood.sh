#!/usr/bin/env bash
# A workload that loops on a refused connect() (the hand-off, linux/handoff.h) cannot fill the
# disk with --audit or flood the terminal (root and unprivileged): 20000 refusals of one destination
# make a handful of audit lines (the first, then one line per closing window with `repeats`,
# windows doubling from 1 s: common/audit_coalesce.h) whose counts add up exactly to the attempts the
# workload counted itself, as does the result's network.denied. Twins in the same run: 40 distinct
# refused destinations each appear with their own counts, and 20 allowed fetches are 20 lines.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin python3
net_require_handoff
serve_ok_file
closed=$(other_port "$port")
cat > "$d/flood.py" <<'PY'
import socket, sys, time
port, closed = int(sys.argv[1]), int(sys.argv[2])
def attempt(host, p):
    s = socket.socket()
    try:
        s.connect((host, p))
        return True
    except OSError:
        return False
    finally:
        s.close()
# The flood: at most 20000 tries or 60 s (a loaded machine), counted here.
n, end = 0, time.monotonic() + 60
while n < 20000 and time.monotonic() < end:
    attempt("192.0.2.1", closed)
    n += 1
print("flood", n)
# Distinct refusals, each twice; then allowed fetches of the listed server.
for i in range(40):
    attempt("192.0.2.2", 1000 + i); attempt("192.0.2.2", 1000 + i)
ok = 0
for _ in range(20):
    c = socket.create_connection(("127.0.0.1", port), timeout=10)
    c.sendall(b"GET /f HTTP/1.0\r\nHost: x\r\n\r\n")
    ok += b"".join(iter(lambda: c.recv(65536), b"")).endswith(b"\r\n\r\nok\n")
    c.close()
print("fetched", ok)
PY
chmod -R a+rX "$d"; cd "$d" || exit 1
start=$(date +%s)
timeout 120 "$CAGE" --ro "$d" --audit "$d/audit.jsonl" --result "$d/result.json" --unsetenv '*_PROXY' --unsetenv '*_proxy' \
  --net 127.0.0.1:$port -- python3 "$d/flood.py" "$port" "$closed" >"$d/out" 2>"$d/err" ||
  fail "the workload failed: $(cat "$d/out") $(head -c 2000 "$d/err")"
elapsed=$(( $(date +%s) - start ))
tries=$(sed -n 's/^flood //p' "$d/out")
[ -n "$tries" ] && [ "$tries" -ge 1000 ] || fail "the flood made too few tries to judge: $(cat "$d/out")"
grep -qx 'fetched 20' "$d/out" || fail "twin: the listed server was not fetched 20 times: $(cat "$d/out")"
python3 "${CAGE_SOURCE_DIR:-$(dirname "$0")/../..}/tests/integration/limits_schema.py" \
  "${CAGE_SOURCE_DIR:-$(dirname "$0")/../..}/docs/schema/audit-event.schema.json" "$d/audit.jsonl" --lines >/dev/null ||
  fail "the audit log does not match its schema"
python3 - "$d/audit.jsonl" "$d/result.json" "$tries" "$closed" "$port" <<'PY' || fail "audit: $(head -c 3000 "$d/audit.jsonl")"
import collections, json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
result = json.load(open(sys.argv[2]))
tries, closed, port = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
net = [e for e in events if e["type"] == "net"]
def weight(e): return e.get("repeats", 1)
flood = [e for e in net if (e["host"], e["port"]) == ("192.0.2.1", closed)]
assert all(e["decision"] == "denied" and e["protocol"] == "tcp" for e in flood), flood
assert "repeats" not in flood[0], flood[0]  # the first is written as it happens
assert sum(map(weight, flood)) == tries, (sum(map(weight, flood)), tries)
# The first line, then one per window of 1, 2, 4, 8, 16, 32 s: at most 8 for a flood of 60 s, not 20000.
assert len(flood) <= 8, len(flood)
assert not [e for e in events if e["type"] == "suppressed"], "nothing was past the caps"
per = collections.Counter()
for e in net:
    if e["host"] == "192.0.2.2":
        per[e["port"]] += weight(e)
assert per == {1000 + i: 2 for i in range(40)}, per
allowed = [e for e in net if e["decision"] == "allowed"]
assert len(allowed) == 20 and all("repeats" not in e for e in allowed), allowed
assert len(events) < 150, len(events)  # spawn, exit, 20 allowed, 40 distinct twice at most, the flood's
assert events[-1]["type"] == "exit", events[-1]  # the counts held back come before the exit event
assert result["network"]["denied"] == tries + 80, (result["network"], tries)
assert result["network"]["allowed"] == 20, result["network"]
PY
# stderr: the flood's destination once per 10 s, and at the end how many lines were held back.
line="cage: net: denied (tcp) 192.0.2.1:$closed is not in the --net allowlist (add --net 192.0.2.1:$closed)"
n=$(grep -cF -- "$line" "$d/err")
[ "$n" -ge 1 ] && [ "$n" -le $(( elapsed / 10 + 1 )) ] || fail "want the flood's line 1 to $(( elapsed / 10 + 1 )) times, got $n"
[ "$(wc -l < "$d/err")" -lt 100 ] || fail "stderr has $(wc -l < "$d/err") lines: $(head -c 2000 "$d/err")"
grep -qE '^cage: net: [0-9]+ more lines held back; each is counted in --result, and in --audit$' "$d/err" ||
  fail "the lines held back at the end are not said: $(tail -5 "$d/err")"
echo "ok: $tries tries, $(wc -l < "$d/audit.jsonl") audit lines, $(wc -l < "$d/err") stderr lines"
