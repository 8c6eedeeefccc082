#!/usr/bin/env python3
"""outer_filter.py NAME[,NAME...] -- CMD...: runs CMD under a seccomp filter that answers EPERM to
the named system calls, as a container engine's profile does (Docker's default refuses pidfd_getfd,
process_vm_readv and ptrace without CAP_SYS_PTRACE), so the fallbacks cage takes there are tested on
any host. Exit 77 (skip) on an architecture whose numbers are not listed here."""
import ctypes, os, platform, struct, sys

NUMBERS = {  # native numbers; pidfd_getfd is 438 on every architecture
    "x86_64": {"arch": 0xC000003E, "seccomp": 317, "pidfd_getfd": 438, "process_vm_readv": 310, "ptrace": 101},
    "aarch64": {"arch": 0xC00000B7, "seccomp": 277, "pidfd_getfd": 438, "process_vm_readv": 270, "ptrace": 117},
}
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
RET_ALLOW, RET_ERRNO_EPERM, RET_KILL = 0x7FFF0000, 0x00050001, 0x80000000


def ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: outer_filter.py NAME[,NAME...] -- CMD...")
    table = NUMBERS.get(platform.machine())
    if table is None:
        print(f"skip: no syscall numbers for {platform.machine()}", file=sys.stderr)
        sys.exit(77)
    nrs = [table[n] for n in sys.argv[1].split(",")]
    prog = [ins(BPF_LD_W_ABS, 0, 0, 4), ins(BPF_JEQ_K, 1, 0, table["arch"]), ins(BPF_RET_K, 0, 0, RET_KILL),
            ins(BPF_LD_W_ABS, 0, 0, 0)]
    for i, nr in enumerate(nrs):  # a match jumps to the EPERM return after the ALLOW
        prog.append(ins(BPF_JEQ_K, len(nrs) - i, 0, nr))
    prog += [ins(BPF_RET_K, 0, 0, RET_ALLOW), ins(BPF_RET_K, 0, 0, RET_ERRNO_EPERM)]
    buf = ctypes.create_string_buffer(b"".join(prog))
    fprog = struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        sys.exit(f"prctl: {os.strerror(ctypes.get_errno())}")
    if libc.syscall(table["seccomp"], 1, 0, fbuf) != 0:  # SECCOMP_SET_MODE_FILTER
        sys.exit(f"seccomp: {os.strerror(ctypes.get_errno())}")
    os.execvp(sys.argv[3], sys.argv[3:])


main()
