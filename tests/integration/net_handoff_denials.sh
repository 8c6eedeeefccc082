#!/usr/bin/env bash
# Hand-off (linux/handoff.h), root and unprivileged: every connect() the --net allowlist refuses is
# said on stderr and in the audit log as a denied tcp event, with the proxy's own wording, and fails
# with ECONNREFUSED: a listed address on a port no rule names, a listed name's synthetic address on
# such a port, an unlisted literal on a carried port and on another, one in 0.0.0.0/8 (not 0.0.0.0),
# an IPv4-mapped IPv6 address; and an IPv6 address, which fails with ENETUNREACH (no IPv6 route: a
# client falls back to IPv4). Before, the sandbox's kernel refused all of them in silence (nothing
# listens there: ECONNREFUSED; no route: ENETUNREACH). Each
# is tried twice and said once (the proxy's rate limit); the audit log has both. Twins: the listed
# loopback server is fetched and not reported; a connect to an unlisted port of 127.0.0.1, or of ::1,
# is the sandbox's own loopback (refused by its kernel, no denial). The TEST-NET addresses are never dialled.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin python3
net_require_handoff
serve_ok_file
closed=$(other_port "$port")
cat > "$d/try.py" <<'PY'
import errno, socket, sys
port, closed = int(sys.argv[1]), int(sys.argv[2])
syn = socket.gethostbyname("listed.test")
c = socket.create_connection(("127.0.0.1", port), timeout=10)
c.sendall(b"GET /f HTTP/1.0\r\nHost: x\r\n\r\n")
print("fetch", b"".join(iter(lambda: c.recv(65536), b"")).endswith(b"\r\n\r\nok\n"))
for what, host, p in [("port", "192.0.2.1", closed), ("name", syn, closed), ("carried", "192.0.2.77", port),
                      ("literal", "203.0.113.5", closed), ("own", "127.0.0.1", closed),
                      ("zero", "0.1.2.3", port), ("mapped", "::ffff:198.51.100.9", closed),
                      ("v6", "2001:db8::7", port), ("own6", "::1", closed)]:
    for _ in range(2):
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        s.settimeout(10)
        try:
            s.connect((host, p)); r = "connected"
        except OSError as e:
            r = errno.errorcode.get(e.errno, str(e))
        s.close()
    print(what, r)
PY
chmod -R a+rX "$d"; cd "$d" || exit 1
timeout 60 "$CAGE" --ro "$d" --audit "$d/audit.jsonl" --unsetenv '*_PROXY' --unsetenv '*_proxy' \
  --net 127.0.0.1:$port --net 192.0.2.1:$port --net listed.test:$port -- python3 "$d/try.py" "$port" "$closed" \
  >"$d/out" 2>"$d/err" || fail "the workload failed: $(cat "$d/out" "$d/err")"
grep -qx 'fetch True' "$d/out" || fail "twin: the listed server was not fetched: $(cat "$d/out" "$d/err")"
for w in port name carried literal own zero mapped own6; do
  grep -qx "$w ECONNREFUSED" "$d/out" || fail "$w: want ECONNREFUSED: $(cat "$d/out")"
done
grep -qx "v6 ENETUNREACH" "$d/out" || fail "v6: want ENETUNREACH: $(cat "$d/out")"
for hp in 192.0.2.1:$closed listed.test:$closed 192.0.2.77:$port 203.0.113.5:$closed 0.1.2.3:$port \
  198.51.100.9:$closed "[2001:db8::7]:$port"; do
  line="cage: net: denied (tcp) $hp is not in the --net allowlist (add --net $hp)"
  n=$(grep -cF -- "$line" "$d/err")
  [ "$n" -eq 1 ] || fail "want once (two tries, rate-limited), got $n: '$line'; stderr: $(cat "$d/err")"
done
grep -qF -e "127.0.0.1:$port" -e "127.0.0.1:$closed" -e "[::1]" "$d/err" && fail "the allowed fetch or the own loopback was reported: $(cat "$d/err")"
python3 - "$d/audit.jsonl" "$port" "$closed" <<'PY' || fail "audit: $(cat "$d/audit.jsonl")"
import json, sys
port, closed = int(sys.argv[2]), int(sys.argv[3])
net = [json.loads(l) for l in open(sys.argv[1]) if '"type":"net"' in l]
# A second identical refusal within a second is a line with `repeats` (common/audit_coalesce.h).
denied = sorted((e["host"], e["port"]) for e in net if e["decision"] == "denied" and e["protocol"] == "tcp"
                for _ in range(e.get("repeats", 1)))
want = sorted([("192.0.2.1", closed), ("listed.test", closed), ("192.0.2.77", port), ("203.0.113.5", closed),
               ("0.1.2.3", port), ("198.51.100.9", closed), ("2001:db8::7", port)] * 2)
assert denied == want, denied
assert all(e.get("status") == 403 and "is not in the --net allowlist" in e["reason"] for e in net if e["decision"] == "denied")
assert [e["decision"] for e in net if e["port"] == port and e["host"] == "127.0.0.1"] == ["allowed"], net
PY
echo "ok: $(tr "\n" " " <"$d/out")"
