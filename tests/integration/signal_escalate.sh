#!/usr/bin/env bash
# SIGTERM or SIGHUP to cage ends the run, as docker stop and systemd do: forwarded first, and a
# workload still running 5 s later (the --timeout grace) is ended with every process of the sandbox;
# cage then dies of that signal. A second one during the grace ends it at once. One that handles the
# signal and exits keeps its own status; SIGINT never escalates (an interactive shell ignores it).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/rw"  # the ready flag; --result stays outside the --rw grant
marker=cage-escalate-$$-$RANDOM
# start_bg SCRIPT: cage running sh -c SCRIPT (with $0 the marker) in the background, once it has
# started; SIGINT and SIGQUIT reset (a script's background job starts with them ignored).
start_bg() {
  rm -f "$work/rw/ready"
  rm -f "$work/result.json"
  env --default-signal=INT,QUIT "$CAGE" --rw "$work/rw" --result "$work/result.json" -- sh -c "$1" "$marker" \
    >"$work/bg.out" 2>&1 &
  cage_pid=$!
  for _ in $(seq 100); do [ -e "$work/rw/ready" ] && return; sleep 0.05; done
  fail "the workload did not start: $(cat "$work/bg.out")"
}
ms() { echo $(($(date +%s%N) / 1000000)); }
# wait_cage LIMIT_S: cage's status, or fail (and SIGKILL it) if it lives past LIMIT_S.
wait_cage() {
  local i
  for i in $(seq $(($1 * 10))); do kill -0 "$cage_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$cage_pid" 2>/dev/null && { fail "cage still running after $1 s"; kill -9 "$cage_pid"; }
  st=0
  wait "$cage_pid" || st=$?
}
left_behind() { pgrep -f "$marker" | grep -vx "$$" || true; }
at_exit 'pkill -KILL -f "$marker"'
ignore="trap '' TERM INT HUP; touch $work/rw/ready; sleep 311; :"

for pair in TERM:15 HUP:1; do
  sig=${pair%:*} n=${pair#*:}
  start_bg "$ignore"
  t0=$(ms); kill -s "$sig" "$cage_pid"; wait_cage 12; t=$(($(ms) - t0))
  [ "$st" -eq $((128 + n)) ] && [ "$t" -ge 4500 ] && [ "$t" -le 7000 ] &&
    pass "SIG$sig ignored by the workload: run ended after the grace (${t} ms), status $st" ||
    fail "SIG$sig ignored: status $st after ${t} ms, want $((128 + n)) after 5-7 s; $(cat "$work/bg.out")"
  [ -z "$(left_behind)" ] && pass "nothing of the SIG$sig run is left" || fail "left behind: $(ps -o pid,args -p "$(left_behind | tr '\n' ',' | sed 's/,$//')")"
  grep -q "\"exit_code\":$((128 + n))," "$work/result.json" && grep -q '"signal_name":"SIGKILL"' "$work/result.json" &&
    pass "--result: exit_code $((128 + n)), the workload's death by SIGKILL" || fail "--result: $(cat "$work/result.json")"
done

start_bg "$ignore"
t0=$(ms); kill -TERM "$cage_pid"; sleep 0.5; kill -TERM "$cage_pid"; wait_cage 12; t=$(($(ms) - t0))
[ "$st" -eq 143 ] && [ "$t" -le 2500 ] && pass "a second SIGTERM ends the run at once (${t} ms)" ||
  fail "second SIGTERM: status $st after ${t} ms, want 143 within 2.5 s"
[ -z "$(left_behind)" ] || fail "left behind after the second SIGTERM: $(left_behind)"

# The twin: a workload that handles SIGTERM and exits by itself within the grace keeps its status.
start_bg "trap 'sleep 1; exit 0' TERM; touch $work/rw/ready; while :; do sleep 0.1; done"
t0=$(ms); kill -TERM "$cage_pid"; wait_cage 12; t=$(($(ms) - t0))
[ "$st" -eq 0 ] && [ "$t" -lt 4500 ] && pass "a workload that exits on SIGTERM keeps its status 0 (${t} ms)" ||
  fail "handled SIGTERM: status $st after ${t} ms, want 0 before the grace"

# SIGINT does not escalate: the workload that ignores it is still running past the grace.
start_bg "trap '' INT; touch $work/rw/ready; sleep 311; :"
kill -INT "$cage_pid"; sleep 6.5
if kill -0 "$cage_pid" 2>/dev/null && [ -n "$(left_behind)" ]; then
  pass "SIGINT to cage does not end a workload that ignores it"
else
  fail "SIGINT ended the run: $(cat "$work/bg.out")"
fi
kill -TERM "$cage_pid"; wait_cage 8
[ "$st" -eq 143 ] && [ -z "$(left_behind)" ] && pass "then SIGTERM ends it (status $st)" || fail "SIGTERM after SIGINT: status $st"
finish
