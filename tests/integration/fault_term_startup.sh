#!/usr/bin/env bash
# Fault: SIGTERM or SIGHUP to cage at random moments of its start-up (a CI job's timeout, a closed
# terminal, a supervisor stopping it). Found on Debian's 6.1 under emulation, where start-up is slow:
# cage died by default action after creating the --result file, which was left empty. Expected:
# every run that created its result file completes it, valid against docs/schema (the workload
# signaled, or completed when the signal came after it), with 128+N or the workload's status; a
# signal before cage began the run (while it read its arguments) leaves no file and exit 128+N;
# nothing of any run is left (no process, no private directory). Twin: the run unsignaled completes.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
schema=${CAGE_SOURCE_DIR:?}/docs/schema/result.schema.json
valid() { python3 "$CAGE_SOURCE_DIR/tests/integration/limits_schema.py" "$schema" "$1" >/dev/null 2>&1; }
class() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"])' "$1" 2>/dev/null; }
marker="cage-term-marker-$$"
cage_exe=$(readlink -f "$CAGE")
mkdir "$work/out"
"$CAGE" --result "$work/twin.json" -- sh -c ": $marker" </dev/null >/dev/null 2>&1
[ "$(class "$work/twin.json")" = completed ] && valid "$work/twin.json" &&
  pass "twin: an unsignaled run writes a completed result" || fail "twin: $(cat "$work/twin.json")"
bad=0
for i in $(seq 30); do
  sig=TERM; [ $((i % 3)) -eq 0 ] && sig=HUP
  r="$work/out/$i.json"
  "$CAGE" --result "$r" -- sh -c "sleep 5; : $marker" </dev/null >/dev/null 2>"$work/out/$i.err" &
  cage_pid=$!
  # The signal is for cage: wait for the background job's exec (before it, the job is a copy of this
  # shell), then let cage run 0-90 ms of its start-up.
  while [ "$(readlink "/proc/$cage_pid/exe" 2>/dev/null)" != "$cage_exe" ] && kill -0 "$cage_pid" 2>/dev/null; do :; done
  sleep "0.0$((RANDOM % 10))"
  kill -"$sig" "$cage_pid"
  wait "$cage_pid"; rc=$?
  c=$(class "$r")
  if [ ! -e "$r" ] && { [ "$rc" -eq 143 ] || [ "$rc" -eq 129 ]; }; then
    :  # the signal came before cage began the run (while it read its arguments): nothing was made
  elif ! valid "$r" || [ -z "$c" ]; then
    bad=$((bad + 1)); fail "SIG$sig, run $i: result not complete (exit $rc): '$(head -c 300 "$r")', stderr: $(head -c 300 "$work/out/$i.err")"
  elif [ "$c" = signaled ] && [ "$rc" -lt 128 ]; then
    bad=$((bad + 1)); fail "SIG$sig: class signaled but exit $rc"
  fi
  compgen -G "/tmp/cage-private.$cage_pid.*" >/dev/null && { bad=$((bad + 1)); fail "private directory of run $cage_pid left"; }
done
[ $bad -eq 0 ] && pass "30 runs signaled during start-up: each wrote a complete result, left no private directory"
for _ in $(seq 50); do pgrep -f "$marker" >/dev/null || break; sleep 0.1; done
pgrep -f "$marker" >/dev/null && fail "processes of signaled runs left: $(pgrep -af "$marker")" ||
  pass "no process of the signaled runs left"
finish
