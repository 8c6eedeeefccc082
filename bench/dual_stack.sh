#!/usr/bin/env bash
# A name whose first address (IPv6) drops every packet and whose second (IPv4) answers (issue 19
# item 1): the time curl takes to fetch a page through cage on each path (plain HTTP, CONNECT,
# SOCKS5, transparent) against curl on the host, which falls back by itself. cage dials RFC 8305
# style (src/proxy/dial.h), so each path should cost about one Connection Attempt Delay (250 ms)
# over the host's fallback; before, each ended at the 10 s connect limit.
# Runs in a private network and mount namespace (unshare -mn as root, -rmn otherwise).
# Usage: bench/dual_stack.sh [rounds, default 3]
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
CAGE=${CAGE:-$root/build/cage}
d=$(mktemp -d); chmod 755 "$d"; mkdir "$d/www"; echo hi >"$d/www/f"; chmod -R a+rX "$d"
trap 'rm -rf "$d"' EXIT
ns=(unshare -m -n --fork); [ "$(id -u)" -eq 0 ] || ns=(unshare -r -m -n --fork)
"${ns[@]}" bash -s "$CAGE" "$d" "$rounds" <<'INNER'
set -euo pipefail
CAGE=$1 d=$2 rounds=$3 v4=10.77.9.1 v6=2001:db8:2::5
# The same set-up as tests/integration/net_dual_stack.sh: a veth neighbour with a MAC nobody owns.
ip link set lo up; ip link add hev0 type veth peer name hev1; ip link set hev0 up; ip link set hev1 up
ip addr add $v4/24 dev hev0; ip -6 addr add 2001:db8:1::1/64 dev hev0 nodad
ip -6 route add 2001:db8:2::/64 dev hev0; ip -6 neigh add $v6 lladdr 02:00:5e:00:53:01 dev hev0 nud permanent
printf '127.0.0.1 localhost\n%s dual.cage-test\n%s dual.cage-test\n' $v6 $v4 >"$d/hosts"
mount --make-rprivate /; mount --bind "$d/hosts" /etc/hosts
(cd "$d/www" && exec python3 -m http.server 8080 --bind $v4 >/dev/null 2>&1) &
web=$!; trap 'kill $web 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://$v4:8080/f" && break; sleep 0.1; done
u=http://dual.cage-test:8080/f
fetch() { curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 30 "$@" "$u"; }
through() { (cd / && "$CAGE" --net dual.cage-test:8080 "$@"); }
printf '%-12s %s\n' path "status and seconds per round"
for path in host http connect socks5 transparent; do
  line=""
  for _ in $(seq "$rounds"); do
    case $path in
      host) r=$(fetch) || true ;;
      http) r=$(through -- curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 30 -x http://127.0.0.1:3128 "$u") || true ;;
      connect) r=$(through -- curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 30 -p -x http://127.0.0.1:3128 "$u") || true ;;
      socks5) r=$(through -- curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 30 -x socks5h://127.0.0.1:3128 "$u") || true ;;
      transparent) r=$(through --net-mode transparent -- curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 30 --noproxy '*' "$u") || true ;;
    esac
    line+="  $r"
  done
  printf '%-12s%s\n' $path "$line"
done
INNER
