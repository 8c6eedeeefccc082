#!/usr/bin/env python3
# Under --seccomp relaxed ptrace is allowed: can a tracer make its tracee run a syscall the filter
# refuses, by changing the syscall number after the filter let the original one through? The tracee
# asks for getpid with TIOCSTI's arguments; at syscall entry the tracer turns it into ioctl. Since
# Linux 4.8 the kernel runs the filter again after the tracer's change (kernel/seccomp.c), so ioctl
# TIOCSTI must still fail with EPERM. x86_64 only (the register layout); prints the tracee's result:
# "swapped -1 errno N" or "swapped 0" (the text was typed in).
import ctypes, os, signal, sys, termios
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_TRACEME, PTRACE_GETREGS, PTRACE_SETREGS, PTRACE_SYSCALL = 0, 12, 13, 24
SYS_getpid, SYS_ioctl = 39, 16
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long
libc.syscall.argtypes = [ctypes.c_long] * 4
text = ctypes.create_string_buffer(b"X")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    libc.ptrace(PTRACE_TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    rc = libc.syscall(SYS_getpid, 0, termios.TIOCSTI, ctypes.addressof(text))
    os.write(w, ("swapped %d errno %d" % (rc, ctypes.get_errno()) if rc < 0 else "swapped %d" % rc).encode())
    os._exit(0)
os.close(w)
regs = (ctypes.c_ulong * 27)()
os.waitpid(pid, 0)  # the SIGSTOP
while True:
    libc.ptrace(PTRACE_SYSCALL, pid, None, None)
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st):
        break
    libc.ptrace(PTRACE_GETREGS, pid, None, regs)
    # regs[15] is orig_rax (the syscall number), regs[14] rdi, regs[13] rsi
    if regs[15] == SYS_getpid and regs[13] == termios.TIOCSTI:
        regs[15] = SYS_ioctl
        libc.ptrace(PTRACE_SETREGS, pid, None, regs)
        libc.ptrace(PTRACE_SYSCALL, pid, None, None)  # run it, stop at exit
        os.waitpid(pid, 0)
        libc.ptrace(7, pid, None, None)  # PTRACE_CONT
        os.waitpid(pid, 0)
        break
print(os.read(r, 100).decode())
