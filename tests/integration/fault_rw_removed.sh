#!/usr/bin/env bash
# Fault: the --rw directory is removed on the host during the run. Expected: the workload sees
# errors (its view is the removed directory), cage exits with the workload's status, and nothing is
# recreated on the host afterwards.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir -p "$work/rw"
"$CAGE" --rw "$work/rw" -- sh -c "touch $work/rw/ready; while [ -e $work/rw/ready ]; do sleep 0.05; done
  echo late >$work/rw/after 2>/dev/null && echo WROTE || echo write-failed" >"$work/out" 2>&1 &
cage_pid=$!
for _ in $(seq 100); do [ -e "$work/rw/ready" ] && break; sleep 0.05; done
rm -rf "$work/rw"
st=0; wait "$cage_pid" || st=$?
[ "$st" -eq 0 ] && pass "cage exits with the workload's status ($(cat "$work/out"))" || fail "exit $st: $(cat "$work/out")"
[ -e "$work/rw" ] && fail "the removed --rw directory was recreated on the host: $(ls -A "$work/rw")" ||
  pass "nothing recreated on the host"
finish
