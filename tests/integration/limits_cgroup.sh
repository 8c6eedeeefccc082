#!/usr/bin/env bash
# --memory and --pids end a run as oom_killed / pids_exhausted where a cgroup enforces them (root on
# this cgroup v1 host), keep a fork bomb from touching the host, and leave no cgroup behind. Where no
# cgroup is usable (the unprivileged user here) the same flags warn, log limits_not_enforced and
# fall back to RLIMIT_AS / RLIMIT_NPROC, which still stop the hog and the bomb.
set -u
. "$(dirname "$0")/limits_lib.bash"
run() { timeout 60 "$CAGE" "$@"; }

# Allowed twin: a small program under the same limits completes.
run --memory 32M --pids 64 --result "$work/ok.json" -- sh -c 'echo fine' >"$work/out" 2>"$work/err" ||
  fail "a small program under --memory 32M --pids 64 failed: $(cat "$work/err")"
valid_result "$work/ok.json"
[ "$(json "$work/ok.json" 'd["class"]')" = completed ] || fail "small program not completed"

hog='x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done'
if cgroup_usable memory 32M; then
  run --memory 32M --result "$work/oom.json" --audit "$work/oom.log" -- sh -c "$hog" 2>"$work/err"
  rc=$?
  valid_result "$work/oom.json"; valid_audit "$work/oom.log"
  [ "$(json "$work/oom.json" 'd["class"]')" = oom_killed ] || fail "memory hog not oom_killed: $(cat "$work/oom.json")"
  [ "$rc" -eq 137 ] || fail "oom-killed run exited $rc, not 137"
  [ "$(json "$work/oom.json" 'd["limits"]["oom_kills"] > 0')" = true ] || fail "no oom kill counted"
  [ "$(json "$work/oom.json" 'd["memory"]["source"]')" = cgroup ] || fail "peak memory not from the cgroup"
  [ "$(json "$work/oom.json" 'd["memory"]["peak_bytes"] <= 32*1024*1024')" = true ] || fail "peak above the limit"
  events "$work/oom.log" killed | grep -q '"reason":"oom"' || fail "no killed/oom event"
else
  run --memory 32M --result "$work/oom.json" --audit "$work/oom.log" -- sh -c "$hog" 2>"$work/err"
  valid_result "$work/oom.json"; valid_audit "$work/oom.log"
  grep -q "cage: warning: --memory 32M is not enforced by a cgroup" "$work/err" || fail "no warning: $(cat "$work/err")"
  events "$work/oom.log" limits_not_enforced | grep -q '"fallback":"RLIMIT_AS"' || fail "no limits_not_enforced event"
  [ "$(json "$work/oom.json" 'd["limits"]["not_enforced"][0]["limit"]')" = "--memory 32M" ] || fail "result hides it"
  # RLIMIT_AS still stops the hog: the shell cannot grow, and the run ends (not by the timeout).
  [ "$(json "$work/oom.json" 'd["class"]')" != timed_out ] || fail "hog ran on"
  grep -qi "memory\|cannot allocate" "$work/err" || fail "hog was not stopped by RLIMIT_AS: $(cat "$work/err")"
fi

# Fork bomb: contained (it ends on its own, not by --timeout), the host can still fork, and
# everything is gone afterwards. No wall-clock bound: speed belongs to bench/, not to tests.
# The function's name is unique to this run: the root and user variants of this test may run at once.
f="bomb$$"
bomb="$f() { $f | $f & }; $f; sleep 3"
run --pids 64 --timeout 20 --result "$work/bomb.json" --audit "$work/bomb.log" -- sh -c "$bomb" >/dev/null 2>"$work/err" &
cage_pid=$!
sleep 1
sh -c true || fail "host cannot fork during the bomb"
wait "$cage_pid"
valid_result "$work/bomb.json"; valid_audit "$work/bomb.log"
[ "$(json "$work/bomb.json" 'd["class"]')" != timed_out ] || fail "fork bomb was not contained (ran into the timeout)"
if cgroup_usable pids 64; then
  [ "$(json "$work/bomb.json" 'd["limits"]["pids_refused"] > 0')" = true ] || fail "no refused fork counted"
  # pids_exhausted: the limit refused a fork and the workload did not succeed (here: sh cannot fork).
  run --pids 64 --result "$work/many.json" -- sh -c 'for i in $(seq 200); do sleep 30 & done; wait' 2>/dev/null
  valid_result "$work/many.json"
  [ "$(json "$work/many.json" 'd["class"]')" = pids_exhausted ] || fail "not pids_exhausted: $(cat "$work/many.json")"
else
  events "$work/bomb.log" limits_not_enforced | grep -q -- '--pids 64' || fail "no limits_not_enforced for --pids"
  grep -q "cage: warning: --pids 64 is not enforced by a cgroup" "$work/err" || fail "no --pids warning"
fi
sleep 0.5
if pgrep -f "$f [|] $f &" >/dev/null; then fail "fork bomb processes survived the run"; fi
no_stale_cgroups

# --cpu: a cgroup quota where usable (plan shows it), otherwise a warning that nothing enforces it.
if cgroup_usable cpu 0.5; then
  "$CAGE" --cpu 0.5 --dry-run --verbose -- true | grep -q "cpu.cfs_quota_us = 50000\|cpu.max = 50000 100000" || fail "cpu quota not planned"
  run --cpu 0.5 -- sh -c 'grep -q . /proc/self/cgroup' || fail "run under --cpu failed"
else
  run --cpu 0.5 -- true 2>"$work/err" || fail "run under unenforced --cpu failed"
  grep -q "cage: warning: --cpu 0.5 is not enforced by a cgroup.*no rlimit" "$work/err" || fail "no --cpu warning"
fi
no_stale_cgroups

# cage killed with SIGKILL mid-run: it cannot clean up, so its sentinel removes the run's cgroups
# (and the sandbox dies with cage); within a few seconds nothing of the run is left.
if cgroup_usable pids 64; then
  marker="cage-kill9-cgroup-$$"
  "$CAGE" --pids 64 --memory 256M -- sh -c "sleep 300; : $marker" &
  cage_pid=$!
  for _ in $(seq 50); do pgrep -f "sleep 300; : $marker" >/dev/null && break; sleep 0.1; done
  pgrep -f "sleep 300; : $marker" >/dev/null || fail "the workload under --pids never started"
  kill -9 "$cage_pid"; wait "$cage_pid" 2>/dev/null
  for _ in $(seq 50); do
    pgrep -f "$marker" >/dev/null || [ -n "$(no_stale_cgroups 2>&1)" ] || break
    sleep 0.1
  done
  if pgrep -f "$marker" >/dev/null; then fail "processes of the killed run survive: $(pgrep -af "$marker")"; fi
  no_stale_cgroups
  # Allowed twin: the next run under the same limits starts and ends normally.
  run --pids 64 --memory 256M -- true || fail "a run after the killed one failed"
  no_stale_cgroups
fi
echo PASS
