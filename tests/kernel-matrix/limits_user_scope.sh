#!/bin/bash
# --memory, --pids and --cpu for an unprivileged user on a cgroup v2 systemd host: cage asks the
# user's real systemd user manager for a transient scope (src/linux/systemd_scope.cc). Runs in a
# kernel-matrix guest booted with systemd (variant "systemd"), as root, and runs itself again as the
# test user inside that user's session (user-session.sh run):
#   sudo bash tests/kernel-matrix/run.sh --run tests/kernel-matrix/limits_user_scope.sh 6.12:none:systemd
# Proves: the plan says "delegated scope via the systemd user manager"; a 1 GiB allocation under
# --memory 100M ends oom_killed (its small twin completes); a fork storm stops at --pids 64; the
# scope carries memory.max, pids.max and cpu.max while the run lives and is gone after it, also
# after cage is killed with SIGKILL; a manager that refuses leaves the rlimit fallback, said so, and
# --strict-limits then refuses to run.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --as-user ]; then
  [ -d /run/systemd/system ] || { echo "skip: not booted with systemd"; exit 77; }
  exec bash "$here/user-session.sh" run env BUILD="${BUILD:?}" bash "$here/$(basename "$0")" --as-user
fi

CAGE=${BUILD:?}/cage
uid=$(id -u)
[ "$uid" -ne 0 ] || fail "must run as the test user"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
json() { python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(eval(sys.argv[2]))' "$1" "$2"; }
scopes() { find /sys/fs/cgroup -type d -name 'cage-[0-9]*.scope' 2>/dev/null; }
# The scope disappears once systemd has seen it empty: awaited (bounded), not slept for.
scopes_gone() {
  for _ in $(seq 100); do [ -z "$(scopes)" ] && return 0; sleep 0.1; done
  fail "scopes left behind: $(scopes); $(systemctl --user list-units --all 'cage-*' --no-legend)"
}
echo "cage runs as uid $uid in $(cut -d: -f3 /proc/self/cgroup) (not writable by this user)"

# The plan holds the decision, and --check asks the manager for a trial scope.
"$CAGE" --memory 100M --pids 64 --cpu 0.5 --dry-run --verbose -- true >"$work/plan" || fail "dry-run failed"
cat "$work/plan" | grep -A6 '^limits:'
grep -q '^limits: delegated scope via the systemd user manager' "$work/plan" || fail "plan: no user scope"
grep -q 'MemoryMax = 104857600' "$work/plan" && grep -q 'TasksMax = 65' "$work/plan" &&
  grep -q 'CPUQuotaPerSecUSec = 500000' "$work/plan" || fail "plan lacks the scope's properties"
"$CAGE" --check >"$work/check"; grep cgroup_limits "$work/check"
grep -q '^ok .*cgroup_limits: .*delegated scope via the systemd user manager.*trial scope was granted' "$work/check" ||
  fail "--check does not report the user scope"
scopes_gone

# Allowed twin: 10 MiB under --memory 100M completes, in the scope.
"$CAGE" --memory 100M --result "$work/small.json" -- python3 -c 'b = b"x" * (10 << 20); print(len(b))' >"$work/out" ||
  fail "10 MiB under --memory 100M failed"
[ "$(json "$work/small.json" 'd["class"]')" = completed ] || fail "small run not completed"
json "$work/small.json" 'd["limits"]["cgroup"]' | grep -q '/cage-[0-9]*\.scope$' || fail "small run not in a scope"
[ "$(json "$work/small.json" 'd["limits"]["not_enforced"]')" = "[]" ] || fail "limits not enforced in the scope"

# 1 GiB under --memory 100M: the kernel's OOM killer in the scope ends it.
"$CAGE" --memory 100M --result "$work/oom.json" -- python3 -c 'b = b"x" * (1 << 30)' 2>"$work/err"
rc=$?
cat "$work/oom.json"
[ "$(json "$work/oom.json" 'd["class"]')" = oom_killed ] || fail "1 GiB under --memory 100M not oom_killed"
[ "$rc" -eq 137 ] || fail "oom-killed run exited $rc, not 137"
[ "$(json "$work/oom.json" 'd["limits"]["oom_kills"] > 0')" = True ] || fail "no oom kill counted"
[ "$(json "$work/oom.json" 'd["memory"]["peak_bytes"] <= 100 << 20')" = True ] || fail "peak above the limit"
grep -q "not enforced" "$work/err" && fail "warned of an unenforced limit: $(cat "$work/err")"

# Fork storm: refused at --pids 64 and contained; the scope ends with it.
"$CAGE" --pids 64 --timeout 60 --result "$work/bomb.json" -- sh -c 'b() { b | b & }; b; sleep 3' >/dev/null 2>&1
[ "$(json "$work/bomb.json" 'd["limits"]["pids_refused"] > 0')" = True ] || fail "fork storm not refused at --pids"
[ "$(json "$work/bomb.json" 'd["class"]')" != timed_out ] || fail "fork storm ran into the timeout"
"$CAGE" --pids 64 --result "$work/many.json" -- sh -c 'for i in $(seq 200); do sleep 30 & done; wait' 2>/dev/null
[ "$(json "$work/many.json" 'd["class"]')" = pids_exhausted ] || fail "200 sleeps under --pids 64 not pids_exhausted: $(cat "$work/many.json")"
scopes_gone

# While a run lives, its scope holds the sandbox with the limits in the cgroup files; systemd
# created it delegated. SIGKILL to cage: the sandbox dies with it and systemd removes the scope.
"$CAGE" --memory 100M --pids 64 --cpu 0.5 -- sleep 300 &
cage_pid=$!
for _ in $(seq 100); do [ -n "$(scopes)" ] && [ -n "$(cat "$(scopes)/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.1; done
s=$(scopes)
[ "$s" = "$(find /sys/fs/cgroup -path "*/user@$uid.service/*" -type d -name "cage-$cage_pid.scope")" ] ||
  fail "no cage-$cage_pid.scope under user@$uid.service: '$s'"
[ "$(cat "$s/memory.max")" = 104857600 ] || fail "memory.max is $(cat "$s/memory.max")"
[ "$(cat "$s/pids.max")" = 65 ] || fail "pids.max is $(cat "$s/pids.max")"
[ "$(cat "$s/cpu.max")" = "50000 100000" ] || fail "cpu.max is $(cat "$s/cpu.max")"
[ "$(systemctl --user show -p Delegate --value "cage-$cage_pid.scope")" = yes ] || fail "scope not delegated"
grep -qx "$cage_pid" "$s/cgroup.procs" && fail "the supervisor itself is in the scope"
kill -9 "$cage_pid"; wait "$cage_pid" 2>/dev/null
scopes_gone
pgrep -u "$uid" -x sleep >/dev/null && fail "the killed run's workload survives"

# A user manager that refuses (here: a socket that closes at once, owned by this user): the run
# keeps the rlimit fallback and says so; --strict-limits refuses to run instead.
mkdir -p "$work/rt/systemd"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
while True: c,_=s.accept(); c.close()' "$work/rt/systemd/private" &
liar=$!
for _ in $(seq 50); do [ -S "$work/rt/systemd/private" ] && break; sleep 0.1; done
XDG_RUNTIME_DIR=$work/rt "$CAGE" --memory 100M --result "$work/refused.json" -- true 2>"$work/err" ||
  fail "a refused scope stopped the run: $(cat "$work/err")"
grep -q "cage: warning: --memory 100M is not enforced by a cgroup: the systemd user manager refused the transient scope (" "$work/err" ||
  fail "no warning for the refused scope: $(cat "$work/err")"
[ "$(json "$work/refused.json" 'd["limits"]["not_enforced"][0]["fallback"]')" = RLIMIT_AS ] || fail "result hides the fallback"
if XDG_RUNTIME_DIR=$work/rt "$CAGE" --memory 100M --strict-limits -- true 2>"$work/err"; then
  fail "--strict-limits ran without the scope"
fi
grep -q "spawn_sandbox_unavailable" "$work/err" || fail "strict refusal not structured: $(cat "$work/err")"
kill "$liar"
scopes_gone
echo PASS
