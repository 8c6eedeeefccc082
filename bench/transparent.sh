#!/usr/bin/env bash
# Throughput and connect latency of transparent egress (the workload connects directly; cage's
# listener in the sandbox's namespace -> supervisor splice relay -> upstream) against a direct
# loopback connection and the proxy path (CONNECT via the shim), all measured in this run.
# Usage: bench/transparent.sh [MiB per transfer, default 2000]
set -euo pipefail
mib=${1:-2000}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
CAGE=${CAGE:-$root/build-transp/cage}
d=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$d"; }
trap cleanup EXIT
g++ -O2 -static -pthread -o "$d/pb" "$here/proxy_bench.cc"
port=$((30000 + RANDOM % 10000))
"$d/pb" serve $port & pids+=($!)
sleep 0.3
best() { local b=0 v; for _ in 1 2 3; do v=$("$@"); [ "$v" -gt "$b" ] && b=$v; done; echo $b; }
cage_run() { "$CAGE" --ro "$d" --net 127.0.0.1:$port "$@"; }
direct=$(best "$d/pb" bulk 127.0.0.1 $port "$mib")
transparent=$(best cage_run -- "$d/pb" bulk 127.0.0.1 $port "$mib")
proxied=$(best cage_run -- "$d/pb" bulk 127.0.0.1 $port "$mib" 3128)
lat_direct=$("$d/pb" latency 127.0.0.1 $port 500)
lat_transparent=$(cage_run -- "$d/pb" latency 127.0.0.1 $port 500)
lat_proxy=$(cage_run -- "$d/pb" latency 127.0.0.1 $port 500 3128)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
printf '%-38s %8s MiB/s  %s\n' "direct loopback TCP" "$direct" "100%"
printf '%-38s %8s MiB/s  %s\n' "cage transparent (listener, splice)" "$transparent" "$(ratio "$transparent" "$direct")"
printf '%-38s %8s MiB/s  %s\n' "cage proxy (shim, CONNECT, splice)" "$proxied" "$(ratio "$proxied" "$direct")"
printf 'connect-to-first-byte median: direct %s ms; transparent %s ms (+%s); proxy %s ms (+%s)\n' \
  "$lat_direct" "$lat_transparent" "$(added "$lat_transparent" "$lat_direct")" "$lat_proxy" \
  "$(added "$lat_proxy" "$lat_direct")"
