#!/usr/bin/env bash
# The workload's own loopback under --net (runs as root and as an unprivileged user): a server the
# workload starts on 127.0.0.1 inside the sandbox (a test suite's, a dev server, a local database)
# accepts the workload's own clients with --net in every mode, as without --net; the network
# namespace and cage's proxy stay the boundary: the host's server on the same port number is not
# what answers, and only listed hosts are reached through the proxy. (Until Landlock's TCP rules
# were dropped under namespaces, every bind and connect here failed with EACCES.)
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl /usr/bin/python3
py=/usr/bin/python3
chmod 755 "$d"
mkdir "$d/www" "$d/inside"; echo host > "$d/www/f"; echo inside > "$d/inside/f"
chmod -R a+rX "$d"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port")
run() { timeout 60 "$CAGE" --ro "$d" "$@"; }

# Inside: a server on 127.0.0.1:PORT (0: the kernel picks), listening before the client starts (no
# sleep: the client runs only once the socket listens), and curl as its client, past any proxy.
cat > "$d/serve_and_fetch.py" <<'PY'
import functools, http.server, subprocess, sys, threading
root, port = sys.argv[1], int(sys.argv[2])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Quiet, directory=root))
threading.Thread(target=srv.serve_forever, daemon=True).start()
for host in ("127.0.0.1", "localhost"):
    r = subprocess.run(["curl", "-sS", "--noproxy", "*", "--max-time", "10",
                        "http://%s:%d/f" % (host, srv.server_port)], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(r.returncode)
PY

own() {  # own LABEL PORT FLAGS...: the sandbox's server answers its own client
  local label=$1 p=$2 out; shift 2
  out=$(run "$@" -- "$py" "$d/serve_and_fetch.py" "$d/inside" "$p" 2>"$d/err") ||
    fail "$label: the workload's own loopback server or client failed: $(cat "$d/err")"
  [ "$out" = "$(printf 'inside\ninside')" ] || fail "$label: the own server answered '$out'"
}
own "without --net" 0
own "--net (default mode)" 0 --net "127.0.0.1:$port"
own "--net --net-mode proxy" 0 --net "127.0.0.1:$port" --net-mode proxy
own "--net --net-mode transparent" 0 --net "127.0.0.1:$port" --net-mode transparent
# The host's server port number, bound again inside: the sandbox's loopback is its own.
own "--net-mode proxy, the host server's port" "$port" --net "127.0.0.1:$closed" --net-mode proxy
own "a fixed port (a dev server's 8000)" 8000 --net "127.0.0.1:$port"

# The boundary holds: the listed host is reached only through the proxy, an unlisted port is
# refused (403), and a direct connection to the host's server does not leave the namespace.
out=$(run --net "127.0.0.1:$port" --net-mode proxy -- curl -sS -x http://127.0.0.1:3128 "http://127.0.0.1:$port/f") ||
  fail "twin: the listed host through the proxy failed"
[ "$out" = host ] || fail "the listed host through the proxy returned '$out'"
code=$(run --net "127.0.0.1:$port" --net-mode proxy -- curl -s -x http://127.0.0.1:3128 -o /dev/null -w '%{http_code}' \
  "http://127.0.0.1:$closed/f")
[ "$code" = 403 ] || fail "an unlisted port was not refused by the proxy (got $code)"
if run --net "127.0.0.1:$closed" --net-mode proxy -- curl -sS --noproxy '*' --max-time 5 "http://127.0.0.1:$port/f" \
  >"$d/out" 2>/dev/null; then
  fail "a direct connection reached the host's server: $(cat "$d/out")"
fi
echo ok
