#!/usr/bin/env bash
# Every refused or failed connection through the --net proxy is said on stderr, once per destination
# (rate-limited), naming the destination and, for a refusal, the --net flag that would allow it
# (runs as root and as an unprivileged user; issue 19 item 2). A client retrying in a loop gets one
# line, not one per try; a failed upstream (nothing listening) is a line too, not a bare 502.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl python3
chmod 755 "$d"; mkdir "$d/www"; echo hello > "$d/www/f"; chmod -R a+rX "$d"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port"); dead=$(other_port "$closed"); [ "$dead" != "$port" ] || dead=$((port - 2))
if curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$dead/"; then echo "skip: something listens on $dead"; exit 77; fi

# Ten tries each: an unlisted port by plain HTTP, by CONNECT and by SOCKS5, and a listed port where
# nothing listens; then the listed server (twin: allowed traffic prints nothing).
start=$(date +%s)
timeout 200 "$CAGE" --net "127.0.0.1:$port" --net "127.0.0.1:$dead" --net "localhost:$port" -- sh -c "
  for i in 1 2 3 4 5 6 7 8 9 10; do
    curl -s -o /dev/null http://127.0.0.1:$closed/
    curl -s -o /dev/null -p http://localhost:$closed/
    curl -s -o /dev/null --socks5-hostname 127.0.0.1:3128 http://localhost:$port/f http://localhost:$closed/
    curl -s -o /dev/null http://127.0.0.1:$dead/
  done
  curl -sS http://127.0.0.1:$port/f" >"$d/out" 2>"$d/err" || fail "the run failed: $(cat "$d/err")"
elapsed=$(( $(date +%s) - start ))
[ "$(cat "$d/out")" = hello ] || fail "twin: the listed server was not reached"
# One line per destination and outcome every 10 s: a run of T seconds may print floor(T/10)+1 of
# each (a loaded machine stretches the loop past 10 s); ten tries on an idle one print one.
most=$(( elapsed / 10 + 1 ))
count() { grep -cF -- "$1" "$d/err"; }
for line in "cage: net: denied (http) 127.0.0.1:$closed is not in the --net allowlist (add --net 127.0.0.1:$closed)" \
            "cage: net: denied (connect) localhost:$closed is not in the --net allowlist (add --net localhost:$closed)" \
            "cage: net: denied (socks5) localhost:$closed is not in the --net allowlist (add --net localhost:$closed)" \
            "cage: net: failed (http) connecting to 127.0.0.1:$dead failed: Connection refused"; do
  n=$(count "$line")
  [ "$n" -ge 1 ] && [ "$n" -le "$most" ] && [ "$n" -lt 10 ] ||
    fail "want the line 1 to $most times (in ${elapsed} s), got $n: '$line'; stderr: $(cat "$d/err")"
done
grep -q "127.0.0.1:$port\|localhost:$port " "$d/err" && fail "allowed traffic was reported: $(cat "$d/err")"
echo ok
