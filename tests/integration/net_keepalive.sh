#!/usr/bin/env bash
# Keep-alive through the --net HTTP proxy (runs as root and as an unprivileged user; issue 19 item 3).
# The upstream here ignores "Connection: close" and keeps every connection open until its own idle
# timeout (30 s), as many real servers do: the proxy must end each response where its framing
# (Content-Length, chunked, HEAD/204/304) says, never at the server's close, and then serve the next
# request on the same client connection, each checked against the allowlist by its own host.
# The proof is an order of events, not a time bound: every response arrived, on one connection,
# while the server still held all its connections open (it logs when its idle timeout closes one).
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl /usr/bin/python3
py=/usr/bin/python3
chmod 755 "$d"

cat > "$d/server.py" <<'PY'
import os, socket, sys, threading
portfile, log = sys.argv[1], open(sys.argv[2], "a", buffering=1)
IDLE = 30
def answer(method, path):
    if path == "/chunked":
        return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n"
    if path == "/nobody":
        return b"HTTP/1.1 204 No Content\r\n\r\n"
    if path == "/cached":
        return b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"
    body = b"" if method == "HEAD" else b"hello"
    return b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n" + body
def serve(c):
    c.settimeout(IDLE)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                data = c.recv(65536)
                if not data:
                    log.write("client-close\n")
                    return
                buf += data
            head, buf = buf.split(b"\r\n\r\n", 1)
            method, path = head.split(b"\r\n")[0].decode().split(" ")[:2]
            log.write("request %s %s\n" % (method, path))
            c.sendall(answer(method, path))  # whatever "Connection: close" said: still open
    except socket.timeout:
        log.write("idle-close\n")
    finally:
        c.close()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.replace(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY

# The client: one http.client connection to the proxy named by http_proxy (with its credentials
# where the proxy needs them), several requests on it; it fails if the proxy ends the connection.
cat > "$d/client.py" <<'PY'
import base64, http.client, os, sys, urllib.parse
base, unlisted = sys.argv[1], sys.argv[2]
p = urllib.parse.urlsplit(os.environ["http_proxy"])
hdrs = {}
if p.username:
    cred = "%s:%s" % (urllib.parse.unquote(p.username), urllib.parse.unquote(p.password or ""))
    hdrs["Proxy-Authorization"] = "Basic " + base64.b64encode(cred.encode()).decode()
conn = http.client.HTTPConnection(p.hostname, p.port, timeout=60)
local = None
for method, path in [("GET", "/len"), ("GET", "/chunked"), ("HEAD", "/len"), ("GET", "/nobody"),
                     ("GET", "/cached"), ("GET", "/len")]:
    conn.request(method, base + path, headers=hdrs)
    r = conn.getresponse()
    print(method, path, r.status, r.read().decode())
    if conn.sock is None:
        sys.exit("the proxy closed the client connection after %s %s" % (method, path))
    local = local or conn.sock.getsockname()
    if conn.sock.getsockname() != local:
        sys.exit("a new client connection was opened")
# The same connection, a host that is not listed: refused by its own authority.
conn.request("GET", unlisted, headers=hdrs)
r = conn.getresponse()
print("unlisted", r.status)
PY
chmod -R a+rX "$d"

python3 "$d/server.py" "$d/port" "$d/log" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 200); do [ -s "$d/port" ] && break; sleep 0.05; done
port=$(cat "$d/port" 2>/dev/null); [ -n "$port" ] || fail "the test's server did not start"
closed=$((port < 65535 ? port + 1 : port - 1))
run() { timeout 25 "$CAGE" --ro "$d" --net "127.0.0.1:$port" "$@"; }

# Twin: the server really keeps a connection open after "Connection: close" (it answers a second
# request on it), so the proxy, not the server, has to end each exchange.
python3 - "$port" <<'PY' || fail "twin: the test's server closed after a response"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
data = b""
for _ in range(2):
    s.sendall(b"GET /len HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while not data.endswith(b"hello"):
        more = s.recv(4096)
        if not more:
            sys.exit(1)
        data += more
    data = b""
PY

for mode in proxy both; do
  out=$(run --net-mode "$mode" -- "$py" -u "$d/client.py" "http://127.0.0.1:$port" "http://127.0.0.1:$closed/" \
    2>"$d/err") || fail "$mode: keep-alive requests did not all complete: $out $(cat "$d/err")"
  grep -q idle-close "$d/log" && fail "$mode: a response waited for the server's idle close"
  expected="GET /len 200 hello
GET /chunked 200 hello
HEAD /len 200 
GET /nobody 204 
GET /cached 304 
GET /len 200 hello
unlisted 403"
  [ "$out" = "$expected" ] || fail "$mode: unexpected answers: $out"
  grep -q "denied.*127.0.0.1:$closed is not in the --net allowlist" "$d/err" ||
    fail "$mode: the refusal on the kept-alive connection was not reported: $(cat "$d/err")"
done

# curl with two URLs on one command line reuses its connection to the proxy (num_connects 0).
out=$(run -- curl -sS -w ' %{num_connects}\n' "http://127.0.0.1:$port/len" "http://127.0.0.1:$port/chunked" \
  2>"$d/err") || fail "curl: two requests on one connection failed: $(cat "$d/err")"
[ "$out" = "hello 1
hello 0" ] || fail "curl: the second request did not reuse the connection: $out"
grep -q idle-close "$d/log" && fail "curl: a response waited for the server's idle close"
echo ok
