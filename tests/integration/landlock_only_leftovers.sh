#!/usr/bin/env bash
# A supervisor of a Landlock-only run killed with SIGKILL leaves its private directory (no mount
# namespace takes it away); the next run of the same user removes it.
. "$(dirname "$0")/landlock_only.bash"
# A supervisor killed with SIGKILL leaves its private directory; the next run removes it.
"${A[@]}" -- sleep 30 &
victim=$!
for _ in $(seq 50); do [ -d "$(ls -d /tmp/cage-private."$victim".* 2>/dev/null | head -1)" ] && break; sleep 0.1; done
left=$(ls -d /tmp/cage-private."$victim".* 2>/dev/null | head -1)
[ -n "$left" ] || fail "no private directory named after the supervisor's pid"
kill -9 "$victim"; wait "$victim" 2>/dev/null
sleep_pid=$(pgrep -u "$(id -u)" -x -f "sleep 30" | head -1)  # the workload outlives cage here (the pid loss)
[ -n "$sleep_pid" ] && kill "$sleep_pid"
"${A[@]}" -- true || fail "run after a killed supervisor failed"
[ ! -e "$left" ] || fail "stale private directory $left not removed by the next run"
nothing_left
echo "landlock_only_leftovers: ok"
