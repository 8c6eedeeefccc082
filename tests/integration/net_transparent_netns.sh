#!/usr/bin/env bash
# Transparent egress to a test host in a network namespace this test creates (root only: veth,
# 10.77.x.y), with the proxy variables removed: raw TCP echo and HTTP to a listed address, a CIDR
# rule, a large transfer intact; an unlisted address on a listed port is reset, an address outside
# every rule has no route, an unlisted port is refused in the namespace (the listed address is local
# there and nothing listens on that port; Landlock's TCP rules are not used). All of it fails fast.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root to create the test host's netns"; exit 77; }
for t in ip socat python3; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
CAGE=${CAGE:?}
ns=cagetp$$; vh=cth$$; vn=ctn$$; d=$(mktemp -d)
cleanup() {
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
(cd "$d/www" && exec ip netns exec "$ns" python3 -m http.server 8080 --bind $tip >/dev/null 2>&1) &
# socat -t 30: after one side's EOF socat waits this long (default 0.5 s) for the other side's
# data; cat, started per connection, exits at EOF, so the wait ends at once unless the host is slow
# (Debian's 6.1 under emulation did not start cat within 0.5 s and the echo came back empty).
ip netns exec "$ns" socat -t 30 TCP-LISTEN:7000,bind=$tip,fork,reuseaddr EXEC:cat >/dev/null 2>&1 &
for _ in $(seq 50); do python3 -c "import socket;socket.create_connection(('$tip',8080),1)" 2>/dev/null && break; sleep 0.1; done
cat > "$d/tcp.py" <<'PY'
import socket, sys, time
host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = time.time()
try:
    s = socket.create_connection((host, port), timeout=5)
    if mode == "echo":
        s.sendall(b"ping\n"); s.shutdown(socket.SHUT_WR)
        print(s.makefile("rb").read().decode().strip())
    else:
        s.sendall(("GET %s HTTP/1.0\r\n\r\n" % mode).encode())
        data = b"".join(iter(lambda: s.recv(65536), b""))
        sys.stdout.buffer.write(data.split(b"\r\n\r\n", 1)[1])
except OSError as e:
    print("error %s after %.1fs" % (e.__class__.__name__, time.time() - t), file=sys.stderr); sys.exit(3)
PY
chmod -R a+rX "$d"; cd "$d" || exit 1
run() { timeout 60 "$CAGE" --ro "$d" --unsetenv '*_PROXY' --unsetenv '*_proxy' "$@"; }

out=$(run --net $tip:7000 -- python3 "$d/tcp.py" $tip 7000 echo) || fail "raw TCP echo to a listed address failed"
[ "$out" = ping ] || fail "echo returned '$out'"
out=$(run --net 10.77.0.0/16:8080 -- python3 "$d/tcp.py" $tip 8080 /f) || fail "CIDR rule: HTTP failed"
[ "$out" = hello ] || fail "CIDR rule returned '$out'"
sum=$(run --net $tip:8080 -- sh -c "python3 '$d/tcp.py' $tip 8080 /big | sha256sum")
[ "${sum%% *}" = "$(sha256sum < "$d/www/big" | cut -d' ' -f1)" ] || fail "large transfer corrupted"
# Unlisted address on a listed port (the route for 10.77/16 exists, the rule is for one address).
if run --net $tip:7000 --net 10.77.0.0/16:1 -- python3 "$d/tcp.py" 10.77.$net.3 7000 echo 2>"$d/err"; then
  fail "unlisted address reached"
fi
grep -q "denied (tcp) 10.77.$net.3:7000" "$d/err" || fail "unlisted address: no tcp denial: $(cat "$d/err")"
# An address no rule names: no route in the namespace.
if run --net $tip:7000 -- python3 "$d/tcp.py" 10.78.0.1 7000 echo 2>"$d/err"; then fail "unrouted address reached"; fi
# Refused at connect (no route: OSError ENETUNREACH), not a timeout: judged by the error, not a clock.
grep -q "^error " "$d/err" && ! grep -qi "timeout" "$d/err" || fail "unrouted address did not fail at connect: $(cat "$d/err")"
# An unlisted port of a listed host: no listener of cage's on it inside the namespace, refused there.
if run --net $tip:7000 -- python3 "$d/tcp.py" $tip 8080 /f 2>"$d/err"; then fail "unlisted port reached"; fi
grep -q "ConnectionRefusedError after 0" "$d/err" || fail "unlisted port: $(cat "$d/err")"
echo ok
