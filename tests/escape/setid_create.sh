#!/usr/bin/env bash
# Attack: plant a set-id program on the host by creating it set-id, not by chmod: open(O_CREAT, 06755),
# openat, creat, an O_TMPFILE linked in, mknod/mknodat of a regular file, openat2 (its mode sits in a
# struct seccomp cannot read). Run by a root caller the file is a setuid-root program on the host (a
# later root `cp` over it kept the bits: a working setuid-root binary).
# Policy: --rw rw, --seccomp default, relaxed and none. Expected: every creation with S_ISUID or
# S_ISGID fails with EPERM, openat2 with ENOSYS (callers fall back to openat); no file in rw has either
# bit. Twins: open(O_CREAT, 0755), creat(0644), mknod of a plain regular file and mkdir(02755) work.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw"
attack='import ctypes, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
d = sys.argv[1]
os.chdir(d)
def t(name, f):
    try:
        f(); return "%s=ok" % name
    except OSError as e:
        return "%s=%d" % (name, e.errno)
def c_call(fn, *args):
    if fn(*args) < 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
def tmpfile():
    fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o4755)
    os.link("/proc/self/fd/%d" % fd, d + "/tmp-linked", follow_symlinks=True)
def openat2():
    how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o6755, 0)
    c_call(libc.syscall, ctypes.c_long(437), ctypes.c_long(-100), ctypes.c_char_p(b"o2"), how, ctypes.c_long(24))
dfd = os.open(d, os.O_RDONLY)
r = [t("open", lambda: os.open(d + "/open", os.O_CREAT | os.O_WRONLY, 0o6755)),
     t("openat", lambda: os.open("openat", os.O_CREAT | os.O_WRONLY, 0o4755, dir_fd=dfd)),
     t("creat", lambda: c_call(libc.creat, b"creat", 0o2755)),
     t("tmpfile", tmpfile),
     t("mknod", lambda: os.mknod("mknod", stat.S_IFREG | 0o4755)),
     t("mknodat", lambda: os.mknod("mknodat", stat.S_IFREG | 0o2755, dir_fd=dfd)),
     t("openat2", openat2)]
print(" ".join(r))
tw = [t("open755", lambda: os.open("plain", os.O_CREAT | os.O_WRONLY, 0o755)),
      t("creat644", lambda: c_call(libc.creat, b"plain2", 0o644)),
      t("mknod644", lambda: os.mknod("plain3", stat.S_IFREG | 0o644)),
      t("mkdir2755", lambda: os.mkdir("dir", 0o2755))]
print("twins", " ".join(tw))'
for prof in default relaxed none; do
  rm -rf "$work/rw"/*
  cage_run --seccomp "$prof" --rw "$work/rw" -- "$py" -c "$attack" "$work/rw"
  want="open=1 openat=1 creat=1 tmpfile=1 mknod=1 mknodat=1 openat2=38"
  [[ "$out" == *"$want"* ]] && pass "--seccomp $prof: set-id creation refused ($want)" ||
    fail "--seccomp $prof: set-id creation: exit $rc, $out $err (want $want)"
  planted=$(find "$work/rw" -perm /6000 -type f)
  [ -z "$planted" ] && pass "--seccomp $prof: no set-id file in rw on the host" ||
    fail "--seccomp $prof: set-id files planted on the host: $(ls -l $planted)"
  [[ "$out" == *"twins open755=ok creat644=ok mknod644=ok mkdir2755=ok"* ]] && [ "$(stat -c %a "$work/rw/plain")" = 755 ] &&
    pass "twin --seccomp $prof: plain creation works (mode 755 kept)" || fail "twin --seccomp $prof: $out $err"
done
finish
