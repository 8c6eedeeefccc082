#!/usr/bin/env python3
# Runs a command on a fresh pty that is its stdin, stdout, stderr and controlling terminal (as an
# interactive shell would), plays the user's part, then reports how the terminal was left, as JSON.
# Used by tests/escape/terminal*.sh (not a test itself).
#   pty_run.py [--resize ROWS COLS] [--keys HEX...] [--tstp] [--term-cage] -- CMD...
# --resize: after the workload prints READY, the "window" is resized (as a terminal emulator does);
# --keys:   after READY (and the resize), these bytes are typed, one write each (03 = Ctrl-C);
# --tstp:   after READY, Ctrl-Z is typed; the shell sees cage stop and continues it, like `fg`;
# --term-cage: after READY, cage itself gets SIGTERM (as kill(1) or a CI runner would send).
# --bg:     after READY, Ctrl-Z is typed; the shell takes the terminal, sets a mode of its own (VERASE
#   ^H) and continues the job in the background, like `bg`.
# --ready-fifo PATH: READY is a write to this FIFO (made here) instead of output (for a workload that
#   stops the terminal's output).
# Reports: rc, output, inq (bytes waiting in the terminal's input queue: typed-in text), mode_same,
# size (rows, cols) after, size_start, flowing (a write to the terminal reaches the other side), stopped,
# nonblock (O_NONBLOCK on the open file description the shell's fds 0-2 share), mode_shell (--bg).
import argparse, fcntl, json, os, select, signal, struct, sys, termios, time

ap = argparse.ArgumentParser()
ap.add_argument("--resize", nargs=2, type=int)
ap.add_argument("--keys", nargs="*", default=[])
ap.add_argument("--tstp", action="store_true")
ap.add_argument("--term-cage", action="store_true")
ap.add_argument("--bg", action="store_true")
ap.add_argument("--ready-fifo")
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

fifo = None
if a.ready_fifo:
    os.mkfifo(a.ready_fifo, 0o666)
    os.chmod(a.ready_fifo, 0o666)
    fifo = os.open(a.ready_fifo, os.O_RDONLY | os.O_NONBLOCK)
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
mode_start = termios.tcgetattr(slave)
shell_mode = termios.tcgetattr(slave)
shell_mode[6][termios.VERASE] = b"\x08"
# A minimal job-control shell, as the caller's: the session leader on the pty runs CMD as the
# foreground job in its own process group (so Ctrl-Z can stop it: a session leader's own group would be
# orphaned), waits for it, and after a stop gives it the terminal back and continues it (`fg`).
events_r, events_w = os.pipe()
shell = os.fork()
if shell == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpid())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.closerange(3, 256)
        os.execvp(cmd[0], cmd)
    try:  # both sides set the group, as shells do; the job may have exec'd already (EACCES)
        os.setpgid(job, job)
    except OSError:
        pass
    os.tcsetpgrp(0, job)
    os.write(events_w, b"P%d\n" % job)
    while True:
        _, st = os.waitpid(job, os.WUNTRACED)
        if os.WIFSTOPPED(st):
            if a.bg:
                os.tcsetpgrp(0, os.getpgrp())
                termios.tcsetattr(0, termios.TCSANOW, shell_mode)
                os.write(events_w, b"S\n")
            else:
                os.write(events_w, b"S\n")
                os.tcsetpgrp(0, job)
            os.killpg(job, signal.SIGCONT)
            continue
        os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
os.close(events_w)
job = int(os.read(events_r, 32).split(b"\n")[0][1:])
os.set_blocking(events_r, False)

out = b""
def pump(timeout):
    global out
    while select.select([master], [], [], timeout)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            return
        if not chunk:
            return
        out += chunk
        timeout = 0

deadline = time.monotonic() + 60
status, stopped, acted = None, False, False
while status is None and time.monotonic() < deadline:
    pump(0.05)
    ready = b"READY" in out
    if fifo is not None:
        try:
            ready = os.read(fifo, 16) != b""
        except BlockingIOError:
            ready = False
    if not acted and ready:
        acted = True
        if a.resize:
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", a.resize[0], a.resize[1], 0, 0))
        if a.tstp or a.bg:
            os.write(master, b"\x1a")
            os.set_blocking(events_r, True)
            stopped = os.read(events_r, 8).startswith(b"S")  # the shell saw the job stop and continued it
        for k in a.keys:
            os.write(master, bytes.fromhex(k))
        if a.term_cage:
            os.kill(job, signal.SIGTERM)
    r, st = os.waitpid(shell, os.WNOHANG)
    if r == shell:
        status = st
if status is None:
    os.killpg(job, signal.SIGKILL)
    os.kill(shell, signal.SIGKILL)
    _, status = os.waitpid(shell, 0)
pump(0.1)
inq = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
rows, cols = struct.unpack("HHHH", fcntl.ioctl(slave, termios.TIOCGWINSZ, b"\0" * 8))[:2]
mode_now = termios.tcgetattr(slave)
mode_same = mode_now == mode_start
mode_shell = mode_now == shell_mode  # --bg: the shell's own mode, left alone
fl = fcntl.fcntl(slave, fcntl.F_GETFL)
nonblock = bool(fl & os.O_NONBLOCK)
fcntl.fcntl(slave, fcntl.F_SETFL, fl | os.O_NONBLOCK)
try:
    os.write(slave, b"PING-AFTER")
except BlockingIOError:
    pass
before = len(out)
pump(0.3)
flowing = b"PING-AFTER" in out[before:]
rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
print(json.dumps({"rc": rc, "output": out.decode("utf-8", "replace"), "inq": inq, "mode_same": mode_same,
                  "size": [rows, cols], "flowing": flowing, "stopped": stopped, "nonblock": nonblock,
                  "mode_shell": mode_shell}))
