#!/usr/bin/env bash
# Attack: outlive the run. A setsid'd daemon that keeps appending to a file in --rw, left behind by a
# workload that exits at once, by one that ignores SIGTERM under --timeout (so the run ends by cage's
# last step, not by the workload), and when cage itself gets SIGTERM or SIGKILL; a double-forking
# storm (a tree of orphans) with endless chains of orphans (each generation forks the next and exits),
# after a normal exit and after --timeout.
# Policy: --rw rw, --ro prog. Expected: when cage returns, no process of the run exists (pid namespace:
# its init's death kills all; Landlock-only: cage's init is a subreaper that stops and kills its whole
# tree and waits for it before it exits; after cage's SIGKILL, once its init is gone) and the daemon's
# file no longer grows.
# Found (Landlock-only): after --timeout the daemon kept writing into --rw.
# Twin: the daemon did run and write inside the sandbox before the end.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw" "$work/prog" && chmod 777 "$work/rw"
marker="cage-outlive-$$-$RANDOM"
# Survivors are ended here (only processes carrying this run's marker), whatever the verdict.
at_exit "pkill -KILL -f '$marker'"
cat >"$work/prog/daemon.sh" <<'EOF'
# $1: marker, $2: file. Starts a setsid'd daemon appending to $2, waits until it has written.
setsid bash -c 'exec -a "$0" bash -c "while :; do echo x >>\"\$1\"; sleep 0.05; done" "$0" "$1"' "$1" "$2" &
until [ -s "$2" ]; do sleep 0.01; done
EOF
cat >"$work/prog/storm.py" <<'EOF'
import os, sys, time
marker = sys.argv[1]
def tree(depth):
    # each process starts two and leaves at once: every one of them is an orphan
    while depth > 0:
        for _ in range(2):
            if os.fork() == 0:
                depth -= 1
                break
        else:
            os._exit(0)
    os.execv("/bin/sleep", [marker, "1000"])
def chain():
    while True:
        if os.fork() != 0:
            os._exit(0)
        time.sleep(0.005)
if os.fork() == 0:
    os.setsid()
    tree(8)
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        sys.argv[0] = marker
        chain()
time.sleep(0.1)
EOF
survivors() { pgrep -f "$marker" | wc -l; }
check_gone() {  # $1: what
  local n
  n=$(survivors)
  if [ "$n" -eq 0 ]; then pass "$1: nothing of the run is left"; else
    fail "$1: $n process(es) of the run outlive cage: $(pgrep -af "$marker" | head -3)"
    pkill -KILL -f "$marker"
  fi
}
grows() {  # $1: file; fails if it grew after cage returned (judged once no writer can exist)
  local before after
  before=$(stat -c %s "$1")
  sleep 0.3
  after=$(stat -c %s "$1")
  [ "$before" = "$after" ] && pass "$1 no longer grows" || fail "$1 still grows after cage returned ($before -> $after)"
}

cage_run --ro "$work/prog" --rw "$work/rw" -- bash "$work/prog/daemon.sh" "$marker" "$work/rw/a"
expect_rc 0 "setsid'd daemon, workload exits"
[ -s "$work/rw/a" ] && pass "twin: the daemon wrote inside the sandbox" || fail "twin: the daemon never wrote"
grows "$work/rw/a"
check_gone "setsid'd daemon after a normal exit"

# The workload waits for the daemon's first write (an event, not a race with the clock), then
# ignores SIGTERM until --timeout's SIGKILL; 5 s (times CAGE_TEST_TIME_SCALE, 4 under emulation,
# where Debian's 6.1 guest had not started the daemon within 5 s) leave time to start the daemon.
cage_run --timeout $((5 * ${CAGE_TEST_TIME_SCALE:-1})) --ro "$work/prog" --rw "$work/rw" -- bash -c \
  'trap "" TERM; bash "$1" "$2" "$3"; until [ -s "$3" ]; do sleep 0.05; done; while :; do sleep 1; done' _ "$work/prog/daemon.sh" "$marker" "$work/rw/b"
expect_rc 124 "setsid'd daemon, workload ignores SIGTERM, --timeout"
[ -s "$work/rw/b" ] && pass "twin: the daemon wrote inside the sandbox" || fail "twin: the daemon never wrote"
grows "$work/rw/b"
check_gone "setsid'd daemon after --timeout"

# cage itself ended by a signal: SIGTERM reaches the workload (which exits), SIGKILL only cage (its
# init, left behind, learns of it by its parent-death signal and ends the tree on its own).
for sig in TERM KILL; do
  f="$work/rw/$sig"
  "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$work/prog" --rw "$work/rw" -- bash -c \
    'bash "$1" "$2" "$3"; while :; do sleep 1; done' _ "$work/prog/daemon.sh" "$marker" "$f" </dev/null >/dev/null 2>&1 &
  cage_pid=$!
  until [ -s "$f" ] || ! kill -0 "$cage_pid" 2>/dev/null; do sleep 0.01; done
  kill -"$sig" "$cage_pid"
  { wait "$cage_pid"; } 2>/dev/null
  [ -s "$f" ] && pass "twin: the daemon wrote inside the sandbox before SIG$sig" || fail "twin: the daemon never wrote"
  if [ "$sig" = KILL ]; then  # cage is gone at once; its init ends the tree after it: await that
    for _ in $(seq 100); do [ "$(survivors)" -eq 0 ] && break; sleep 0.1; done
  fi
  grows "$f"
  check_gone "setsid'd daemon after cage got SIG$sig"
done

cage_run --ro "$work/prog" -- "$py" "$work/prog/storm.py" "$marker"
expect_rc 0 "fork storm, workload exits"
check_gone "fork storm after a normal exit"

cage_run --timeout 1 --ro "$work/prog" -- bash -c 'trap "" TERM; "$1" "$2" "$3"; while :; do sleep 1; done' _ \
  "$py" "$work/prog/storm.py" "$marker"
expect_rc 124 "fork storm, workload ignores SIGTERM, --timeout"
check_gone "fork storm after --timeout"
finish
