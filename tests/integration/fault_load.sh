#!/usr/bin/env bash
# Load: 100 sandboxes started at once all complete without error. Prints the wall time.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/rw"
start=$(date +%s.%N)
pids=()
for i in $(seq 100); do
  "$CAGE" --rw "$work/rw" -- sh -c "echo $i >$work/rw/$i" >"$work/out.$i" 2>&1 &
  pids+=($!)
done
bad=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { bad=$((bad + 1)); echo "run $((i + 1)): $(cat "$work/out.$((i + 1))")" >&2; }
done
end=$(date +%s.%N)
n=$(ls "$work/rw" | wc -l)
echo "timing: 100 concurrent sandboxes in $(echo "$end - $start" | bc) s"
[ "$bad" -eq 0 ] && [ "$n" -eq 100 ] && pass "100 concurrent runs, all exit 0, 100 results" ||
  fail "$bad runs failed, $n results"
finish
