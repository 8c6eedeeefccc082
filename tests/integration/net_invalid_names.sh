#!/usr/bin/env bash
# Names from the workload that are not UTF-8 and carry terminal escapes (bytes 0xff and ESC [31m):
# an HTTP CONNECT, a SOCKS5 request and a DNS query through cage's --net mediation. Every audit line
# must parse as JSON (invalid bytes become U+FFFD), and cage's stderr must carry no raw ESC or 0xff
# (the denials show them as \x1b, \xff). The DNS query is answered NXDOMAIN and not reported: no
# --net rule can name it (issue 19 item 5 reports only what a user could grant). Twin: a plain ASCII
# name is denied and reported as typed.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
CAGE=${CAGE:?}
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
d=$(mktemp -d); chmod 755 "$d"; trap 'rm -rf "$d"' EXIT
cat >"$d/client.py" <<'PY'
import os, socket, struct, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
bad = b"\xffevil\x1b[31m"
def conn():
    return socket.create_connection((proxy.hostname, proxy.port), timeout=10)
for host in (b"plain-twin.invalid", bad + b".example"):
    s = conn()
    s.sendall(b"CONNECT " + host + b":443 HTTP/1.1\r\nHost: " + host + b":443\r\n\r\n")
    print("connect", s.recv(200).split(b"\r\n")[0].decode("ascii", "replace"))
    s.close()
s = conn()
s.sendall(b"\x05\x01\x00")
s.recv(2)
name = bad + b".socks.example"
s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack(">H", 443))
print("socks5 reply", s.recv(10)[:2].hex())
s.close()
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")]
if ns:
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in (bad, b"dns", b"example"):
        q += bytes([len(label)]) + label
    q += b"\x00" + struct.pack(">HH", 1, 1)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(10)
    u.sendto(q, (ns[0], 53))
    print("dns rcode", u.recv(512)[3] & 15)
else:
    raise SystemExit("no nameserver in the sandbox's /etc/resolv.conf")
PY
timeout 60 "$CAGE" --net 127.0.0.1:9 --ro "$d" --audit "$d/a.log" -- python3 "$d/client.py" >"$d/out" 2>"$d/err" ||
  fail "the client failed: $(cat "$d/out" "$d/err")"
grep -q "^connect HTTP/1.1 4" "$d/out" || fail "CONNECT not refused: $(cat "$d/out")"
grep -q "^socks5 reply 0502" "$d/out" || fail "SOCKS5 not refused: $(cat "$d/out")"
python3 - "$d/a.log" <<'PY' || fail "the audit log is not JSON lines: $(cat -v "$d/a.log")"
import json, sys
hosts = []
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    line.decode("utf-8")                      # strict: every line is UTF-8
    ev = json.loads(line)                     # and JSON
    assert "\x1b" not in line.decode(), f"line {n}: raw ESC"
    if ev["type"] == "net":
        hosts.append(ev["host"] + " " + ev.get("reason", ""))
want = ["plain-twin.invalid", "\ufffdevil\x1b[31m.example:443", "\ufffdevil\x1b[31m.socks.example"]
for w in want:
    assert any(w in h for h in hosts), f"{w!r} not among {hosts!r}"
assert not any(".dns.example" in h for h in hosts), f"an ungrantable DNS name was reported: {hosts!r}"
PY
python3 "$(dirname "$0")/limits_schema.py" "${CAGE_SOURCE_DIR:-$(dirname "$0")/../..}/docs/schema/audit-event.schema.json" \
  "$d/a.log" --lines || fail "the audit log does not match its schema"
grep -q "plain-twin.invalid:443" "$d/err" || fail "twin: the ASCII denial is not reported: $(cat "$d/err")"
if LC_ALL=C grep -q $'\x1b\|\xff' "$d/err"; then fail "raw ESC or 0xff reached stderr: $(cat -v "$d/err")"; fi
grep -qF '\xffevil\x1b[31m.example:443' "$d/err" || fail "the CONNECT denial is not shown escaped: $(cat -v "$d/err")"
grep -qF '\xffevil\x1b[31m.socks.example' "$d/err" || fail "the SOCKS5 denial is not shown escaped: $(cat -v "$d/err")"
grep -q "^dns rcode 3$" "$d/out" || fail "the invalid DNS name was not answered NXDOMAIN: $(cat "$d/out")"
if grep -qF 'dns.example' "$d/err"; then fail "an ungrantable DNS name was reported: $(cat -v "$d/err")"; fi
echo PASS
