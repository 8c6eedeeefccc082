#!/usr/bin/env bash
# TIOCSTI for real: a program given the user's terminal pushes "echo INJECTED" into its input queue,
# which the shell would run once the sandbox exits. Shown to work without cage (where the kernel still
# allows it), then shown to fail inside cage under a pty that is the caller's controlling terminal.
# Then TIOCSETD (switching the caller's terminal to another line discipline) and TIOCEXCL, with both
# mechanisms.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/seccomp_lib.bash"
. "$(dirname "$0")/../escape/mechanism.bash"
require_sandbox default
# Both mechanisms where the Landlock-only one starts (Landlock ABI 6).
landlock=("--mechanism landlock --allow-degraded pid")
landlock_mechanism ||
  { landlock=(); echo "note: the Landlock-only mechanism does not start on this kernel: namespaces only"; }

# pty_run CMD...: runs CMD with a fresh pty as stdin and controlling terminal; prints its exit
# status, then "INJECTED" if the injected text came back through the terminal's input queue.
pty_run() {
  python3 - "$@" <<'PY'
import fcntl, os, select, subprocess, sys, termios
master, slave = os.openpty()
def ctty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     preexec_fn=ctty, close_fds=True)
rc = p.wait()
os.close(slave)
seen = b""
while select.select([master], [], [], 0.3)[0]:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
print(rc if rc >= 0 else 128 - rc)
if b"INJECTED" in seen:
    print("INJECTED")
PY
}

text=$'echo INJECTED\n'
legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)
out=$(pty_run "$CAGE_PROBE" tiocsti "$text")
if [ "$legacy" = 1 ] || [ "$(id -u)" -eq 0 ]; then
  # Without cage the trick works (this kernel still has legacy TIOCSTI): the test means something.
  [ "$(echo "$out" | head -1)" = 0 ] && echo "$out" | grep -q INJECTED ||
    echo "note: TIOCSTI did not work even without cage ($out); the check below still runs" >&2
else
  echo "note: dev.tty.legacy_tiocsti=0: the kernel refuses TIOCSTI by itself; checking cage anyway" >&2
fi

out=$(pty_run "$CAGE" --ro "$probe_dir" -- "$CAGE_PROBE" tiocsti "$text")
status=$(echo "$out" | head -1)
[ "$status" != 0 ] || fail "TIOCSTI inside cage succeeded"
echo "$out" | grep -q INJECTED && fail "injected text reached the terminal's input queue"
[ "$status" = 1 ] || fail "TIOCSTI inside cage: exit $status, want 1 (EPERM)"

# TIOCSETD: a workload switched the caller's terminal to another line discipline, which outlives the
# run (found: N_NULL left the caller's shell writing into nothing after cage exited) and loads the
# discipline's module on demand (dev.tty.ldisc_autoload; n_hdlc and n_gsm had exploitable bugs).
# Both mechanisms; the terminal's discipline is read back after cage exits. Twin: without cage the
# switch works when the kernel has N_NULL (27), so the check means something there.
ldisc_run() {
  python3 - "$@" <<'PY'
import fcntl, os, struct, subprocess, sys, termios
master, slave = os.openpty()
def ctty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.run(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                   preexec_fn=ctty, close_fds=True)
ld = struct.unpack("i", fcntl.ioctl(slave, termios.TIOCGETD, b"\0\0\0\0"))[0]
print(p.stdout.decode().strip(), "after:", ld)
PY
}
setd='import fcntl, struct, termios
try:
    fcntl.ioctl(0, termios.TIOCSETD, struct.pack("i", 27)); print("set")
except OSError as e:
    print("errno", e.errno)'
twin=$(ldisc_run python3 -c "$setd")
echo "note: TIOCSETD N_NULL without cage: $twin"
for m in "" "${landlock[@]}"; do
  out=$(ldisc_run "$CAGE" $m --ro /usr -- /usr/bin/python3 -c "$setd")
  [ "$out" = "errno 1 after: 0" ] && echo "ok: TIOCSETD refused (EPERM) ${m:-with namespaces}, discipline still N_TTY" ||
    fail "TIOCSETD inside cage ${m:-with namespaces}: $out (want 'errno 1 after: 0')"
done
# TIOCEXCL: exclusive mode on the caller's terminal outlived the run (found: every later open of the
# terminal by name, such as a /dev/tty password prompt, failed with EBUSY). Read back after cage exits.
excl_run() {
  python3 - "$@" <<'PY'
import fcntl, os, subprocess, sys, termios
master, slave = os.openpty()
def ctty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.run(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                   preexec_fn=ctty, close_fds=True)
try:
    os.close(os.open(os.ttyname(slave), os.O_RDWR | os.O_NOCTTY))
    after = "open ok"
except OSError as e:
    after = "open errno %d" % e.errno
print(p.stdout.decode().strip(), "after:", after)
PY
}
setx='import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCEXCL); print("set")
except OSError as e:
    print("errno", e.errno)'
if [ "$(id -u)" -ne 0 ]; then  # root opens an exclusive terminal anyway: only the user sees the effect
  echo "note: TIOCEXCL without cage: $(excl_run python3 -c "$setx")"
  for m in "" "${landlock[@]}"; do
    out=$(excl_run "$CAGE" $m --ro /usr -- /usr/bin/python3 -c "$setx")
    [ "$out" = "errno 1 after: open ok" ] && echo "ok: TIOCEXCL refused (EPERM) ${m:-with namespaces}, terminal still opens" ||
      fail "TIOCEXCL inside cage ${m:-with namespaces}: $out (want 'errno 1 after: open ok')"
  done
fi
finish
