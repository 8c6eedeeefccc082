#!/usr/bin/env bash
# Attack: change a Linux virtual console for after the run. A caller on /dev/ttyN keeps it as the
# workload's stdin and controlling terminal, which is all the kernel asks before it lets a process set
# the keyboard mode (KDSKBMODE: no keyboard), text/graphics mode (KDSETMODE: a blank screen), the
# colour map (PIO_CMAP), function-key strings (KDSKBSENT: typed into the shell when pressed later),
# switch VTs (VT_ACTIVATE) or paste the selection (TIOCLINUX). Each setter is tried with the value it
# already has (so a failing run changes nothing on this machine).
# Policy: default grants, on VT 63 (/dev/tty63) as stdin/stdout/stderr and controlling terminal;
# --seccomp default, relaxed and none. Expected: every setter EPERM (seccomp/floor.txt); twin: the
# readers (KDGETMODE, KDGKBMODE, GIO_CMAP, VT_GETSTATE) work.
# Needs root (the console devices are root's) and a kernel with virtual terminals: otherwise exit 77.
. "$(dirname "$0")/lib.bash"
require_sandbox
if ! is_root; then echo "skip: the console (/dev/tty63) is root's: run as root to test console ioctls" >&2; exit 77; fi
if ! "$py" -c 'import fcntl, os; fcntl.ioctl(os.open("/dev/tty63", os.O_RDWR | os.O_NOCTTY), 0x4B3B, b"\0" * 4)' 2>/dev/null; then
  echo "skip: no virtual terminal here (/dev/tty63 missing or not a VT)" >&2; exit 77
fi
console='import fcntl, struct
def call(cmd, arg):
    try:
        return fcntl.ioctl(0, cmd, arg)
    except OSError as e:
        return e.errno
mode = struct.unpack("i", call(0x4B3B, b"\0" * 4))[0]   # KDGETMODE
kb = struct.unpack("i", call(0x4B44, b"\0" * 4))[0]     # KDGKBMODE
cmap = call(0x4B70, b"\0" * 48)                         # GIO_CMAP
state = call(0x5603, b"\0" * 6)                         # VT_GETSTATE
active = struct.unpack("HHH", state)[0]
sent = call(0x4B48, bytes([11]) + b"\0" * 512)          # KDGKBSENT F12
print("readers ok" if all(isinstance(x, bytes) for x in (cmap, state, sent)) else "readers failed")
res = {"KDSETMODE": call(0x4B3A, mode), "KDSKBMODE": call(0x4B45, kb), "PIO_CMAP": call(0x4B71, cmap),
       "KDSKBSENT": call(0x4B49, sent), "VT_ACTIVATE": call(0x5606, active),
       "TIOCLINUX": call(0x541C, bytes([16]))}           # TIOCL_GETFGCONSOLE
print(" ".join("%s=%s" % (k, v if isinstance(v, int) else "ok") for k, v in sorted(res.items())))'
for prof in default relaxed none; do
  out=$("$py" - "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp "$prof" -- "$py" -c "$console" <<'PY'
import fcntl, os, subprocess, sys, termios
fd = os.open("/dev/tty63", os.O_RDWR | os.O_NOCTTY)
def ctty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 1)
p = subprocess.run(sys.argv[1:], stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=ctty)
print(p.stdout.decode().strip(), "rc=%d" % p.returncode)
PY
)
  want="KDSETMODE=1 KDSKBMODE=1 KDSKBSENT=1 PIO_CMAP=1 TIOCLINUX=1 VT_ACTIVATE=1"
  [[ "$out" == *"readers ok"*"$want rc=0"* ]] && pass "--seccomp $prof: console setters refused (EPERM), readers work" ||
    fail "--seccomp $prof on a console: $out (want readers ok, $want)"
done
finish
