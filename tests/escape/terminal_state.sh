#!/usr/bin/env bash
# Attack: leave the caller's terminal broken after the run. The workload keeps the caller's terminal,
# so it turns echo off and makes Ctrl-A the interrupt character (termios), shrinks the window to 3x5
# (TIOCSWINSZ) and stops all output (TCOOFF: the terminal looks hung), then the run ends: normally, by
# a signal (SIGKILL), by --timeout, or by a SIGTERM sent to cage itself.
# Policy: default grants plus --rw for the readiness FIFO, on a fresh pty that is the run's controlling
# terminal (the caller's shell runs the run as its foreground job).
# Expected: however the run ended, cage puts back the mode, the window size and the output flow it
# found (the host side reads them after cage exited); twin: inside the run the changes took effect.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw" && chmod 777 "$work/rw"
spoil='import fcntl, os, signal, struct, sys, termios
m = termios.tcgetattr(0)
m[3] &= ~termios.ECHO
m[6][termios.VINTR] = b"\x01"
termios.tcsetattr(0, termios.TCSANOW, m)
fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 3, 5, 0, 0))
now = termios.tcgetattr(0)
print("INSIDE echo=%d intr=%r size=%s" % (bool(now[3] & termios.ECHO), now[6][termios.VINTR],
      struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))[:2]), flush=True)
termios.tcdrain(1)
termios.tcflow(1, termios.TCOOFF)
with open(sys.argv[1], "w") as f:
    f.write("R")
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[2] == "wait":
    signal.pause()'
check() {  # WHAT WANT_RC
  local what=$1 want=$2
  if [ "$(jget rc)" = "$want" ] && [ "$(jget mode_same)" = True ] && [ "$(jget size)" = "[24, 80]" ] &&
     [ "$(jget flowing)" = True ]; then
    pass "$what: exit $want; mode, window size and output flow as before the run"
  else
    fail "$what: terminal left changed or wrong exit (want $want): $res"
  fi
}
run() {  # HOW [cage args...]
  local how=$1; shift
  rm -f "$work/rw/ready"
  pty_run --ready-fifo "$work/rw/ready" ${extra[@]+"${extra[@]}"} -- "$CAGE" ${mech[@]+"${mech[@]}"} --rw "$work/rw" "$@" -- \
    "$py" -c "$spoil" "$work/rw/ready" "$how"
}
extra=()
run exit
check "normal exit" 0
[[ "$(jget output)" == *"INSIDE echo=0 intr=b'\\x01' size=(3, 5)"* ]] && pass "twin: the changes took effect inside" ||
  fail "twin: changes not seen inside: $res"
run kill
check "workload killed (SIGKILL)" 137
run wait --timeout 2
check "--timeout" 124
extra=(--term-cage)
run wait
check "SIGTERM to cage" 143
finish
