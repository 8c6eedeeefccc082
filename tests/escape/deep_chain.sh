#!/usr/bin/env bash
# Attack: outlive the run from below the sweep's reach. The workload starts a chain of 300 processes,
# each the child of the one before, whose bottom keeps forking; at the bottom a watcher waits on a
# pipe whose only writer is the chain's top, and once the top dies (the end of the run began) it
# writes into --rw: a process that still runs then could as well fork away or keep writing. Then the
# workload exits; again with a workload that stays until --timeout's kill ends the run.
# Policy: --ro prog, --rw rw. Expected: when cage returns nothing of the run exists, and the watcher
# never ran once the end began (cage's init stops the whole tree before it kills any of it; a pid
# namespace's end kills all at once). Found (Landlock-only): the walk stopped at depth 128, so the
# levels below ran on while those above were killed: the watcher saw its writer die and wrote.
# Found (pid namespace, 1 run in ~40 under Docker): kill(-1, SIGKILL) and the kernel's end of a pid
# namespace signal one process after the other, so the watcher could see its writer die and write.
# Twin: the same watcher under a 1-deep chain whose top is killed during the run does write.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw" "$work/prog" && chmod 777 "$work/rw"
marker="cage-deep-chain-$$-$RANDOM"
fifo="$work/rw/fifo" woke="$work/rw/woke"
mkfifo -m 666 "$fifo"
survivors() { pgrep -f "$marker"; }
# What the run started is ended here, by pid (only processes carrying this run's marker).
at_exit 'for p in $(survivors); do kill -KILL "$p"; done'
cat >"$work/prog/holder.py" <<'EOF2'
# argv: marker, name, depth, fifo, file. Holds the only write end of a pipe whose read end goes to a
# chain of DEPTH processes (chain.sh), until killed.
import os, signal, sys
r, w = os.pipe()
os.set_inheritable(r, True)
if os.fork() == 0:
    os.execv("/bin/bash", ["bash", os.path.dirname(sys.argv[0]) + "/chain.sh", sys.argv[1], sys.argv[2],
                           sys.argv[3], str(r), sys.argv[4], sys.argv[5]])
os.close(r)
while True:
    signal.pause()
EOF2
cat >"$work/prog/chain.sh" <<'EOF2'
# $1: marker, $2: name, $3: depth, $4: the pipe's read end, $5: fifo, $6: file.
level() {
  if [ "$1" -lt "$3" ]; then
    (level $(($1 + 1)) "$2" "$3")
  else
    # The watcher: EOF once the pipe's writer is gone, then it records that it ran.
    (read -r -u "$fd" _; echo "$2" >>"$file"; printf t >"$fifo") &
    printf l >"$fifo"
    while :; do sleep 0.05; done  # the bottom keeps forking
  fi
}
fd=$4 fifo=$5 file=$6
level 0 "$2" "$3"
EOF2
cat >"$work/prog/top.sh" <<'EOF2'
# $1: marker, $2: fifo, $3: file, $4: exit|stay. Starts the twin and the deep chain, then once both
# bottoms run exits, or (stay) ignores SIGTERM and waits for --timeout's kill.
exec 3<>"$2"
/usr/bin/python3 "${0%/*}/holder.py" "$1" twin 1 "$2" "$3" &
twin=$!
/usr/bin/python3 "${0%/*}/holder.py" "$1" deep 300 "$2" "$3" &
head -c 2 <&3 >/dev/null  # both bottoms run
kill -KILL "$twin"
head -c 1 <&3 >/dev/null  # the twin's watcher ran
[ "$4" = exit ] && exit 0
trap '' TERM
while :; do sleep 1; done
EOF2
# $1: exit|stay, $2: the exit status wanted, $3: how the run ends; further words: cage's options.
chain_run() {
  local mode=$1 want=$2 how=$3
  shift 3
  rm -f "$woke"
  rc=0
  timeout -k 5 300 "$CAGE" ${mech[@]+"${mech[@]}"} "$@" --ro "$work/prog" --rw "$work/rw" -- \
    bash "$work/prog/top.sh" "$marker" "$fifo" "$woke" "$mode" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out") err=$(cat "$work/.err")
  expect_rc "$want" "a 300-deep chain whose bottom keeps forking, $how"
  grep -qx twin "$woke" 2>/dev/null && pass "twin: a watcher whose writer was killed during the run ran ($how)" ||
    fail "twin: the watcher did not run ($how)"
  grep -qx deep "$woke" 2>/dev/null && fail "the watcher 300 levels down ran after the end of the run began ($how)" ||
    pass "the watcher 300 levels down never ran once the end began ($how)"
  local n
  n=$(survivors | wc -l)
  [ "$n" -eq 0 ] && pass "nothing of the run is left when cage returns ($how)" ||
    fail "$n process(es) of the run outlive cage ($how): $(pgrep -af "$marker" | head -3)"
}
start=$(date +%s%N)
chain_run exit 0 "workload exits"
# The supervisor's end: SIGTERM at the deadline (ignored), its kill 5 s later. The deadline must fall
# after the chain is built, which takes ~2 s here and ~20 s on a kernel under QEMU without KVM: three
# times what the first run took.
took=$((($(date +%s%N) - start) / 1000000))
chain_run stay 124 "--timeout's kill" --timeout "$((took * 3 + 1000))ms"
finish
