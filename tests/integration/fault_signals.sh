#!/usr/bin/env bash
# Fault: signals sent to cage (by kill, a supervisor such as timeout(1), CI): SIGTERM, SIGINT and
# SIGHUP reach the workload; cage exits with the workload's status, or dies of signal N if it did (see signal_exit.sh).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
# start_bg SCRIPT: cage running sh -c SCRIPT in the background, once the workload has started. A
# non-interactive shell starts background jobs with SIGINT and SIGQUIT ignored (and an ignored
# signal is inherited across exec, by cage and by the workload); reset them as a terminal would.
start_bg() {
  rm -f "$work/ready"
  env --default-signal=INT,QUIT "$CAGE" --rw "$work" -- sh -c "$1" >"$work/bg.out" 2>&1 &
  cage_pid=$!
  for _ in $(seq 100); do [ -e "$work/ready" ] && return; sleep 0.05; done
  fail "the workload did not start: $(cat "$work/bg.out")"
}
timeout_wait() {  # wait for cage, but never hang the suite: SIGKILL it after 10 s
  local i
  for i in $(seq 100); do kill -0 "$cage_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$cage_pid" 2>/dev/null && { fail "cage did not exit within 10 s"; kill -9 "$cage_pid"; }
  wait "$cage_pid"
}
for sig in TERM INT HUP; do
  start_bg "trap 'echo got-$sig; exit 7' $sig; touch $work/ready; while :; do sleep 0.1; done"
  kill -s "$sig" "$cage_pid"; st=0; timeout_wait || st=$?
  [ "$st" -eq 7 ] && grep -q "got-$sig" "$work/bg.out" && pass "SIG$sig reaches the workload; its status 7 returned" ||
    fail "SIG$sig with a handler: exit $st, output $(cat "$work/bg.out")"
done
for pair in TERM:15 INT:2 USR1:10; do
  sig=${pair%:*} n=${pair#*:}
  start_bg "touch $work/ready; exec sleep 300"
  kill -s "$sig" "$cage_pid"; st=0; timeout_wait || st=$?
  [ "$st" -eq $((128 + n)) ] && pass "SIG$sig kills the workload: exit $st" || fail "SIG$sig: exit $st, want $((128 + n))"
done
finish
