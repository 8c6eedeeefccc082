#!/usr/bin/env bash
# --net against a service on the host's loopback (runs as root and as an unprivileged user):
# reachable through the proxy only when listed, by HTTP, CONNECT and SOCKS5; denials answer 403 /
# SOCKS 0x02 and are reported on stderr; without --net the sandbox has only its own loopback.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl python3
mkdir "$d/www"; head -c 3000000 /dev/urandom > "$d/www/big"; echo hello > "$d/www/f"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port")
curl -s -o /dev/null "http://127.0.0.1:$port/f" || fail "twin: the test's web server is unreachable from the host"
P=http://127.0.0.1:3128
run() { timeout 60 "$CAGE" "$@"; }

out=$(run --net "127.0.0.1:$port" -- curl -sS -x $P "http://127.0.0.1:$port/f") || fail "allowed plain HTTP failed"
[ "$out" = hello ] || fail "allowed plain HTTP returned '$out'"
code=$(run --net "127.0.0.1:$port" -- curl -s -x $P -o /dev/null -w '%{http_code}' "http://127.0.0.1:$closed/" 2>"$d/err")
[ "$code" = 403 ] || fail "other port not refused with 403 (got $code)"
grep -q "cage: net: denied.*127.0.0.1:$closed is not in the --net allowlist" "$d/err" || fail "denial not reported: $(cat "$d/err")"
out=$(run --net "localhost:$port" -- curl -sS --socks5-hostname 127.0.0.1:3128 "http://localhost:$port/f") ||
  fail "SOCKS5 with a listed name failed"
[ "$out" = hello ] || fail "SOCKS5 returned '$out'"
if run --net "localhost:$port" -- curl -sS --socks5-hostname 127.0.0.1:3128 "http://localhost:$closed/" 2>"$d/err"; then
  fail "SOCKS5 to an unlisted port succeeded"
fi
grep -qi "not allowed\|ruleset\|denied" "$d/err" || fail "SOCKS5 denial unclear: $(cat "$d/err")"
# CONNECT to an allowed port carries any bytes (here plain HTTP inside the tunnel), intact.
sum=$(run --net "127.0.0.1:$port" -- sh -c "curl -sS -p -x $P http://127.0.0.1:$port/big | sha256sum") ||
  fail "tunnel transfer failed"
[ "${sum%% *}" = "$(sha256sum < "$d/www/big" | cut -d' ' -f1)" ] || fail "tunnel transfer corrupted"
# `localhost` is the host's 127.0.0.1 and ::1 and nothing more (every mode: net_localhost_rule.sh).
code=$(run --net "localhost:$port" -- curl -s -x $P -o /dev/null -w '%{http_code}' "http://127.0.0.2:$port/f")
[ "$code" = 403 ] || fail "127.0.0.2 reached while only localhost was listed ($code)"
# Ignoring the proxy fails fast with --net-mode proxy: the namespace has no route to the host (in
# the default mode such a connect is carried transparently: net_transparent_loopback.sh).
# "Fails fast" is judged by how curl failed, not by a clock: 7 is "could not connect" (no route),
# 28 would be its --max-time running out.
rc=0; run --net "127.0.0.1:$port" --net-mode proxy -- curl -sS --noproxy '*' --max-time 20 "http://127.0.0.1:$port/f" 2>/dev/null || rc=$?
[ $rc -ne 0 ] || fail "direct connection bypassed the proxy"
[ $rc -eq 7 ] || fail "direct connection did not fail at connect (curl exit $rc)"
# Without --net: only the sandbox's own loopback, and no proxy.
if run -- curl -sS --max-time 5 -x $P "http://127.0.0.1:$port/f" 2>/dev/null; then fail "no --net, yet network"; fi
echo ok
