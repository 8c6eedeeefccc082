#!/usr/bin/env bash
# Connect-to-first-byte of two cage binaries interleaved (A, B, A, B, ...) under SCHED_FIFO, with a
# direct loopback connection in each round, unpinned and then with the workload on CPU 0 and cage
# and the server on CPU 1: for a change whose effect is smaller than the noise between whole runs
# of bench/transparent.sh. Prints one line per round; compare the medians, or the paired differences.
# Usage: bench/connect_ab.sh CAGE_A CAGE_B [rounds, default 7] [connects a round, default 500]
set -euo pipefail
a=$1; b=$2; rounds=${3:-7}; n=${4:-500}
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d); spid=""
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
g++ -O2 -static -pthread -o "$d/pb" "$here/proxy_bench.cc"
chmod -R a+rX "$d"
port=$((30000 + RANDOM % 10000))
for mode in unpinned pinned; do
  cpin=""; wpin=""
  [ $mode = pinned ] && cpin="taskset -c 1" && wpin="taskset -c 0"
  chrt -f 10 $cpin "$d/pb" serve $port & spid=$!
  sleep 0.3
  echo "== $mode ($(uptime | sed 's/.*load/load/'))"
  for r in $(seq "$rounds"); do
    direct=$(chrt -f 10 $wpin "$d/pb" latency 127.0.0.1 $port "$n")
    la=$(chrt -f 10 $cpin "$a" --ro "$d" --net 127.0.0.1:$port -- $wpin "$d/pb" latency 127.0.0.1 $port "$n")
    lb=$(chrt -f 10 $cpin "$b" --ro "$d" --net 127.0.0.1:$port -- $wpin "$d/pb" latency 127.0.0.1 $port "$n")
    echo "round $r direct $direct A $la B $lb"
  done
  kill "$spid"; wait "$spid" 2>/dev/null || true; spid=""
done
