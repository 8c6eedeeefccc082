#!/usr/bin/env bash
# Attack: type a command into the caller's shell. The workload keeps the caller's terminal and
# session, so TIOCSTI (or a console's TIOCLINUX selection paste) puts "echo INJECTED" in the terminal's
# input queue and the shell runs it once cage exits. Tried under --seccomp default, relaxed (which the
# man page recommends for gdb and strace) and none, and under relaxed through ptrace: a tracer turns
# its tracee's harmless getpid into ioctl(TIOCSTI) after the filter passed the getpid.
# Policy: default grants, on a fresh pty that is the run's controlling terminal (as in a shell).
# Expected: EPERM under every profile (seccomp/floor.txt) and nothing in the input queue; the ptrace
# swap fails too (the kernel re-runs the filter after a tracer's change, Linux 4.8+).
# Twins: tty(1) names the terminal, a window resize reaches the workload (SIGWINCH and the new size),
# Ctrl-C interrupts it, Ctrl-Z stops it and `fg` (SIGCONT) lets it read the next line typed.
. "$(dirname "$0")/lib.bash"
require_sandbox
cp "$escape_dir/ptrace_swap.py" "$work/" && chmod 644 "$work/ptrace_swap.py"
inject='import fcntl, termios
print("READY", flush=True)
def try_(cmd, arg):
    try:
        fcntl.ioctl(0, cmd, arg); return "ok"
    except OSError as e:
        return str(e.errno)
sti = set(try_(termios.TIOCSTI, bytes([c])) for c in b"echo INJECTED\n")
paste = try_(0x541C, bytes([3]))  # TIOCLINUX, TIOCL_PASTESEL
print("sti", ",".join(sorted(sti)), "tioclinux", paste)'
legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)
pty_run -- "$py" -c "$inject"
echo "note: without cage (legacy_tiocsti=$legacy): $(jget output | grep sti), input queue $(jget inq) bytes"
for prof in default relaxed none; do
  pty_run -- "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp "$prof" -- "$py" -c "$inject"
  if [ "$(jget rc)" = 0 ] && [[ "$(jget output)" == *"sti 1 tioclinux 1"* ]] && [ "$(jget inq)" = 0 ]; then
    pass "--seccomp $prof: TIOCSTI and TIOCLINUX refused (EPERM), input queue empty"
  else
    fail "--seccomp $prof: terminal injection: $res"
  fi
done
if [ "$(uname -m)" = x86_64 ]; then
  pty_run -- "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp relaxed --ro "$work" -- sh -c "echo READY; $py $work/ptrace_swap.py"
  [[ "$(jget output)" == *"swapped -1 errno 1"* ]] && [ "$(jget inq)" = 0 ] &&
    pass "--seccomp relaxed: a tracer's getpid -> ioctl(TIOCSTI) swap is filtered again (EPERM)" ||
    fail "ptrace swap to TIOCSTI under relaxed: $res"
  pty_run -- sh -c "echo READY; $py $work/ptrace_swap.py"
  echo "note: the same swap without cage: $(jget output | grep swapped)"
fi
# Twins: the terminal still works as the caller's.
pty_run -- "$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'echo READY; tty'
[ "$(jget rc)" = 0 ] && [[ "$(jget output)" == *"/dev/"* ]] && pass "twin: tty names the terminal" || fail "tty: $res"
winch='import fcntl, signal, struct, termios
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
print("READY", flush=True)
signal.sigwaitinfo([signal.SIGWINCH])
print("SIZE %d %d" % struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))[:2])'
for prof in default relaxed none; do
  pty_run --resize 33 99 -- "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp "$prof" -- "$py" -c "$winch"
  [[ "$(jget output)" == *"SIZE 33 99"* ]] && pass "twin --seccomp $prof: a resize reaches the workload" || fail "resize: $res"
done
pty_run --keys 03 -- "$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'echo READY; exec sleep 600'
[ "$(jget rc)" = 130 ] && pass "twin: Ctrl-C interrupts the workload (exit 130)" || fail "Ctrl-C: $res"
pty_run --tstp --keys 68690a -- "$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'echo READY; read x; echo "GOT $x"'
[ "$(jget stopped)" = True ] && [ "$(jget rc)" = 0 ] && [[ "$(jget output)" == *"GOT hi"* ]] &&
  pass "twin: Ctrl-Z stops the run, SIGCONT resumes it, it reads the next line" || fail "Ctrl-Z: $res"
finish
