#!/usr/bin/env bash
# Fault: a supervisor service fails to start after init was released to build its view (execute.cc:
# the two-step release). strace -f makes the first thread creation in the run fail (clone3: EAGAIN):
# the first thread cage starts is the --net proxy's or the connect mediator's, and it starts only
# after init had the first release byte. Expected: exit 125, the workload never runs, init is killed
# and reaped (no process of the run left), no private directory left (Landlock-only). Twin: the same
# run without the fault runs the workload. CI runs it under the namespaces mechanism, root and user;
# with CAGE_LANDLOCK_ONLY=1 (lib.bash) it passes under the Landlock-only mechanism too. Needs strace.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
command -v strace >/dev/null || { echo "skip: no strace" >&2; exit 77; }
marker="cage-services-late-$$"
cage_run --net 127.0.0.1:9 -- sh -c "echo RAN $marker"
expect_rc 0 "twin: the run starts"
grep -q "RAN $marker" <<<"$out" && pass "twin: the workload ran" || fail "twin: no output: $out $err"
st=0
timeout -s KILL 20 strace -f -qq -o "$work/trace" -e trace=clone3 -e inject=clone3:error=EAGAIN:when=1 \
  "$CAGE" ${mech[@]+"${mech[@]}"} --net 127.0.0.1:9 -- sh -c "echo RAN $marker" </dev/null >"$work/out" 2>"$work/err" || st=$?
if [ "$st" -eq 125 ] && ! grep -q RAN "$work/out"; then
  pass "a service that fails after the release: exit 125, nothing ran ($(head -c 120 "$work/err"))"
else
  fail "a service that fails after the release: exit $st; stdout: $(cat "$work/out"); stderr: $(cat "$work/err")"
fi
sleep 0.2
pgrep -f "$marker" >/dev/null && fail "a process of the failed run is left" || pass "no process of the failed run left"
# Its private directory (Landlock-only) is /tmp/cage-private.PID.*, PID cage's own: the process whose
# thread creation failed. Other tests' runs at the same time make and remove theirs.
pid=$(awk 'NR == 1 {print $1}' "$work/trace")
left=$(ls -d /tmp/cage-private."${pid:-none}".* 2>/dev/null)
[ -n "$pid" ] && [ -z "$left" ] && pass "no private directory of cage $pid left" ||
  fail "a private directory was left: '$left' (cage's pid: '$pid')"
finish
