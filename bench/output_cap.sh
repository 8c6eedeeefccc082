#!/usr/bin/env bash
# Output caps' cost: `cat FILE > /dev/null` directly, inside cage without a cap, inside cage with
# --max-output 1G (every byte copied by cage) and with --max-output 1M (the rest drained and dropped),
# each also with --result (every byte hashed: the result records each stream's SHA-256). Rounds
# interleave the six; each is reported as the median wall time and its ratio to the round's uncapped
# cage run.   bench/output_cap.sh [MiB] [rounds]
set -eu
CAGE=${CAGE:-$(dirname "$0")/../build/cage}
mib=${1:-512} rounds=${2:-7}
f=$(mktemp /tmp/cage-outcap-bench.XXXXXX)
trap 'rm -f "$f"' EXIT
head -c $((mib << 20)) /dev/urandom >"$f"
python3 - "$CAGE" "$f" "$mib" "$rounds" <<'PY'
import statistics, subprocess, sys, time
cage, f, mib, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = {
    "direct cat": ["cat", f],
    "cage, no cap": [cage, "--ro", f, "--", "cat", f],
    "cage --max-output 1G": [cage, "--ro", f, "--max-output", "1G", "--", "cat", f],
    "cage --max-output 1M": [cage, "--ro", f, "--max-output", "1M", "--", "cat", f],
    "1G + --result (hashed)": [cage, "--ro", f, "--max-output", "1G", "--result", "/dev/null", "--", "cat", f],
    "1M + --result (hashed)": [cage, "--ro", f, "--max-output", "1M", "--result", "/dev/null", "--", "cat", f],
}
times = {k: [] for k in runs}
for r in range(rounds):
    names = list(runs)[r % len(runs):] + list(runs)[:r % len(runs)]
    for k in names:
        t = time.perf_counter()
        subprocess.run(runs[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[k].append(time.perf_counter() - t)
base = statistics.median(times["cage, no cap"])
print(f"{mib} MiB, {rounds} rounds")
for k, v in times.items():
    m = statistics.median(v)
    print(f"{k:24s} median {m*1000:8.1f} ms  {mib/m:8.0f} MiB/s  {m/base:5.2f}x of cage without a cap")
PY
