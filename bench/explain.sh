#!/usr/bin/env bash
# --explain's cost: every observed path call (open, stat, exec...) waits for cage's supervisor.
# Three workloads, each plain in cage and with --explain, under both mechanisms where the host offers
# them: `true` (start-up), `find /usr -name '*.h'` (stat- and open-heavy) and `sh -c` running 200
# `cat` processes (exec-heavy). Rounds interleave the runs; each is reported as the median wall time
# and its ratio to the same run without --explain.   bench/explain.sh [rounds]
set -eu
CAGE=${CAGE:-$(dirname "$0")/../build/cage}
rounds=${1:-5}
python3 - "$CAGE" "$rounds" <<'PY'
import statistics, subprocess, sys, time
cage, rounds = sys.argv[1], int(sys.argv[2])
work = {
    "true": ["true"],
    "find /usr": ["find", "/usr", "-name", "*.h"],
    "200 x cat": ["sh", "-c", "for i in $(seq 200); do cat /etc/hostname; done"],
}
mechs = {"namespaces": [], "landlock": ["--mechanism", "landlock", "--allow-degraded", "pid"]}
ok = {m: subprocess.run([cage, *f, "--", "true"], capture_output=True).returncode == 0 for m, f in mechs.items()}
runs = {}
for m, flags in mechs.items():
    if not ok[m]:
        print(f"{m}: not available here, skipped")
        continue
    for w, argv in work.items():
        for explain in (False, True):
            runs[(m, w, explain)] = [cage, "--no-cwd", *flags, *(["--explain"] if explain else []), "--", *argv]
times = {k: [] for k in runs}
keys = list(runs)
for r in range(rounds):
    for k in keys[r % len(keys):] + keys[:r % len(keys)]:
        t = time.perf_counter()
        subprocess.run(runs[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[k].append(time.perf_counter() - t)
print(f"{rounds} rounds")
for (m, w, explain), v in times.items():
    if not explain:
        continue
    base, ex = statistics.median(times[(m, w, False)]), statistics.median(v)
    print(f"{m:11s} {w:10s} plain {base*1000:8.1f} ms  --explain {ex*1000:8.1f} ms  {ex/base:5.2f}x")
PY
