#!/usr/bin/env bash
# Transparent egress (--net-mode both/transparent) against a service on the host's loopback; runs as
# root and as an unprivileged user. Programs that ignore *_PROXY (raw sockets, a client that resolves
# and connects itself, like the JVM) reach exactly the listed destinations; an unlisted port fails
# at once (Landlock), an unlisted name gets NXDOMAIN (reported as a dns denial), an unlisted address
# on a listed port is reset; the proxy keeps working alongside.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl python3
mkdir "$d/www"; head -c 3000000 /dev/urandom > "$d/www/big"; echo hello > "$d/www/f"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port")
curl -s -o /dev/null "http://127.0.0.1:$port/f" || fail "twin: the test's web server is unreachable from the host"
chmod -R a+rX "$d"; cd "$d" || exit 1
noproxy=(--unsetenv '*_PROXY' --unsetenv '*_proxy' --unsetenv JAVA_TOOL_OPTIONS)
run() { timeout 60 "$CAGE" --ro "$d" "$@"; }
# A client that resolves and connects by itself, then speaks HTTP/1.0 (what a JVM or Node socket does).
cat > "$d/get.py" <<'PY'
import socket, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    addrs = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
except socket.gaierror as e:
    print("gaierror", e.errno); sys.exit(3)
s = socket.create_connection((addrs[0][4][0], port), timeout=5)
s.sendall(("GET %s HTTP/1.0\r\nHost: x\r\n\r\n" % path).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b: break
    data += b
sys.stdout.buffer.write(data.split(b"\r\n\r\n", 1)[1])
PY

out=$(run --net "127.0.0.1:$port" "${noproxy[@]}" -- sh -c 'env | grep -ci _proxy; :') || fail "env check"
[ "$out" = 0 ] || fail "proxy variables were not removed ($out)"
out=$(run --net "127.0.0.1:$port" "${noproxy[@]}" -- python3 "$d/get.py" 127.0.0.1 "$port" /f) ||
  fail "raw TCP to an allowed address failed"
[ "$out" = hello ] || fail "raw TCP returned '$out'"
out=$(run --net "localhost:$port" "${noproxy[@]}" -- python3 "$d/get.py" localhost "$port" /f) ||
  fail "raw TCP to an allowed localhost failed"
[ "$out" = hello ] || fail "localhost returned '$out'"
sum=$(run --net "127.0.0.1:$port" "${noproxy[@]}" -- sh -c "python3 '$d/get.py' 127.0.0.1 $port /big | sha256sum") ||
  fail "large transparent transfer failed"
[ "${sum%% *}" = "$(sha256sum < "$d/www/big" | cut -d' ' -f1)" ] || fail "large transparent transfer corrupted"
# An unlisted port: Landlock refuses the connect at once.
if run --net "127.0.0.1:$port" "${noproxy[@]}" -- python3 "$d/get.py" 127.0.0.1 "$closed" /f 2>"$d/err"; then
  fail "unlisted port reached"
fi
# Refused by the kernel (EACCES or ECONNREFUSED), not a timeout: judged by the error, not a clock.
grep -Eq "PermissionError|ConnectionRefusedError" "$d/err" || fail "unlisted port not refused at connect: $(tail -n 2 "$d/err")"
grep -qi "permission denied\|refused" "$d/err" || fail "unlisted port: unexpected error: $(cat "$d/err")"
# A listed port on an unlisted address: accepted by cage's listener, checked, reset.
if run --net "127.0.0.1:$port" --net "localhost:$closed" "${noproxy[@]}" -- python3 "$d/get.py" 127.0.0.5 "$port" /f 2>"$d/err"; then
  fail "unlisted address on a listed port reached"
fi
grep -q "cage: net: denied (tcp) 127.0.0.5:$port is not in the --net allowlist" "$d/err" || fail "tcp denial not reported: $(cat "$d/err")"
# An unlisted name: NXDOMAIN inside, a dns denial on stderr.
out=$(run --net "127.0.0.1:$port" "${noproxy[@]}" -- python3 "$d/get.py" evil.cage-test.invalid "$port" /f 2>"$d/err")
[ "$out" = "gaierror -2" ] || fail "unlisted name did not get NXDOMAIN ('$out')"
grep -q "cage: net: denied (dns) evil.cage-test.invalid is not in the --net allowlist" "$d/err" || fail "dns denial not reported: $(cat "$d/err")"
# An allowed name resolves to a synthetic address and the connect carries its name: the host's
# own name (resolved by the supervisor from the host's /etc/hosts) when it is a loopback address.
me=$(hostname)
if getent hosts "$me" | grep -q '^127\.'; then
  out=$(run --net "$me:$port" "${noproxy[@]}" -- python3 -c "import socket;print(socket.gethostbyname('$me'))") || fail "allowed name did not resolve"
  case "$out" in 198.1[89].*) ;; *) fail "allowed name resolved to '$out', not a synthetic address" ;; esac
  out=$(run --net "$me:$port" "${noproxy[@]}" -- python3 "$d/get.py" "$me" "$port" /f) || fail "allowed name: connect failed"
  [ "$out" = hello ] || fail "allowed name returned '$out'"
else
  echo "note: $(hostname) does not resolve to loopback here; synthetic-name connect covered by unit tests"
fi
# Both paths at once: the proxy still serves proxy-aware clients.
out=$(run --net "127.0.0.1:$port" -- curl -sS "http://127.0.0.1:$port/f") || fail "proxy path failed in mode both"
[ "$out" = hello ] || fail "proxy path returned '$out'"
# --net-mode transparent: no proxy port; --net-mode proxy: no transparent path (fails fast).
out=$(run --net "127.0.0.1:$port" --net-mode transparent -- python3 "$d/get.py" 127.0.0.1 "$port" /f) || fail "transparent-only failed"
[ "$out" = hello ] || fail "transparent-only returned '$out'"
if run --net "127.0.0.1:$port" --net-mode transparent -- curl -sS -m 5 -x http://127.0.0.1:3128 "http://127.0.0.1:$port/f" 2>/dev/null; then
  fail "transparent-only mode still had a proxy port"
fi
if run --net "127.0.0.1:$port" --net-mode proxy "${noproxy[@]}" -- python3 "$d/get.py" 127.0.0.1 "$port" /f 2>/dev/null; then
  fail "proxy-only mode carried a direct connect"
fi
# --dry-run shows the plan.
run --dry-run --verbose --net "localhost:$port" -- true | grep -q "localhost -> 198.18.0.1" || fail "dry-run lacks the synthetic mapping"
echo ok
