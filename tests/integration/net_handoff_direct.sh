#!/usr/bin/env bash
# Egress hand-off's direct path (proxy/server_direct.cc), root and unprivileged: a connect to an
# IPv4 literal is dialled on the seccomp mediator's own thread, non-blocking, and its notification
# answered once the dial ends, so a dial that cannot complete holds up no other call of the sandbox.
# A listener on the host's loopback whose accept queue is full (listen(0), one connection queued)
# drops further SYNs: a workload thread's connect to it waits; meanwhile another thread fetches a
# file from an allowed server at once. The stalled connect fails with ETIMEDOUT at the proxy's
# connect timeout (10 s), as the proxy's own dial would, and the audit log records both: the fetch
# as handed off, the stall as failed (504, "timed out after 10s"). The host's own connect to the
# full listener also times out (the stall is real, not cage's).
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin python3
net_require_handoff
serve_ok_file
python3 - "$d/full" >/dev/null 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
queued = socket.create_connection(s.getsockname())  # the one the queue holds: it is full now
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(s.getsockname()[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
PY
pids+=($!)
for _ in $(seq 200); do [ -s "$d/full" ] && break; sleep 0.05; done
full=$(cat "$d/full" 2>/dev/null); [ -n "$full" ] || fail "the full listener did not start"
python3 -c '
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1.5); print("connected")
except socket.timeout: print("timeout")
except OSError as e: print(e)' "$full" | grep -qx timeout ||
  { echo "skip: this kernel does not leave a connect to a full accept queue waiting"; exit 77; }
cat > "$d/two.py" <<'PY'
import errno, socket, sys, threading, time
full, port = int(sys.argv[1]), int(sys.argv[2])
res = {}
def stalled():
    t = time.time()
    try:
        socket.socket().connect(("127.0.0.1", full)); res["a"] = "connected"
    except OSError as e:
        res["a"] = errno.errorcode.get(e.errno, str(e))
    res["t"] = time.time() - t
th = threading.Thread(target=stalled); th.start()
time.sleep(0.5)
t = time.time()
c = socket.create_connection(("127.0.0.1", port), timeout=30)
c.sendall(b"GET /f HTTP/1.0\r\nHost: x\r\n\r\n")
data = b"".join(iter(lambda: c.recv(65536), b""))
print("other %.2f %s %s" % (time.time() - t, data.endswith(b"\r\n\r\nok\n"), th.is_alive()))
th.join()
print("stalled %s %.1f" % (res["a"], res["t"]))
PY
chmod -R a+rX "$d"; cd "$d" || exit 1
out=$(timeout 60 "$CAGE" --ro "$d" --audit "$d/audit.jsonl" --unsetenv '*_PROXY' --unsetenv '*_proxy' \
  --net 127.0.0.1:$port --net 127.0.0.1:$full -- python3 "$d/two.py" "$full" "$port" 2>&1) ||
  fail "the workload failed: $out"
read -r _ secs body alive < <(grep '^other ' <<<"$out")
[ "$body" = True ] || fail "the allowed fetch got the wrong bytes: $out"
[ "$alive" = True ] || fail "the stalled connect had ended before the fetch (no stall to hold it up): $out"
awk -v s="$secs" 'BEGIN { exit !(s < 3) }' || fail "the allowed fetch waited ${secs}s behind the stalled dial: $out"
read -r _ what took < <(grep '^stalled ' <<<"$out")
[ "$what" = ETIMEDOUT ] || fail "the stalled connect ended with $what, want ETIMEDOUT: $out"
awk -v s="$took" 'BEGIN { exit !(s >= 9 && s < 20) }' || fail "the stalled connect ended after ${took}s, want ~10: $out"
python3 - "$d/audit.jsonl" "$port" "$full" <<'PY' || fail "audit: $(cat "$d/audit.jsonl")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
port, full = int(sys.argv[2]), int(sys.argv[3])
ok = [e for e in events if e.get("port") == port and "handed off" in e.get("reason", "")]
assert ok and ok[0].get("decision") == "allowed", ok
bad = [e for e in events if e.get("port") == full]
assert bad and bad[0].get("decision") == "failed" and "timed out after 10s" in bad[0].get("reason", ""), bad
PY
echo "ok: $(tr "\n" " " <<<"$out")"
