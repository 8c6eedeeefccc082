#!/usr/bin/env bash
# Fault: cage killed with SIGKILL while the workload runs, and at random moments of start-up.
# Expected: nothing is orphaned: no sandbox process (found by a marker in its command line), no
# change to the host's mount table, no file left by cage in $TMPDIR or /dev/shm.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/tmp"
export TMPDIR="$work/tmp"
marker="cage-fault-marker-$$"
mounts_before=$(cut -d' ' -f5 /proc/self/mountinfo | sort)
shm_before=$(ls -A /dev/shm 2>/dev/null | sort)
leftovers() {
  for _ in $(seq 40); do pgrep -f "$marker" >/dev/null || return 0; sleep 0.1; done
  return 1
}
"$CAGE" -- sh -c "sleep 300; : $marker" &
cage_pid=$!
for _ in $(seq 50); do pgrep -f "sleep 300; : $marker" >/dev/null && break; sleep 0.1; done
pgrep -f "$marker" >/dev/null || fail "the workload never started"
kill -9 "$cage_pid"; wait "$cage_pid" 2>/dev/null
leftovers && pass "kill -9 during the run: no sandbox process left" ||
  { fail "sandbox processes survive cage: $(pgrep -af "$marker")"; pkill -9 -f "$marker"; }
for i in $(seq 15); do
  "$CAGE" -- sh -c "sleep 300; : $marker" &
  cage_pid=$!
  sleep "0.0$((RANDOM % 10))"
  kill -9 "$cage_pid"; wait "$cage_pid" 2>/dev/null
done
leftovers && pass "kill -9 at random start-up moments: no process left" ||
  { fail "processes survive start-up kills: $(pgrep -af "$marker")"; pkill -9 -f "$marker"; }
[ "$(cut -d' ' -f5 /proc/self/mountinfo | sort)" = "$mounts_before" ] && pass "host mount table unchanged" ||
  fail "host mounts changed: $(diff <(echo "$mounts_before") <(cut -d' ' -f5 /proc/self/mountinfo | sort))"
[ -z "$(ls -A "$TMPDIR")" ] && pass "no temp files in \$TMPDIR" || fail "left in \$TMPDIR: $(ls -A "$TMPDIR")"
shm_new=$(comm -13 <(echo "$shm_before") <(ls -A /dev/shm 2>/dev/null | sort) | grep -i cage)
[ -z "$shm_new" ] && pass "nothing of cage's in /dev/shm" || fail "left in /dev/shm: $shm_new"
finish
