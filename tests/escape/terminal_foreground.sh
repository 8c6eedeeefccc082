#!/usr/bin/env bash
# Attack: leave the caller's terminal broken in ways the restore missed. The workload shares the
# caller's terminal (and, Landlock-only, its pid space): it turns echo off and sets O_NONBLOCK on fds
# 0-2 (the open file description the caller's shell reads from: its next read fails with EAGAIN and
# an interactive bash exits); and, to make cage believe the user's shell took the terminal back (cage
# then skipped its restore), it hands the terminal to the shell's process group (tcsetpgrp) before it
# exits.
# Policy: default grants, on a fresh pty that is the run's controlling terminal (the caller's shell
# runs the run as its foreground job). Expected: when cage returns the mode and the file status flags
# are as before the run. Found: O_NONBLOCK stayed set (both mechanisms); after the hand-over
# (Landlock-only: a pid namespace does not see the shell's group) echo stayed off as well.
# Twin: inside the run the changes took effect, and the hand-over worked (Landlock-only).
. "$(dirname "$0")/lib.bash"
require_sandbox
spoil='import fcntl, os, signal, sys, termios
m = termios.tcgetattr(0)
m[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, m)
for fd in (0, 1, 2):
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
gave = "no"
if sys.argv[1] == "handover":
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(0, os.getsid(0))
        gave = "yes" if os.tcgetpgrp(0) == os.getsid(0) else "no"
    except OSError as e:
        gave = e.strerror
print("INSIDE echo=%d nonblock=%d gave=%s" % (bool(termios.tcgetattr(0)[3] & termios.ECHO),
      bool(fcntl.fcntl(0, fcntl.F_GETFL) & os.O_NONBLOCK), gave), flush=True)'
check() {  # WHAT
  if [ "$(jget rc)" = 0 ] && [ "$(jget mode_same)" = True ] && [ "$(jget nonblock)" = False ] &&
     [ "$(jget flowing)" = True ]; then
    pass "$1: mode and O_NONBLOCK as before the run"
  else
    fail "$1: terminal left changed (want rc 0, mode_same, nonblock False): $res"
  fi
}
pty_run -- "$CAGE" ${mech[@]+"${mech[@]}"} -- "$py" -c "$spoil" stay
check "echo off and O_NONBLOCK, then exit"
[[ "$(jget output)" == *"INSIDE echo=0 nonblock=1 gave=no"* ]] && pass "twin: the changes took effect inside" ||
  fail "twin: changes not seen inside: $res"
pty_run -- "$CAGE" ${mech[@]+"${mech[@]}"} -- "$py" -c "$spoil" handover
check "echo off and O_NONBLOCK, terminal handed to the shell's group, then exit"
if landlock_only; then
  [[ "$(jget output)" == *"INSIDE echo=0 nonblock=1 gave=yes"* ]] && pass "twin: the shell's group got the terminal" ||
    fail "twin: the hand-over did not happen: $res"
else
  [[ "$(jget output)" == *"INSIDE echo=0 nonblock=1 gave="* ]] && pass "the hand-over ran (the shell's group is not in view)" ||
    fail "the workload did not run: $res"
fi
# Twin: the user's own job control. Ctrl-Z, then the shell takes the terminal, sets a mode of its own
# and continues cage in the background (`bg`): cage leaves the shell's terminal alone when it ends.
bg='import signal, sys, termios
m = termios.tcgetattr(0)
m[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, m)
signal.signal(signal.SIGCONT, lambda *_: sys.exit(0))
print("READY", flush=True)
while True:
    signal.pause()'
pty_run --bg -- "$CAGE" ${mech[@]+"${mech[@]}"} -- "$py" -c "$bg"
if [ "$(jget rc)" = 0 ] && [ "$(jget stopped)" = True ] && [ "$(jget mode_shell)" = True ]; then
  pass "twin: cage put in the background by the user leaves the shell's terminal mode alone"
else
  fail "twin: after bg the shell's mode was changed, or the job did not stop and end: $res"
fi
finish
