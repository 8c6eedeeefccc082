#!/usr/bin/env bash
# Fault: the performer (performer.h: the process that runs the workload's connect, bind and listen
# under --net) fails before it has confined itself. Init no longer waits for it: the workload's
# process does, just before its exec, so the performer confines itself meanwhile. Expected: the run
# ends with 125 naming that process, the workload never runs, nothing is left. strace makes every
# getppid answer another pid: the performer's (its check that init is still its parent) makes it
# exit; init's own (its first step) only matters without a pid namespace. Twin: the same run without the fault, where the
# workload's listen goes through the performer. Needs strace; the namespaces mechanism with the
# egress hand-off (skipped where the run makes no performer).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no performer under Landlock alone" >&2; exit 77; }
command -v strace >/dev/null || { echo "skip: no strace" >&2; exit 77; }
marker="cage-performer-start-$$-$RANDOM"  # this instance's runs only: the user's copy may run beside it
listen='python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); print(\"LISTENING\")"'

st=0
strace -f -qq -o "$work/trace" -e trace=getppid "$CAGE" --net 127.0.0.1:9 -- sh -c "$listen" </dev/null \
  >"$work/out" 2>"$work/err" || st=$?
if [ "$(grep -c 'getppid()' "$work/trace")" -lt 2 ]; then
  echo "skip: this run makes no performer ($(grep -c 'getppid()' "$work/trace") getppid calls)" >&2
  exit 77
fi
[ "$st" -eq 0 ] && grep -q LISTENING "$work/out" && pass "twin: the workload listens through the performer" ||
  fail "twin: exit $st; stdout: $(cat "$work/out"); stderr: $(cat "$work/err")"

st=0
timeout -s KILL 20 strace -f -qq -o /dev/null -e trace=getppid -e inject=getppid:retval=77 \
  "$CAGE" --net 127.0.0.1:9 -- sh -c "echo RAN; sleep 30; : $marker" </dev/null >"$work/out" 2>"$work/err" || st=$?
if [ "$st" -eq 125 ] && grep -q "connect, bind and listen" "$work/err" && ! grep -q RAN "$work/out"; then
  pass "performer failed: exit 125, nothing ran ($(head -c 140 "$work/err" | tr '\n' ' '))"
else
  fail "performer failed: exit $st; stdout: $(cat "$work/out"); stderr: $(cat "$work/err")"
fi
sleep 0.3
pgrep -f "$marker" >/dev/null && fail "a process of the failed run is left" ||
  pass "nothing left"
finish
