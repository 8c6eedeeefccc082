#!/usr/bin/env bash
# --net against a test host in a network namespace this test creates (root only: veth, 10.77.x.y):
# HTTP, HTTPS (CONNECT, TLS not terminated), raw TCP echo, wildcard names, CIDR rules, a large
# transfer intact, a refusing upstream (502) and a stalled one (504, bounded).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root to create the test host's netns"; exit 77; }
for t in ip socat openssl curl python3; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
CAGE=${CAGE:?}
ns=cagetest$$; vh=cvh$$; vn=cvn$$; d=$(mktemp -d)
filler=""
cleanup() {
  [ -n "$filler" ] && kill "$filler" 2>/dev/null
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
  ip link del "$vh" 2>/dev/null; ip netns del "$ns" 2>/dev/null; rm -rf "$d"
}
trap cleanup EXIT
net=$((RANDOM % 200 + 20))
hip=10.77.$net.1; tip=10.77.$net.2
ip netns add "$ns" && ip link add "$vh" type veth peer name "$vn" && ip link set "$vn" netns "$ns" || fail "netns setup"
ip addr add $hip/24 dev "$vh"; ip link set "$vh" up
ip -n "$ns" addr add $tip/24 dev "$vn"; ip -n "$ns" link set "$vn" up; ip -n "$ns" link set lo up
mkdir "$d/www"; head -c 20000000 /dev/urandom > "$d/www/big"; echo hello > "$d/www/f"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" -days 1 \
  -subj "/CN=$tip" -addext "subjectAltName=IP:$tip" >/dev/null 2>&1 || fail "cert"
inns() { ip netns exec "$ns" "$@"; }
(cd "$d/www" && exec ip netns exec "$ns" python3 -m http.server 8080 --bind $tip >/dev/null 2>&1) &
# socat -t 30: after one side's EOF socat waits this long (default 0.5 s) for the other side's
# data; cat, started per connection, exits at EOF, so the wait ends at once unless the host is slow
# (Debian's 6.1 under emulation did not start cat within 0.5 s and the echo came back empty).
inns socat -t 30 TCP-LISTEN:7000,bind=$tip,fork,reuseaddr EXEC:cat >/dev/null 2>&1 &
inns openssl s_server -quiet -accept 8443 -cert "$d/cert.pem" -key "$d/key.pem" -www >/dev/null 2>&1 &
# A stalled upstream: a listener that never accepts, its backlog filled so SYNs are dropped.
inns python3 -c "import socket,time;s=socket.socket();s.bind(('$tip',9000));s.listen(0);time.sleep(600)" &
for _ in $(seq 100); do inns ss -ltnH "sport = :9000" | grep -q . && break; sleep 0.1; done
# Fill it: connect until a connect times out (the queue is full and SYNs are dropped), then hold
# the connections for the rest of the test; the test waits for the filler's word, not a clock.
python3 - "$tip" >"$d/filled" <<'PY' &
import socket, sys, time
held = []
while len(held) < 16:
    c = socket.socket(); c.settimeout(2)
    try:
        c.connect((sys.argv[1], 9000)); held.append(c)
    except OSError:
        break
print("full" if len(held) < 16 else "never full", flush=True)
time.sleep(600)
PY
filler=$!
for _ in $(seq 150); do [ -s "$d/filled" ] && break; sleep 0.1; done
[ "$(cat "$d/filled")" = full ] || fail "could not fill the stalled listener's queue"
for _ in $(seq 50); do curl -s -o /dev/null "http://$tip:8080/f" && break; sleep 0.1; done
chmod -R a+rX "$d"
P=http://127.0.0.1:3128
run() { timeout 60 "$CAGE" --ro "$d" "$@"; }

[ "$(run --net $tip:8080 -- curl -sS -x $P http://$tip:8080/f)" = hello ] || fail "plain HTTP to the test host"
run --net $tip:8443 -- curl -sS -x $P --cacert "$d/cert.pem" https://$tip:8443/ | grep -q . || fail "HTTPS via CONNECT"
code=$(run --net $tip:8443 -- curl -s -x $P -o /dev/null -w '%{http_code}' http://$tip:8080/f)
[ "$code" = 403 ] || fail "other port of an allowed host not refused ($code)"
code=$(run --net 10.77.0.0/16:8080 -- curl -s -x $P -o /dev/null -w '%{http_code}' http://$tip:8080/f)
[ "$code" = 200 ] || fail "CIDR rule did not allow ($code)"
code=$(run --net 10.78.0.0/16:8080 -- curl -s -x $P -o /dev/null -w '%{http_code}' http://$tip:8080/f)
[ "$code" = 403 ] || fail "CIDR rule allowed an outside address ($code)"
# Raw TCP echo through CONNECT (socat speaks PROXY CONNECT).
out=$(run --net $tip:7000 -- sh -c "echo ping | socat -t 30 - PROXY:127.0.0.1:$tip:7000,proxyport=3128") || fail "echo"
[ "$out" = ping ] || fail "echo returned '$out'"
# A wildcard rule: a matching name goes on to resolution (here it cannot resolve: 502, naming
# the name), a non-matching one is refused (403). Rebinding into private addresses: unit tests.
code=$(run --net '*.cage-test.invalid:8080' -- curl -s -x $P -o /dev/null -w '%{http_code}' http://x.cage-test.invalid:8080/f)
[ "$code" = 502 ] || fail "wildcard match did not reach resolution ($code)"
code=$(run --net '*.cage-test.invalid:8080' -- curl -s -x $P -o /dev/null -w '%{http_code}' http://a.b.cage-test.invalid:8080/f)
[ "$code" = 403 ] || fail "one-label wildcard matched two labels ($code)"
sum=$(run --net $tip:8080 -- sh -c "curl -sS -p -x $P http://$tip:8080/big | sha256sum")
[ "${sum%% *}" = "$(sha256sum < "$d/www/big" | cut -d' ' -f1)" ] || fail "large transfer corrupted"
# Client disconnecting mid-stream leaves the supervisor serving.
run --net $tip:8080 -- sh -c "curl -s -x $P --max-filesize 1000 http://$tip:8080/big >/dev/null;
  curl -sS -x $P http://$tip:8080/f" | grep -q hello || fail "supervisor did not survive a client abort"
code=$(run --net $tip:8081 -- curl -s -x $P -o /dev/null -w '%{http_code}' http://$tip:8081/)
[ "$code" = 502 ] || fail "refusing upstream not 502 ($code)"
start=$(date +%s)
code=$(run --net $tip:9000 -- curl -s -x $P -o /dev/null -w '%{http_code}' http://$tip:9000/)
el=$(( $(date +%s) - start ))
[ "$code" = 504 ] && [ $el -le 20 ] || fail "stalled upstream: $code after ${el}s (want 504 within the 10s timeout)"
if run --net $tip:8080 --net-mode proxy -- curl -sS --noproxy '*' --max-time 5 http://$tip:8080/f 2>/dev/null; then
  fail "direct connection to the test host bypassed the proxy"
fi
echo ok
