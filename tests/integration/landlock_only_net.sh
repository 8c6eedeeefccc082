#!/usr/bin/env bash
# --net under the Landlock-only mechanism: the proxy listens on the host's loopback, reachable only at
# its own address and only with the run's secret; cage checks each connect() so that the proxy's port
# number on another loopback address stays unreachable.
. "$(dirname "$0")/landlock_only.bash"
. "$(dirname "$0")/net_lib.bash"
start_loopback_server listen; bg+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's listener did not start"
# --net: the proxy on the host's loopback, reachable only at its own address and only with the run's secret.
N=("${A[@]}")
mkdir "$d/www" && head -c 3000000 /dev/urandom >"$d/www/blob"
start_loopback_server http "$d/www"; bg+=("$server_pid")
www=$server_port; [ -n "$www" ] || fail "the test's web server did not start"
curl -s -o /dev/null "http://127.0.0.1:$www/" || fail "twin: the test's web server is unreachable from the host"
out=$("${N[@]}" --net "127.0.0.1:$www" -- sh -c "
  curl -sS http://127.0.0.1:$www/blob | sha256sum | cut -c1-16
  curl -sS --socks5-hostname "\${ALL_PROXY#socks5h://}" http://127.0.0.1:$www/blob | sha256sum | cut -c1-16
  curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/
  curl -sS --noproxy \"*\" -o /dev/null http://127.0.0.1:$www/ 2>/dev/null && echo direct-reached || echo direct-refused
  case \"\$HTTPS_PROXY\" in http://cage:*@127.0.0.1:*) echo url-ok ;; esac" 2>/dev/null)
want=$(sha256sum <"$d/www/blob" | cut -c1-16)
[ "$(echo $out)" = "$want $want 403 direct-refused url-ok" ] || fail "--net via the loopback proxy: $(echo $out) (want $want)"
# Another local process cannot use the run's proxy: without the secret it gets 407 / SOCKS refusal.
# The run (and so its proxy) lasts until the outsider's tries are over: a timed run ended first
# under emulation (Debian's 6.12, TCG), and a proxy that is gone refuses everything.
rm -f "$d/rw/port" "$d/rw/done"
"${N[@]}" --net "127.0.0.1:$www" -- sh -c 'echo "${HTTP_PROXY##*:}" > '"$d/rw/port"'
  while [ ! -e '"$d/rw/done"' ]; do sleep 0.1; done' &
runner=$!; bg+=("$runner")
while [ ! -s "$d/rw/port" ] && kill -0 "$runner" 2>/dev/null; do sleep 0.1; done
pp=$(cat "$d/rw/port")
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$pp" "http://127.0.0.1:$www/")
[ "$code" = 407 ] || fail "an outsider used the run's proxy without the secret (HTTP $code)"
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://cage:wrong@127.0.0.1:$pp" "http://127.0.0.1:$www/")
[ "$code" = 407 ] || fail "a wrong secret was accepted (HTTP $code)"
if curl -s -o /dev/null --socks5-hostname "127.0.0.1:$pp" "http://127.0.0.1:$www/"; then fail "SOCKS5 without the secret worked"; fi
kill -0 "$runner" 2>/dev/null || fail "the run ended before the outsider's tries: they proved nothing"
touch "$d/rw/done"
wait "$runner"
# Landlock alone would let the workload reach ANY host on the proxy's port number; cage checks each
# connect(): a service on 127.0.0.2 at that very port stays unreachable, the proxy stays reachable.
rm -f "$d/rw/port" "$d/rw/go"
"${N[@]}" --net "127.0.0.1:$www" -- sh -c "echo \"\${HTTP_PROXY##*:}\" > $d/rw/port
  while [ ! -e $d/rw/go ]; do sleep 0.1; done
  '$CAGE_PROBE' connect 127.0.0.2 \"\${HTTP_PROXY##*:}\" >/dev/null 2>&1 && echo other-reached || echo other-refused
  curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$www/" >"$d/same-port" 2>/dev/null &
runner=$!; bg+=("$runner")
for _ in $(seq 50); do [ -s "$d/rw/port" ] && break; sleep 0.1; done
pp=$(cat "$d/rw/port")
python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.2', $pp)); s.listen(); time.sleep(10)" &
other=$!; bg+=("$other")
for _ in $(seq 50); do "$CAGE_PROBE" connect 127.0.0.2 "$pp" >/dev/null 2>&1 && break; sleep 0.1; done
"$CAGE_PROBE" connect 127.0.0.2 "$pp" >/dev/null 2>&1 || fail "twin: the same-port service is unreachable from the host"
touch "$d/rw/go"
wait "$runner"
kill "$other" 2>/dev/null
[ "$(echo $(cat "$d/same-port"))" = "other-refused 200" ] || fail "same port, other host: $(cat "$d/same-port")"
left=$(comm -13 <(echo "$before") <(orphans))
nothing_left
echo "landlock_only_net: ok"
