#!/usr/bin/env bash
# Throughput and connect latency of transparent egress against a direct loopback connection, all
# measured in this run: the hand-off (the workload's own connect gets a socket the supervisor dialled,
# src/linux/handoff.h: cage moves no bytes), the relay (cage's listener in the sandbox's namespace ->
# supervisor splice relay; measured with --seccomp relaxed, under which no hand-off is made, and with
# CAGE_RELAY, a cage without the hand-off, e.g. a build of the commit before it) and the proxy path
# (CONNECT via the shim, also a relay). Each twice: unpinned, and with the workload pinned to CPU 0
# and cage and the server to CPU 1 (taskset), as on a many-core machine where neither side waits for
# the other's core.
# CAGE_BENCH_RT=1 runs every contender (server, direct client, cage) under SCHED_FIFO (chrt -f 10),
# so that a shared machine's other work does not stretch the wake-ups a connect waits for.
# Usage: [CAGE_BENCH_RT=1] CAGE_RELAY=/path/to/old/cage bench/transparent.sh [MiB per transfer, default 2000]
set -euo pipefail
mib=${1:-2000}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
CAGE=${CAGE:-$root/build/cage}
CAGE_RELAY=${CAGE_RELAY:-}
rt=""
[ "${CAGE_BENCH_RT:-0}" = 1 ] && rt="chrt -f 10"
d=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$d"; }
trap cleanup EXIT
g++ -O2 -static -pthread -o "$d/pb" "$here/proxy_bench.cc"
chmod -R a+rX "$d"
port=$((30000 + RANDOM % 10000))
best() { local b=0 v; for _ in 1 2 3; do v=$("$@"); [ "$v" -gt "$b" ] && b=$v; done; echo $b; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f", a - b }'; }
# measure LABEL CAGE_PIN WORKLOAD_PIN: one row set; pins are taskset prefixes (empty: unpinned).
measure() {
  local label=$1 cpin="$rt $2" wpin=$3 direct lat_direct v l
  direct=$(best $rt $wpin "$d/pb" bulk 127.0.0.1 $port "$mib")
  lat_direct=$($rt $wpin "$d/pb" latency 127.0.0.1 $port 500)
  echo "== $label${rt:+, $rt} (uptime: $(uptime | sed 's/.*load/load/'))"
  printf '%-44s %8s MiB/s  %7s   connect-to-first-byte %s ms\n' "direct loopback TCP" "$direct" "100%" "$lat_direct"
  row() {  # NAME CAGE_BINARY CAGE_FLAG [PROXY_PORT]  (CAGE_FLAG: one more flag for cage, or "")
    local name=$1 bin=$2 flag=$3
    shift 3
    v=$(best $cpin "$bin" $flag --ro "$d" --net 127.0.0.1:$port -- $wpin "$d/pb" bulk 127.0.0.1 $port "$mib" "$@")
    l=$($cpin "$bin" $flag --ro "$d" --net 127.0.0.1:$port -- $wpin "$d/pb" latency 127.0.0.1 $port 500 "$@")
    printf '%-44s %8s MiB/s  %7s   connect-to-first-byte %s ms (%s)\n' "$name" "$v" "$(ratio "$v" "$direct")" \
      "$l" "$(added "$l" "$lat_direct")"
  }
  row "cage transparent, hand-off" "$CAGE" ""
  # The hand-off is made only under the default seccomp profile (linux/handoff.h): under relaxed the
  # same build relays, which makes the relay's row of the same binary and run.
  row "cage transparent, relay (--seccomp relaxed)" "$CAGE" "--seccomp=relaxed"
  [ -n "$CAGE_RELAY" ] && row "cage transparent, relay (CAGE_RELAY)" "$CAGE_RELAY" ""
  row "cage proxy (shim, CONNECT, splice)" "$CAGE" "" 3128
}
$rt "$d/pb" serve $port & pids+=($!)
sleep 0.3
measure "unpinned" "" ""
kill "${pids[@]}"; wait 2>/dev/null || true; pids=()
taskset -c 1 $rt "$d/pb" serve $port & pids+=($!)
sleep 0.3
measure "workload on CPU 0, cage and the server on CPU 1" "taskset -c 1" "taskset -c 0"
