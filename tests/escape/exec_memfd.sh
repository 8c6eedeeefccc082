#!/usr/bin/env bash
# Attack: run a program the --exec allowlist does not list, from an allowed interpreter, without a
# path Landlock can check or on a mount it does not cover. Policy: --exec python3 (the command),
# nothing else. Tried: (1) fill a memfd with /usr/bin/id's bytes and execve /proc/self/fd/N; (2) hand
# that memfd to the allowed dynamic loader (`ld.so /proc/self/fd/N`) and dlopen a library from one:
# vm.memfd_noexec=2 refuses only execve, not mmap(PROT_EXEC), and a memfd's internal mount is not
# noexec (found by an attack review; both ran); (3) copy id into the private /tmp and run it through
# the loader. Now memfd_create and memfd_secret answer ENOSYS under --exec (seccomp, every caller,
# both mechanisms) and /tmp is noexec ("failed to map segment"). Twin: without --exec all of it runs.
# Landlock-only: refused (125) unless --allow-degraded=exec-written (the written file; no noexec
# mounts), which --dry-run then lists; the memfd stays refused there too.
. "$(dirname "$0")/lib.bash"
py_real=$(readlink -f "$py")
cat >"$work/memfd.py" <<'PY'
import ctypes, os, shutil, subprocess, sys
loader = os.path.realpath("/lib64/ld-linux-x86-64.so.2")
try:
    fd = os.memfd_create("x", 0)
except OSError as e:
    print("memfd:", e.strerror)
else:
    os.write(fd, open("/usr/bin/id", "rb").read())
    pid = os.fork()
    if pid == 0:
        try:
            os.execv("/proc/self/fd/%d" % fd, ["id", "-u"])
        except OSError as e:
            print("execve:", e.strerror); sys.stdout.flush(); os._exit(0)
    os.waitpid(pid, 0)
    r = subprocess.run([loader, "/proc/self/fd/%d" % fd, "-u"], pass_fds=(fd,), capture_output=True, text=True)
    print("memfd loader:", r.stdout.strip() or r.stderr.strip())
    lib = os.memfd_create("l", 0)
    os.write(lib, open(os.path.realpath("/lib/x86_64-linux-gnu/libz.so.1"), "rb").read())
    try:
        ctypes.CDLL("/proc/self/fd/%d" % lib); print("dlopen: loaded")
    except OSError:
        print("dlopen: refused")
shutil.copy("/usr/bin/id", "/tmp/myid")
r = subprocess.run([loader, "/tmp/myid", "-u"], capture_output=True, text=True)
print("loader:", r.stdout.strip() or r.stderr.strip())
PY
chmod 644 "$work/memfd.py"
uid=$(id -u)
if landlock_only; then
  cage_run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  expect_rc 125 "Landlock-only: --exec is refused without the loss accepted"
  grep -q "allow-degraded=exec-written" <<<"$err" || fail "the refusal names exec-written: $err"
  cage_run --allow-degraded exec-written --dry-run -v --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  grep -q '^degraded: exec-written:' <<<"$out" || fail "--dry-run lists the accepted loss: $out $err"
  cage_run --allow-degraded exec-written --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  grep -qx 'memfd: Function not implemented' <<<"$out" && pass "Landlock-only: no memfd either" ||
    fail "Landlock-only memfd: exit $rc '$out' $err"
  finish
fi
cage_run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
[ "$rc" -eq 0 ] && grep -qx 'memfd: Function not implemented' <<<"$out" &&
  pass "memfd_create is refused (ENOSYS): nothing to execve, hand to ld.so or dlopen" || fail "memfd: exit $rc, '$out' $err"
grep -q '^loader: .*failed to map segment' <<<"$out" && pass "ld.so cannot map a file written to /tmp (noexec)" ||
  fail "loader: '$out' $err"
cage_run --ro "$work" -- "$py" "$work/memfd.py"
[ "$rc" -eq 0 ] && [ "$out" = "$uid"$'\n'"memfd loader: $uid"$'\n'"dlopen: loaded"$'\n'"loader: $uid" ] &&
  pass "twin: without --exec all of it runs" || fail "twin: exit $rc, '$out' $err"
finish
