#!/usr/bin/env bash
# Throughput and latency of cage's --net path (workload -> shim -> supervisor splice relay ->
# upstream) against a direct loopback connection, a bare splice relay (bench/splice_relay.cc: the
# ceiling of any single-hop relay here) and socat TCP->UNIX->TCP relays (default and 256 KiB
# buffers), all measured in this run; plus 1,000 concurrent tunnels and the supervisor's
# peak RSS. Usage: bench/proxy.sh [MiB per transfer, default 2000]
set -euo pipefail
mib=${1:-2000}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
CAGE=${CAGE:-$root/build-net/cage}
d=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$d"; }
trap cleanup EXIT
g++ -O2 -static -pthread -o "$d/pb" "$here/proxy_bench.cc"
g++ -O2 -pthread -o "$d/relay" "$here/splice_relay.cc"
port=$((30000 + RANDOM % 10000))
"$d/pb" serve $port & pids+=($!)
sleep 0.3
socat_relay() {  # $1 listen port, $2 extra socat options
  socat UNIX-LISTEN:"$d/s$1",fork$2 TCP:127.0.0.1:$port$2 & pids+=($!)
  socat TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork$2 UNIX-CONNECT:"$d/s$1"$2 & pids+=($!)
}
"$d/relay" $((port + 3)) $port & pids+=($!)  # the ceiling of a single-hop splice relay
socat_relay $((port + 1)) ""
socat_relay $((port + 2)) ",rcvbuf=262144,sndbuf=262144"
sleep 0.3
best() { local b=0 v; for _ in 1 2 3; do v=$("$@"); [ "$v" -gt "$b" ] && b=$v; done; echo $b; }
direct=$(best "$d/pb" bulk 127.0.0.1 $port "$mib")
s1=$(best "$d/pb" bulk 127.0.0.1 $((port + 1)) "$mib")
s2=$(best "$d/pb" bulk 127.0.0.1 $((port + 2)) "$mib")
ceiling=$(best "$d/pb" bulk 127.0.0.1 $((port + 3)) "$mib")
cage_run() { "$CAGE" --ro "$d" --net 127.0.0.1:$port -- "$@"; }
proxied=$(best cage_run "$d/pb" bulk 127.0.0.1 $port "$mib" 3128)
lat_direct=$("$d/pb" latency 127.0.0.1 $port 500)
lat_proxy=$(cage_run "$d/pb" latency 127.0.0.1 $port 500 3128)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
printf '%-34s %8s MiB/s  %s\n' "direct loopback TCP" "$direct" "100%"
printf '%-34s %8s MiB/s  %s\n' "cage shim + supervisor (splice)" "$proxied" "$(ratio "$proxied" "$direct")"
printf '%-34s %8s MiB/s  %s   (cage = %s of it)\n' "bare splice relay (the ceiling)" "$ceiling" \
  "$(ratio "$ceiling" "$direct")" "$(ratio "$proxied" "$ceiling")"
printf '%-34s %8s MiB/s  %s\n' "socat TCP->UNIX->TCP (default)" "$s1" "$(ratio "$s1" "$direct")"
printf '%-34s %8s MiB/s  %s\n' "socat TCP->UNIX->TCP (256 KiB)" "$s2" "$(ratio "$s2" "$direct")"
printf 'connect-to-first-byte median: direct %s ms, via cage %s ms, added %s ms\n' "$lat_direct" "$lat_proxy" \
  "$(awk -v a="$lat_proxy" -v b="$lat_direct" 'BEGIN { printf "%.3f", a - b }')"
# 1,000 concurrent tunnels; the supervisor is the cage process started here.
"$CAGE" --ro "$d" --net 127.0.0.1:$port -- "$d/pb" hold 127.0.0.1 $port 1000 3128 > "$d/hold" & cpid=$!
for _ in $(seq 100); do grep -q held "$d/hold" 2>/dev/null && break; sleep 0.1; done
rss=$(awk '/VmHWM/ { print $2 }' /proc/$cpid/status 2>/dev/null || echo "?")
wait $cpid || true
printf 'concurrent tunnels: %s; supervisor peak RSS %s KiB\n' "$(cat "$d/hold")" "$rss"
